//! One streamed response being read: its events cut by the [`Framer`], each stamped with the
//! arrival of the read that completed it, token events told apart (OpenAI chunks, every
//! event, or a JSONPath), `usage` taken when the server sends it, captures joined over the
//! events. What `vllm bench serve` measures per request is derived from these stamps in
//! [`StreamReader::measure`].

use super::frame::{FrameError, Framer};
use super::PreparedStream;
use loadlab_scenario::stream::TokenCounting;
use std::sync::Arc;
use tokio::time::{Duration, Instant};

/// Why a stream failed (each an error kind of its own).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StreamError {
    #[error("malformed stream: {0}")]
    Malformed(String),
    #[error("the stream stalled: nothing for {0:?} (`stream.stall`)")]
    Stalled(Duration),
    #[error("truncated stream: {0}")]
    Truncated(String),
}

impl StreamError {
    /// The error kind a stream that failed so is counted as.
    pub fn kind(&self) -> loadlab_metrics::ErrorKind {
        use loadlab_metrics::ErrorKind;
        match self {
            StreamError::Malformed(_) => ErrorKind::StreamMalformed,
            StreamError::Stalled(_) => ErrorKind::StreamStalled,
            StreamError::Truncated(_) => ErrorKind::StreamTruncated,
        }
    }
}

impl From<FrameError> for StreamError {
    fn from(e: FrameError) -> Self {
        match e {
            FrameError::EndedMidEvent => StreamError::Truncated(e.to_string()),
            e => StreamError::Malformed(e.to_string()),
        }
    }
}

/// The ITL gaps a stream keeps at most (a million: 8 MB); later gaps are not kept, so an
/// endless stream cannot grow it without bound (`max_body` ends it long before).
const MAX_GAPS: usize = 1 << 20;

/// A streamed response's state while it is read, and what it came to.
#[derive(Debug, Clone)]
pub struct StreamReader {
    prepared: Arc<PreparedStream>,
    framer: Framer,
    /// Events, the end marker not counted.
    pub events: u64,
    /// Events that carried output (`choices`, a path's value, or every event).
    pub token_events: u64,
    /// Token events whose text was not empty (the output tokens when `usage` is not sent).
    pub content_events: u64,
    pub first_token: Option<Instant>,
    /// The last event's arrival (the end marker aside): vLLM's `most_recent_timestamp`.
    pub last_event: Option<Instant>,
    /// Each gap before a token event after the first, in µs.
    pub gaps_us: Vec<u64>,
    pub usage_input: Option<u64>,
    pub usage_output: Option<u64>,
    /// The end marker arrived.
    pub ended: bool,
    /// Each capture's values over the events, joined (index: the step's capture).
    pub captured: Vec<Option<String>>,
    /// The last event's JSON (for `check: {json: ...}`).
    pub last_json: Option<serde_json::Value>,
    /// When body bytes last arrived: the stall timeout runs from there (before the first,
    /// the wait for the first token is the step's timeout's).
    last_bytes: Option<Instant>,
}

impl StreamReader {
    pub fn new(prepared: Arc<PreparedStream>) -> Self {
        Self {
            framer: Framer::new(prepared.spec.format, prepared.spec.max_event),
            captured: vec![None; prepared.captures.len()],
            prepared,
            events: 0,
            token_events: 0,
            content_events: 0,
            first_token: None,
            last_event: None,
            gaps_us: Vec::new(),
            usage_input: None,
            usage_output: None,
            ended: false,
            last_json: None,
            last_bytes: None,
        }
    }

    /// Back to the start (a retry of the request on a fresh connection).
    pub fn reset(&mut self) {
        *self = StreamReader::new(self.prepared.clone());
    }

    /// When the stream is stalled if no byte arrives before.
    pub fn stall_deadline(&self) -> Option<Instant> {
        Some(self.last_bytes? + self.prepared.spec.stall?)
    }

    pub fn stall_timeout(&self) -> Duration {
        self.prepared.spec.stall.unwrap_or_default()
    }

    /// Reads the complete events in `buf` (bytes that arrived at `at`), leaving the rest.
    pub fn feed(&mut self, buf: &mut Vec<u8>, at: Instant) -> Result<(), StreamError> {
        if !buf.is_empty() {
            self.last_bytes = Some(at);
        }
        let mut framer =
            std::mem::replace(&mut self.framer, Framer::new(self.prepared.spec.format, 0));
        let result = framer.drain(buf, false, &mut |data: &[u8]| self.event(data, at));
        self.framer = framer;
        result
    }

    /// The body is complete: reads what is left and checks that the stream ended properly.
    pub fn finish(&mut self, buf: &mut Vec<u8>, at: Instant) -> Result<(), StreamError> {
        let mut framer =
            std::mem::replace(&mut self.framer, Framer::new(self.prepared.spec.format, 0));
        let result = framer.drain(buf, true, &mut |data: &[u8]| self.event(data, at));
        self.framer = framer;
        result?;
        match &self.prepared.spec.done {
            Some(marker) if !self.ended => Err(StreamError::Truncated(format!(
                "the response ended after {} events without the end marker `{marker}`",
                self.events
            ))),
            _ => Ok(()),
        }
    }

    fn event(&mut self, data: &[u8], at: Instant) -> Result<(), StreamError> {
        if self.ended {
            return Ok(()); // after the end marker: nothing more is measured
        }
        if let Some(marker) = self.prepared.spec.end_marker() {
            if data.trim_ascii() == marker.as_bytes() {
                self.ended = true;
                return Ok(());
            }
        }
        self.events += 1;
        let json = if self.prepared.json_events {
            Some(
                serde_json::from_slice::<serde_json::Value>(data).map_err(|e| {
                    StreamError::Malformed(format!(
                        "event {} is not JSON ({e}): `{}`",
                        self.events,
                        String::from_utf8_lossy(&data[..data.len().min(80)])
                    ))
                })?,
            )
        } else {
            None
        };
        let prepared = self.prepared.clone();
        let (token, content) = match (&prepared.spec.tokens, &json) {
            (TokenCounting::Events, _) => (true, true),
            (TokenCounting::OpenAi, Some(v)) => self.openai(v),
            (TokenCounting::Path(p), Some(v)) => {
                let found = p.find(v).is_some_and(|x| !x.is_null());
                (found, found)
            }
            (_, None) => (false, false),
        };
        if token {
            match (self.first_token, self.last_event) {
                (None, _) => self.first_token = Some(at),
                (Some(_), Some(last)) if self.gaps_us.len() < MAX_GAPS => self
                    .gaps_us
                    .push(loadlab_metrics::micros(at.saturating_duration_since(last))),
                _ => {}
            }
            self.token_events += 1;
            self.content_events += u64::from(content);
        }
        self.last_event = Some(at);
        if let Some(v) = json {
            self.capture(&v);
            if self.prepared.keep_last_json {
                self.last_json = Some(v);
            }
        }
        Ok(())
    }

    /// An OpenAI chunk: a token event when it has `choices` (as vLLM counts them), with text
    /// when `delta.content` (chat) or `text` (completions) is not empty; `usage` noted.
    fn openai(&mut self, v: &serde_json::Value) -> (bool, bool) {
        if let Some(usage) = v.get("usage").filter(|u| u.is_object()) {
            if let Some(n) = usage.get("completion_tokens").and_then(|n| n.as_u64()) {
                self.usage_output = Some(n);
            }
            if let Some(n) = usage.get("prompt_tokens").and_then(|n| n.as_u64()) {
                self.usage_input = Some(n);
            }
        }
        let Some(choice) = v
            .get("choices")
            .and_then(|c| c.as_array())
            .and_then(|c| c.first())
        else {
            return (false, false);
        };
        let text = choice
            .get("delta")
            .and_then(|d| d.get("content"))
            .or_else(|| choice.get("text"))
            .and_then(|t| t.as_str());
        (true, text.is_some_and(|t| !t.is_empty()))
    }

    fn capture(&mut self, v: &serde_json::Value) {
        for (slot, path) in self.captured.iter_mut().zip(&self.prepared.captures) {
            let Some(path) = path else { continue };
            let piece = match path.find(v) {
                None | Some(serde_json::Value::Null) => continue,
                Some(serde_json::Value::String(s)) => std::borrow::Cow::Borrowed(s.as_str()),
                Some(other) => std::borrow::Cow::Owned(other.to_string()),
            };
            slot.get_or_insert_with(String::new).push_str(&piece);
        }
    }

    /// Output tokens: the server's `usage.completion_tokens`, else the token events with text
    /// (OpenAI), else the token events.
    pub fn output_tokens(&self) -> u64 {
        match (&self.prepared.spec.tokens, self.usage_output) {
            (_, Some(n)) => n,
            (TokenCounting::OpenAi, None) => self.content_events,
            _ => self.token_events,
        }
    }
}
