//! A request step's `stream:` (format, token counting, end marker, stall timeout, event size)
//! and its stream checks (`check: {stream: {min_events: 1}}`), each mistake located at its
//! field with the fix.

use super::{parse_size, Ctx};
use crate::error::ScenarioError;
use crate::model::{Capture, CaptureSource, Check};
use crate::raw::ByteSize;
use crate::raw_stream::{RawStream, RawStreamCheck};
use crate::stream::{StreamFormat, StreamSpec, TokenCounting, DEFAULT_MAX_EVENT};

/// Events above this are refused at load time (a typo such as `10GB`).
const MAX_EVENT_LIMIT: u64 = 1 << 30;

/// `stream:` of the step at `field`.
pub(super) fn stream_spec(
    raw: RawStream,
    field: &str,
    ctx: &Ctx,
) -> Result<StreamSpec, ScenarioError> {
    let sfield = format!("{field}.stream");
    let format = match raw.format.as_deref().map(str::trim) {
        None | Some("sse") => StreamFormat::Sse,
        Some("ndjson") | Some("jsonl") => StreamFormat::Ndjson,
        Some("chunks") => StreamFormat::Chunks,
        Some(other) => {
            return Err(ctx
                .err(
                    &format!("{sfield}.format"),
                    format!("unknown stream format `{other}`"),
                )
                .with_hint("write `sse` (text/event-stream), `ndjson` (a JSON value per line) or `chunks` (each read of the body)"))
        }
    };
    let tokens = match raw.tokens.as_deref().map(str::trim) {
        None | Some("openai") => TokenCounting::OpenAi,
        Some("events") => TokenCounting::Events,
        Some(path) if path.starts_with('$') => TokenCounting::Path(
            crate::jsonpath::JsonPath::parse(path)
                .map_err(|m| ctx.err(&format!("{sfield}.tokens"), m))?,
        ),
        Some(other) => {
            return Err(ctx
                .err(
                    &format!("{sfield}.tokens"),
                    format!("`{other}` is not a way to count tokens"),
                )
                .with_hint("write `openai` (choices[].delta.content and usage), `events` (one token per event) or a JSONPath such as `$.token.text`"))
        }
    };
    if format == StreamFormat::Chunks && !matches!(tokens, TokenCounting::Events) {
        return Err(ctx
            .err(
                &format!("{sfield}.tokens"),
                "raw chunks are not JSON events: tokens can only be counted one per chunk",
            )
            .with_hint(
                "write `tokens: events` with `format: chunks`, or use `format: sse`/`ndjson`",
            ));
    }
    if raw.done.as_deref().is_some_and(str::is_empty) {
        return Err(ctx
            .err(&format!("{sfield}.done"), "the end marker is empty")
            .with_hint(
                "write the data of the last event, e.g. `done: \"[DONE]\"`, or leave `done` out",
            ));
    }
    if raw.stall.is_some_and(|d| d.is_zero()) {
        return Err(ctx.err(&format!("{sfield}.stall"), "must be above zero"));
    }
    let max_event = match raw.max_event {
        None => DEFAULT_MAX_EVENT,
        Some(ByteSize::Bytes(n)) => n,
        Some(ByteSize::Text(t)) => {
            parse_size(&t).map_err(|m| ctx.err(&format!("{sfield}.max_event"), m))?
        }
    };
    if max_event == 0 || max_event > MAX_EVENT_LIMIT {
        return Err(ctx
            .err(
                &format!("{sfield}.max_event"),
                format!("{max_event} bytes is outside 1 byte to 1GiB"),
            )
            .with_hint("the default, 1MiB, fits any LLM token chunk"));
    }
    Ok(StreamSpec {
        format,
        tokens,
        done: raw.done,
        stall: raw.stall,
        max_event,
    })
}

/// `check: {stream: {...}}` as checks (none when the step does not stream: refused).
pub(super) fn stream_checks(
    raw: Option<RawStreamCheck>,
    streams: bool,
    cfield: &str,
    ctx: &Ctx,
) -> Result<Vec<Check>, ScenarioError> {
    let Some(raw) = raw else {
        return Ok(Vec::new());
    };
    if !streams {
        return Err(ctx
            .err(
                &format!("{cfield}.stream"),
                "`check: {stream: ...}` needs a step that reads a stream",
            )
            .with_hint("add `stream: {format: sse}` to the step"));
    }
    let mut checks = Vec::new();
    if let Some(n) = raw.min_events {
        checks.push(Check::StreamEvents(n));
    }
    if let Some(n) = raw.min_tokens {
        checks.push(Check::StreamTokens(n));
    }
    Ok(checks)
}

/// A streaming step's captures: JSONPaths (their string values concatenated over the
/// stream's events) and headers; a regex has no body text to read.
pub(super) fn check_captures(
    captures: &[Capture],
    spec: &StreamSpec,
    field: &str,
    ctx: &Ctx,
) -> Result<(), ScenarioError> {
    for c in captures {
        let bad = match c.source {
            CaptureSource::Regex { .. } => {
                Some("a regex capture reads a whole body; a stream's events are read one by one")
            }
            CaptureSource::JsonPath(_) if spec.format == StreamFormat::Chunks => {
                Some("raw chunks are not JSON: a JSONPath capture reads `sse` or `ndjson` events")
            }
            _ => None,
        };
        if let Some(message) = bad {
            return Err(ctx
                .err(&format!("{field}.capture.{}", c.name), message)
                .with_hint("capture with a JSONPath such as `\"$.choices[0].delta.content\"` (its values over the stream are joined)"));
        }
    }
    Ok(())
}
