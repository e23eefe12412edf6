//! A request step's `stream:` and `check: {stream: ...}` exactly as written: serde types that
//! reject unknown keys with a position.

use crate::raw_values::ByteSize;
use crate::units::de_opt_duration;
use serde::Deserialize;
use std::time::Duration;

/// `stream: {format: sse, tokens: openai, done: "[DONE]", stall: 10s, max_event: 1MiB}`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawStream {
    pub format: Option<String>,
    pub tokens: Option<String>,
    pub done: Option<String>,
    #[serde(default, deserialize_with = "de_opt_duration")]
    pub stall: Option<Duration>,
    pub max_event: Option<ByteSize>,
}

/// `check: {stream: {min_events: 1}}`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawStreamCheck {
    pub min_events: Option<u64>,
    pub min_tokens: Option<u64>,
}
