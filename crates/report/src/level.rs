//! How a statement of a report reads — good news, bad news, a caveat or plain information —
//! shared by the report model's verdicts and cells and the charts' reference lines, so it
//! sits apart from both.

use serde::Serialize;

/// How a statement reads: good news, bad news, a caveat, or plain information.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Level {
    Pass,
    Fail,
    Warn,
    Info,
}

impl Level {
    /// The mark used in Markdown and plain text.
    pub fn mark(self) -> &'static str {
        match self {
            Level::Pass => "✅",
            Level::Fail => "❌",
            Level::Warn => "⚠️",
            Level::Info => "ℹ️",
        }
    }

    pub(crate) fn css(self) -> &'static str {
        match self {
            Level::Pass => "pass",
            Level::Fail => "fail",
            Level::Warn => "warn",
            Level::Info => "info",
        }
    }
}
