//! What request steps and WebSocket steps share once resolved (captures into per-VU
//! variables, think times): their own module, so that `model` and `ws` need not depend on
//! each other.

use std::time::Duration;

/// A value taken from a response into a per-VU variable.
#[derive(Debug, Clone, PartialEq)]
pub struct Capture {
    pub name: String,
    pub source: CaptureSource,
}

#[derive(Debug, Clone, PartialEq)]
pub enum CaptureSource {
    JsonPath(crate::jsonpath::JsonPath),
    Header(String),
    /// Checked at load time; compiled by the engine.
    Regex {
        pattern: String,
        group: usize,
    },
}

impl CaptureSource {
    /// The capture reads the response body.
    pub fn needs_body(&self) -> bool {
        !matches!(self, CaptureSource::Header(_))
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ThinkTime {
    pub min: Duration,
    pub max: Duration,
}
