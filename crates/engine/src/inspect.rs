//! What a step asks of a response once it is in: its checks (status, JSON value, body text,
//! header, latency) and its captures (JSON path, header, regex) for later steps.

use crate::transport::ResponseData;
use crate::vu::Captured;
use loadlab_scenario::Check;

/// Where a capture finds its value in a response (its regex compiled before the run).
#[derive(Debug, Clone)]
pub enum CaptureKind {
    JsonPath(loadlab_scenario::jsonpath::JsonPath),
    Header(String),
    Regex(regex::Regex, usize),
}

pub fn check_passes(
    check: &Check,
    status: u16,
    latency_us: u64,
    data: Option<&ResponseData>,
    json: Option<&serde_json::Value>,
) -> bool {
    match check {
        Check::Status(list) => list.contains(&status),
        Check::Json { path, expected } => json
            .and_then(|j| path.find(j))
            .is_some_and(|v| json_equal(v, expected)),
        Check::BodyContains(text) => data.is_some_and(|d| {
            let needle = text.as_bytes();
            needle.is_empty() || d.body.windows(needle.len()).any(|w| w == needle)
        }),
        Check::Header { name, value } => data
            .and_then(|d| d.header(name))
            .is_some_and(|v| v == value.as_str()),
        Check::MaxLatency(max) => latency_us <= max.as_micros() as u64,
        // Judged from the call's grpc-status before the other checks (see `flow`).
        Check::GrpcStatus(_) => true,
        Check::StreamEvents(min) => stream_of(data).is_some_and(|s| s.events >= *min),
        Check::StreamTokens(min) => stream_of(data).is_some_and(|s| s.output_tokens() >= *min),
    }
}

/// The stream a response was read as (none: it was not, e.g. an error status).
fn stream_of(data: Option<&ResponseData>) -> Option<&crate::stream::StreamReader> {
    data?.stream.as_deref()
}

/// Equality where 1 and 1.0 are the same number.
pub(crate) fn json_equal(a: &serde_json::Value, b: &serde_json::Value) -> bool {
    match (a, b) {
        (serde_json::Value::Number(x), serde_json::Value::Number(y)) => x.as_f64() == y.as_f64(),
        _ => a == b,
    }
}

/// Capture number `index` of a step: from a stream, a JSONPath's values joined over its
/// events; otherwise from the response.
pub fn capture_at(
    index: usize,
    source: &CaptureKind,
    data: Option<&ResponseData>,
    json: Option<&serde_json::Value>,
) -> Option<Captured> {
    match (stream_of(data), source) {
        (Some(s), CaptureKind::JsonPath(_)) => {
            s.captured.get(index)?.as_deref().map(|t| Captured {
                text: t.into(),
                number: false,
            })
        }
        _ => capture(source, data, json),
    }
}

pub fn capture(
    source: &CaptureKind,
    data: Option<&ResponseData>,
    json: Option<&serde_json::Value>,
) -> Option<Captured> {
    match source {
        CaptureKind::JsonPath(p) => match p.find(json?)? {
            serde_json::Value::Null => None,
            serde_json::Value::String(s) => Some(Captured {
                text: s.as_str().into(),
                number: false,
            }),
            v => Some(Captured {
                text: v.to_string().into(),
                number: v.is_number(),
            }),
        },
        CaptureKind::Header(name) => data?.header(name).map(|text| Captured {
            text: text.as_ref().into(),
            number: false,
        }),
        CaptureKind::Regex(re, group) => {
            let body = std::str::from_utf8(&data?.body).ok()?;
            let m = re.captures(body)?.get(*group)?;
            Some(Captured {
                text: m.as_str().into(),
                number: false,
            })
        }
    }
}
