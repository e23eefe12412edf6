//! The record of a steered run: each command a user sent while it went (when, from where, the
//! level before and after), so that the summary and the reports show the load as it was
//! driven beside the load as planned, and tell its segments of constant load apart.

use serde::{Deserialize, Serialize};

/// Where a command came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SteerSource {
    /// `loadlab control`.
    Cli,
    /// The dashboard page's controls.
    Page,
    /// Any other client of the control API.
    Api,
}

impl SteerSource {
    pub fn as_str(self) -> &'static str {
        match self {
            SteerSource::Cli => "cli",
            SteerSource::Page => "page",
            SteerSource::Api => "api",
        }
    }

    /// The source a request names (`X-Loadlab-Source`); anything else is the API's.
    pub fn parse(s: &str) -> Self {
        match s.trim() {
            "cli" => SteerSource::Cli,
            "page" => SteerSource::Page,
            _ => SteerSource::Api,
        }
    }
}

/// What a command did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SteerAction {
    Pause,
    Resume,
    Stop,
    /// A new arrival rate (open model).
    Rate,
    /// A new VU count (closed model).
    Vus,
}

impl SteerAction {
    pub fn as_str(self) -> &'static str {
        match self {
            SteerAction::Pause => "pause",
            SteerAction::Resume => "resume",
            SteerAction::Stop => "stop",
            SteerAction::Rate => "rate",
            SteerAction::Vus => "vus",
        }
    }
}

/// One command followed, as the record keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SteerEvent {
    /// Seconds from the run's start.
    pub at_s: f64,
    pub source: SteerSource,
    pub action: SteerAction,
    /// Arrivals per second (open model) or VUs (closed) just before the command.
    pub before: f64,
    /// The level it set (reached at once, or after `over_s`).
    pub after: f64,
    /// The ramp's length, when the level was reached linearly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub over_s: Option<f64>,
}
