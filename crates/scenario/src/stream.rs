//! The `stream:` option of a request step: its response is a stream of events (Server-Sent
//! Events, NDJSON lines or raw body chunks) read as bytes arrive, each event timed, and tokens
//! counted (an LLM inference server's). The engine parses the stream, the recorder keeps time
//! to first token, inter-token gaps, time per output token and tokens per step; thresholds on
//! `stream.*` are objectives, and requests meeting all of them are the run's goodput.

use crate::jsonpath::JsonPath;
use std::time::Duration;

/// Events larger than this fail `stream_malformed` unless `max_event` says otherwise: a
/// server that never ends a line must not make the generator buffer without bound.
pub const DEFAULT_MAX_EVENT: u64 = 1 << 20;

/// How the response body is cut into events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamFormat {
    /// `text/event-stream`: `data:` lines, an event ends at a blank line.
    Sse,
    /// One JSON value per line.
    Ndjson,
    /// Each read of the body is an event (no framing of its own).
    Chunks,
}

impl StreamFormat {
    pub fn as_str(self) -> &'static str {
        match self {
            StreamFormat::Sse => "sse",
            StreamFormat::Ndjson => "ndjson",
            StreamFormat::Chunks => "chunks",
        }
    }
}

/// Which events carry output tokens, and how many.
#[derive(Debug, Clone, PartialEq)]
pub enum TokenCounting {
    /// OpenAI-style chunks: an event with `choices` is a token event (as `vllm bench serve`
    /// counts them); output tokens from `usage.completion_tokens` when the server sends it,
    /// else one per token event; `data: [DONE]` ends the stream.
    OpenAi,
    /// Every event (the end marker aside) is one token.
    Events,
    /// An event where this path finds a value (not null) is one token.
    Path(JsonPath),
}

/// A request step's `stream:` settings.
#[derive(Debug, Clone, PartialEq)]
pub struct StreamSpec {
    pub format: StreamFormat,
    pub tokens: TokenCounting,
    /// The data of the event that ends the stream (`[DONE]`); when given, a stream that ends
    /// without it is `stream_truncated`.
    pub done: Option<String>,
    /// Longest wait for the next bytes of the stream before it is `stream_stalled`; `None`:
    /// only the step's timeout.
    pub stall: Option<Duration>,
    /// Largest event (or line) in bytes.
    pub max_event: u64,
}

impl StreamSpec {
    /// The data that ends the stream: the one written, else OpenAI's `[DONE]` for OpenAI
    /// chunks (not required then: a stream that simply ends is complete).
    pub fn end_marker(&self) -> Option<&str> {
        match (&self.done, &self.tokens) {
            (Some(d), _) => Some(d),
            (None, TokenCounting::OpenAi) => Some("[DONE]"),
            (None, _) => None,
        }
    }

    /// The end marker must arrive (it was written in the scenario).
    pub fn marker_required(&self) -> bool {
        self.done.is_some()
    }

    /// The spec in a few words, for `loadlab describe`: `sse (tokens: openai)`.
    pub fn describe(&self) -> String {
        let tokens = match &self.tokens {
            TokenCounting::OpenAi => "openai".to_string(),
            TokenCounting::Events => "events".to_string(),
            TokenCounting::Path(p) => p.text().to_string(),
        };
        format!("{} (tokens: {tokens})", self.format.as_str())
    }
}
