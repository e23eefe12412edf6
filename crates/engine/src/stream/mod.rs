//! Streamed responses (`stream:` on a request step — SSE, NDJSON or raw chunks, an LLM
//! server's tokens): prepared once per step (`PreparedStream`: the format, captures, and the
//! per-request objectives taken from the `stream.*` thresholds), read incrementally by the
//! transports through [`StreamReader`] (kept in `ResponseData`), and measured per request as
//! `vllm bench serve` does (`measure`).

mod frame;
mod reader;

pub use frame::{FrameError, Framer};
pub use reader::{StreamError, StreamReader};

use loadlab_metrics::{StreamSample, StreamTime};
use loadlab_scenario::jsonpath::JsonPath;
use loadlab_scenario::stream::{StreamFormat, StreamSpec, TokenCounting};
use loadlab_scenario::threshold::{Op, Quantity, Scope};
use loadlab_scenario::{CaptureSource, Check, RequestStep, Threshold};
use std::sync::Arc;
use tokio::time::Instant;

/// A per-request objective: a stream time bounded by a threshold (`stream.ttft.p95 <
/// 500ms` makes "TTFT < 500 ms" an objective each request must meet to count as good).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Objective {
    pub time: StreamTime,
    pub op: Op,
    /// In ms.
    pub bound_ms: f64,
}

/// What a streaming step needs while it runs.
#[derive(Debug, Clone)]
pub struct PreparedStream {
    pub spec: StreamSpec,
    /// Per capture of the step: the JSONPath whose values are joined over the events.
    pub captures: Vec<Option<JsonPath>>,
    /// Events are parsed as JSON (tokens by OpenAI chunks or a path, or a JSON capture).
    pub json_events: bool,
    /// The last event's JSON is kept (a `check: {json: ...}` reads it).
    pub keep_last_json: bool,
    pub objectives: Vec<Objective>,
}

impl PreparedStream {
    /// The stream of request step `r`, if it streams, with the objectives of `thresholds`
    /// that bound the whole run or this step.
    pub fn of(r: &RequestStep, thresholds: &[Threshold]) -> Option<Arc<PreparedStream>> {
        let spec = r.stream.as_deref()?.clone();
        let captures: Vec<Option<JsonPath>> = r
            .captures
            .iter()
            .map(|c| match &c.source {
                CaptureSource::JsonPath(p) => Some(p.clone()),
                _ => None,
            })
            .collect();
        let json_events = spec.format != StreamFormat::Chunks
            && (!matches!(spec.tokens, TokenCounting::Events)
                || captures.iter().any(Option::is_some)
                || r.checks.iter().any(|c| matches!(c, Check::Json { .. })));
        Some(Arc::new(PreparedStream {
            json_events,
            keep_last_json: r.checks.iter().any(|c| matches!(c, Check::Json { .. })),
            objectives: objectives(&r.name, thresholds),
            captures,
            spec,
        }))
    }
}

/// The objectives among `thresholds` for step `step`: upper bounds (`<`, `<=`) on TTFT, TPOT
/// or E2E of the run or of this step. ITL is a distribution of gaps, not a value per request,
/// so it bounds no request (as in vLLM's goodput).
pub fn objectives(step: &str, thresholds: &[Threshold]) -> Vec<Objective> {
    thresholds
        .iter()
        .filter(|t| match &t.metric.scope {
            Scope::All => true,
            Scope::Step(name) => name == step,
            Scope::Group(_) => false,
        })
        .filter_map(|t| match (t.metric.quantity, t.op) {
            (Quantity::StreamTime(time, _), op @ (Op::Lt | Op::Le)) if time != StreamTime::Itl => {
                Some(Objective {
                    time,
                    op,
                    bound_ms: t.value,
                })
            }
            _ => None,
        })
        .collect()
}

/// A reader for a request of a streaming step (none for any other).
pub fn reader(prepared: Option<&Arc<PreparedStream>>) -> Option<Box<StreamReader>> {
    prepared.map(|p| Box::new(StreamReader::new(p.clone())))
}

/// A finished stream's figures, from the request's start `from` (its intended start in the
/// open model), by vLLM's definitions: TTFT = first token event − start; E2E = last event −
/// start; ITL = each gap before a later token event; TPOT = (E2E − TTFT) / (output tokens
/// less one) when there is more than one token. Good: no failure, and every objective met (a
/// TPOT not defined counts as 0, as vLLM counts it).
pub fn measure<'a>(
    r: &'a StreamReader,
    from: Instant,
    failed: bool,
    objectives: &[Objective],
) -> StreamSample<'a> {
    let since = |at: Instant| loadlab_metrics::micros(at.saturating_duration_since(from));
    let ttft_us = r.first_token.map(since);
    let e2e_us = r.last_event.map(since);
    let output_tokens = r.output_tokens();
    let tpot_us = match (ttft_us, e2e_us) {
        (Some(t), Some(e)) if output_tokens > 1 => Some(e.saturating_sub(t) / (output_tokens - 1)),
        _ => None,
    };
    let value_ms = |time: StreamTime| -> Option<f64> {
        let us = match time {
            StreamTime::Ttft => ttft_us?,
            StreamTime::Tpot => tpot_us.unwrap_or(0),
            StreamTime::E2e => e2e_us?,
            StreamTime::Itl => return Some(0.0),
        };
        Some(us as f64 / 1000.0)
    };
    let good = !failed
        && objectives
            .iter()
            .all(|o| value_ms(o.time).is_some_and(|v| o.op.holds(v, o.bound_ms)));
    StreamSample {
        ttft_us,
        itl_us: &r.gaps_us,
        tpot_us,
        e2e_us,
        events: r.events,
        input_tokens: r.usage_input.unwrap_or(0),
        output_tokens,
        good,
    }
}

#[cfg(test)]
mod tests;
