//! k6 `--out json=FILE`: one JSON object a line (NDJSON), `Metric` lines declaring metrics and
//! `Point` lines with a sample each (`time` RFC 3339, `value` in ms for times, `tags`). Each
//! HTTP request is one `http_req_duration` point (its step: method and `name` tag, its group
//! and scenario), its phases their own points (`http_req_connecting`, `..._tls_handshaking`,
//! `..._waiting`, `..._receiving`); `vus`, `iterations` and `iteration_duration` give the load
//! and the iterations. Read line by line, borrowing strings from the line (no allocation per
//! point but for escaped strings), so a 1 GB file streams.

use crate::builder::RecordBuilder;
use crate::problems::Malformed;
use crate::sample::{status_error, Request, StepKey};
use crate::time::rfc3339_us;
use crate::ReadError;
use loadlab_metrics::{ErrorKind, LoadModel, Phase};
use serde::Deserialize;
use std::borrow::Cow;
use std::collections::HashMap;
use std::io::BufRead;

#[derive(Deserialize)]
struct Line<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(borrow, default)]
    metric: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    data: Option<Data<'a>>,
}

#[derive(Deserialize)]
struct Data<'a> {
    #[serde(borrow, default)]
    time: Option<Cow<'a, str>>,
    #[serde(default)]
    value: Option<f64>,
    #[serde(borrow, default)]
    tags: Option<Tags<'a>>,
}

#[derive(Deserialize, Default)]
struct Tags<'a> {
    #[serde(borrow, default)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    url: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    method: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    status: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    group: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    scenario: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    error_code: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    error: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    expected_response: Option<Cow<'a, str>>,
}

/// What the metric of a point is to the record.
#[derive(Clone, Copy, PartialEq)]
enum Use {
    Duration,
    Phase(Phase),
    Vus,
    Iterations,
    IterationDuration,
    Other,
}

fn metric_use(name: &str) -> Use {
    match name {
        "http_req_duration" => Use::Duration,
        "http_req_connecting" => Use::Phase(Phase::Connect),
        "http_req_tls_handshaking" => Use::Phase(Phase::TlsHandshake),
        "http_req_waiting" => Use::Phase(Phase::Waiting),
        "http_req_receiving" => Use::Phase(Phase::Receiving),
        "vus" => Use::Vus,
        "iterations" => Use::Iterations,
        "iteration_duration" => Use::IterationDuration,
        _ => Use::Other,
    }
}

/// k6's error codes (docs: "Error codes") as loadlab's error kinds.
pub fn error_kind_of_code(code: u32) -> ErrorKind {
    match code {
        1050 => ErrorKind::Timeout,
        1100..=1199 => ErrorKind::Dns,
        1211 => ErrorKind::ConnectTimeout,
        1212 => ErrorKind::ConnectRefused,
        1210 | 1220 => ErrorKind::Reset,
        1300..=1399 => ErrorKind::Tls,
        1400..=1499 => ErrorKind::Http4xx,
        1500..=1599 => ErrorKind::Http5xx,
        1600..=1699 => ErrorKind::Protocol,
        _ => ErrorKind::Io,
    }
}

/// A point's tags that the record uses, borrowed from the line (JSON or CSV).
#[derive(Default)]
pub struct TagValues<'a> {
    pub name: Option<&'a str>,
    pub url: Option<&'a str>,
    pub method: Option<&'a str>,
    pub status: Option<&'a str>,
    pub group: Option<&'a str>,
    pub scenario: Option<&'a str>,
    pub error_code: Option<&'a str>,
    pub error: Option<&'a str>,
    pub expected_response: Option<&'a str>,
}

impl<'a> Tags<'a> {
    fn values(&'a self) -> TagValues<'a> {
        TagValues {
            name: self.name.as_deref(),
            url: self.url.as_deref(),
            method: self.method.as_deref(),
            status: self.status.as_deref(),
            group: self.group.as_deref(),
            scenario: self.scenario.as_deref(),
            error_code: self.error_code.as_deref(),
            error: self.error.as_deref(),
            expected_response: self.expected_response.as_deref(),
        }
    }
}

/// Puts k6 points (metric, time, value, tags) into a record: shared by the JSON and the CSV
/// outputs, which carry the same samples.
pub struct PointSink {
    steps: HashMap<String, usize>,
    key: String,
}

impl Default for PointSink {
    fn default() -> Self {
        Self::new()
    }
}

impl PointSink {
    pub fn new() -> Self {
        Self {
            steps: HashMap::new(),
            key: String::new(),
        }
    }

    /// One point of line `n`: `value` in ms for times.
    #[allow(clippy::too_many_arguments)]
    pub fn point(
        &mut self,
        builder: &mut RecordBuilder,
        malformed: &mut Malformed,
        n: u64,
        metric: &str,
        at: i64,
        value: f64,
        tags: &TagValues,
    ) -> Result<(), ReadError> {
        builder.load.model = LoadModel::Closed;
        builder.at_line(n);
        let what = metric_use(metric);
        if what == Use::Other {
            return Ok(());
        }
        if !value.is_finite() || value < 0.0 {
            malformed.add(n, || format!("value {value} is not a duration or count"));
            return Ok(());
        }
        let us = (value * 1000.0).round() as u64;
        match what {
            Use::Duration | Use::Phase(_) => {
                let step = self.step_of(tags, builder);
                if let Use::Phase(phase) = what {
                    // A reused connection opened none: loadlab counts connect and TLS only
                    // for the requests that opened one (k6 reports 0 for the others).
                    let opened = !matches!(phase, Phase::Connect | Phase::TlsHandshake);
                    if opened || us > 0 {
                        builder.phase(step, phase, at, us)?;
                    }
                    return Ok(());
                }
                let request = request_of(tags, at, us);
                // The request first: the run's time grid starts at the first one's start.
                builder.request(step, &request)?;
                if let (Some(kind), Some(message)) = (request.error, tags.error) {
                    builder.error_example(at, kind, message)?;
                }
                Ok(())
            }
            Use::Vus => builder.active(at, value.round() as u64),
            Use::Iterations => builder.iteration(at),
            Use::IterationDuration => builder.iteration_duration(at, us),
            Use::Other => Ok(()),
        }
    }

    /// The step of a point's tags (method and `name`, group, scenario), added on first sight.
    fn step_of(&mut self, tags: &TagValues, builder: &mut RecordBuilder) -> usize {
        let method = tags.method.unwrap_or("");
        let name = tags.name.or(tags.url).unwrap_or("");
        let group = tags.group.unwrap_or("");
        let scenario = tags.scenario.unwrap_or("");
        self.key.clear();
        for part in [method, name, group, scenario] {
            self.key.push_str(part);
            self.key.push('\u{1f}');
        }
        if let Some(&i) = self.steps.get(self.key.as_str()) {
            return i;
        }
        let group = group.trim_start_matches("::");
        let step = StepKey {
            name: format!("{method} {name}").trim().to_string(),
            group: (!group.is_empty()).then(|| group.replace("::", " / ")),
            tags: (!scenario.is_empty() && scenario != "default")
                .then(|| format!("scenario={scenario}"))
                .into_iter()
                .collect(),
        };
        let i = builder.step(&step);
        self.steps.insert(self.key.clone(), i);
        i
    }
}

/// Reads a k6 JSON output into `builder`; unreadable lines go to `malformed`.
pub fn read(
    input: impl BufRead,
    builder: &mut RecordBuilder,
    malformed: &mut Malformed,
) -> Result<(), ReadError> {
    builder.load.model = LoadModel::Closed;
    let mut sink = PointSink::new();
    let mut reader = crate::lines::Lines::new(input);
    while let Some((n, line)) = reader.next_line()? {
        if line.trim().is_empty() {
            continue;
        }
        let parsed: Line = match serde_json::from_str(line) {
            Ok(l) => l,
            Err(e) => {
                malformed.add(n, || format!("not a k6 JSON line: {e}"));
                continue;
            }
        };
        if parsed.kind != "Point" {
            continue;
        }
        let (Some(metric), Some(data)) = (parsed.metric.as_deref(), parsed.data) else {
            malformed.add(n, || "a Point without `metric` or `data`".to_string());
            continue;
        };
        if metric_use(metric) == Use::Other {
            continue;
        }
        let (Some(at), Some(value)) = (data.time.as_deref().and_then(rfc3339_us), data.value)
        else {
            malformed.add(n, || {
                "a Point without an RFC 3339 `data.time` or a numeric `data.value`".to_string()
            });
            continue;
        };
        let tags = data.tags.unwrap_or_default();
        sink.point(builder, malformed, n, metric, at, value, &tags.values())?;
    }
    Ok(())
}

/// The request of an `http_req_duration` point: k6's `expected_response` tag decides whether
/// it failed, as it decides `http_req_failed`.
fn request_of(tags: &TagValues, end_us: i64, us: u64) -> Request {
    let status: u16 = tags.status.and_then(|s| s.parse().ok()).unwrap_or(0);
    let code: Option<u32> = tags.error_code.and_then(|c| c.parse().ok());
    let failed = match tags.expected_response {
        Some("true") => false,
        Some(_) => true,
        None => status == 0 || status >= 400,
    };
    let error = failed.then(|| {
        status_error(status)
            .or_else(|| code.map(error_kind_of_code))
            .unwrap_or(if status == 0 {
                ErrorKind::Io
            } else {
                ErrorKind::Protocol
            })
    });
    Request {
        end_us,
        duration_us: us,
        status,
        error,
        ..Request::default()
    }
}
