//! One request as another tool's file describes it, in the shape every reader produces and
//! the record builder consumes: where it belongs (step, group, tags), when it ended, how long
//! it took, and how it ended.

use loadlab_metrics::{ErrorKind, Phases};

/// Which scope a request belongs to: becomes a step of the record (name, group, tags).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct StepKey {
    /// `GET /api/users` (method and label, URL or name tag).
    pub name: String,
    pub group: Option<String>,
    /// `key=value` tags (k6's `scenario`, JMeter's thread group).
    pub tags: Vec<String>,
}

/// A request read from a file.
#[derive(Debug, Clone, Default)]
pub struct Request {
    /// When it ended, µs since the Unix epoch.
    pub end_us: i64,
    /// How long it took as the tool measured it, µs.
    pub duration_us: u64,
    /// HTTP status, 0 when no response came.
    pub status: u16,
    /// Why it failed (None: it succeeded).
    pub error: Option<ErrorKind>,
    pub bytes_sent: u64,
    pub bytes_received: u64,
    pub phases: Phases,
}

/// The error kind of an HTTP status the tool counted as a failure.
pub fn status_error(status: u16) -> Option<ErrorKind> {
    match status {
        500..=599 => Some(ErrorKind::Http5xx),
        400..=499 => Some(ErrorKind::Http4xx),
        _ => None,
    }
}
