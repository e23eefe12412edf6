//! Threshold expressions (`latency.p95 < 2.8s`, `http.errors < 5%`): parsed here, evaluated by analysis.

pub use crate::threshold_live::Live;
use crate::units::parse_duration;
pub use loadlab_metrics::Phase;
use std::fmt;

/// A pass/fail rule on one metric of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct Threshold {
    /// The text as the user wrote it, shown in summaries.
    pub expr: String,
    pub metric: MetricRef,
    pub op: Op,
    /// In the metric's unit: milliseconds for latencies, a fraction for rates, per second for throughput.
    pub value: f64,
    /// Its window, abort and grace (`over 30s, abort after 10s`); none for a plain threshold.
    pub live: Live,
}

#[derive(Debug, Clone, PartialEq)]
pub struct MetricRef {
    pub scope: Scope,
    pub quantity: Quantity,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    All,
    Step(String),
    Group(String),
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Quantity {
    /// Latency in ms (from intended send time in the open model).
    Latency(Stat),
    /// Closed model: latency compensated for coordinated omission on each VU's schedule
    /// (`load.pace`, or inferred), in ms (`latency_compensated.p95`).
    CompensatedLatency(Stat),
    /// Service time in ms (from actual send).
    ServiceTime(Stat),
    /// One phase of the requests' service time, in ms (k6's `http_req_waiting` and kin); runs
    /// and steps only. Connect and TLS count the requests that opened a connection.
    Phase(Phase, Stat),
    /// Failed requests / all requests.
    ErrorRate,
    /// Completed requests per second.
    RequestRate,
    /// Completed requests.
    Requests,
    /// Failed requests.
    Failed,
    /// A streamed-response time in ms (`stream.ttft.p95`): runs and steps only.
    StreamTime(loadlab_metrics::StreamTime, Stat),
    /// A streamed-response figure (`stream.goodput`, `stream.tokens_per_s`).
    Stream(StreamFigure),
}

/// The figures of streamed responses a threshold can bound, besides their times.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamFigure {
    /// Output tokens per second of the run.
    TokensPerS,
    /// Streams meeting every objective, per second (vLLM's goodput).
    Goodput,
    /// The share of streams meeting every objective (0–1).
    GoodRatio,
    OutputTokens,
    InputTokens,
    Streams,
}

impl StreamFigure {
    const NAMES: [(&'static str, StreamFigure); 8] = [
        ("tokens_per_s", StreamFigure::TokensPerS),
        ("output_tokens.rate", StreamFigure::TokensPerS),
        ("goodput", StreamFigure::Goodput),
        ("good", StreamFigure::GoodRatio),
        ("output_tokens", StreamFigure::OutputTokens),
        ("input_tokens", StreamFigure::InputTokens),
        ("streams", StreamFigure::Streams),
        ("requests", StreamFigure::Streams),
    ];

    fn parse(text: &str) -> Option<StreamFigure> {
        Self::NAMES
            .iter()
            .find(|(n, _)| *n == text)
            .map(|(_, f)| *f)
    }
}

/// The names a threshold may give a phase: as `run.json` names it, then k6's, then short.
const PHASE_SPELLINGS: [(&str, Phase); 12] = [
    ("connect", Phase::Connect),
    ("tls_handshake", Phase::TlsHandshake),
    ("waiting", Phase::Waiting),
    ("receiving", Phase::Receiving),
    ("http_req_connecting", Phase::Connect),
    ("http_req_tls_handshaking", Phase::TlsHandshake),
    ("http_req_waiting", Phase::Waiting),
    ("http_req_receiving", Phase::Receiving),
    ("connecting", Phase::Connect),
    ("tls", Phase::TlsHandshake),
    ("ttfb", Phase::Waiting),
    ("receive", Phase::Receiving),
];

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Stat {
    Min,
    Mean,
    Max,
    /// A percentile, 0–100.
    Percentile(f64),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Lt,
    Le,
    Gt,
    Ge,
}

impl Op {
    pub fn holds(self, actual: f64, bound: f64) -> bool {
        match self {
            Op::Lt => actual < bound,
            Op::Le => actual <= bound,
            Op::Gt => actual > bound,
            Op::Ge => actual >= bound,
        }
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Op::Lt => "<",
            Op::Le => "<=",
            Op::Gt => ">",
            Op::Ge => ">=",
        })
    }
}

pub const EXAMPLES: &str =
    "e.g. `latency.p95 < 2.8s`, `http.errors < 5%`, `group.auth.latency.p95 < 1.2s`, `step.signin.latency.p99 < 1s`, `waiting.p95 < 200ms`, `requests.rate > 100`";

impl Quantity {
    /// True when the value is a time in milliseconds.
    pub fn is_time(self) -> bool {
        matches!(
            self,
            Quantity::Latency(_)
                | Quantity::CompensatedLatency(_)
                | Quantity::ServiceTime(_)
                | Quantity::Phase(..)
                | Quantity::StreamTime(..)
        )
    }

    /// A value of this quantity with its unit, written as the reports write it: `16.01s`,
    /// `2.50ms`, `450µs`, `1.20%`, `412.0/s`, `1200`.
    pub fn format_value(self, v: f64) -> String {
        match self {
            Quantity::Latency(_)
            | Quantity::CompensatedLatency(_)
            | Quantity::ServiceTime(_)
            | Quantity::Phase(..)
            | Quantity::StreamTime(..) => {
                let a = v.abs();
                if (a * 1000.0).round() < 1000.0 {
                    format!("{:.0}µs", v * 1000.0)
                } else if (a * 100.0).round() < 100_000.0 {
                    format!("{v:.2}ms")
                } else {
                    format!("{:.2}s", v / 1000.0)
                }
            }
            Quantity::ErrorRate => format!("{:.2}%", v * 100.0),
            Quantity::RequestRate => format!("{v:.1}/s"),
            Quantity::Requests | Quantity::Failed => format!("{v:.0}"),
            Quantity::Stream(StreamFigure::TokensPerS | StreamFigure::Goodput) => {
                format!("{v:.1}/s")
            }
            Quantity::Stream(StreamFigure::GoodRatio) => format!("{:.2}%", v * 100.0),
            Quantity::Stream(_) => format!("{v:.0}"),
        }
    }
}

/// The actual value of the threshold written as `expr`, with its unit (the value as is when
/// the expression does not parse).
pub fn format_actual(expr: &str, v: f64) -> String {
    match Threshold::parse(expr) {
        Ok(t) => t.metric.quantity.format_value(v),
        Err(_) => format!("{v}"),
    }
}

impl Threshold {
    /// Parses `<metric> <op> <value>`, optionally followed by a window and clauses:
    /// `<metric> <op> <value> over <window>, abort after <grace>` (see [`Live`]).
    pub fn parse(expr: &str) -> Result<Threshold, String> {
        let (metric_text, op, rest) = split_op(expr)
            .ok_or_else(|| format!("`{expr}` has no comparison (<, <=, >, >=): {EXAMPLES}"))?;
        let (value_text, live) = crate::threshold_live::split_clauses(rest)
            .map_err(|e| format!("`{}`: {e}", expr.trim()))?;
        let metric = parse_metric(metric_text.trim())?;
        let value = parse_value(metric.quantity, value_text.trim())?;
        if !value.is_finite() {
            return Err(format!(
                "`{}` is not a finite number: {EXAMPLES}",
                value_text.trim()
            ));
        }
        Ok(Threshold {
            expr: expr.trim().to_string(),
            metric,
            op,
            value,
            live,
        })
    }

    /// Checks a bound written alone (`below: 500ms`) for this metric: its value in the
    /// metric's unit.
    pub fn parse_bound(metric: &str, text: &str) -> Result<f64, String> {
        let metric = parse_metric(metric.trim())?;
        let value = parse_value(metric.quantity, text.trim())?;
        if value.is_finite() {
            Ok(value)
        } else {
            Err(format!("`{text}` is not a finite number"))
        }
    }
}

fn split_op(expr: &str) -> Option<(&str, Op, &str)> {
    for (token, op) in [("<=", Op::Le), (">=", Op::Ge), ("<", Op::Lt), (">", Op::Gt)] {
        if let Some(i) = expr.find(token) {
            return Some((&expr[..i], op, &expr[i + token.len()..]));
        }
    }
    None
}

fn parse_metric(text: &str) -> Result<MetricRef, String> {
    let (scope, rest) = if let Some(rest) = text.strip_prefix("step.") {
        let (name, q) = split_scoped(rest, text)?;
        (Scope::Step(name.to_string()), q)
    } else if let Some(rest) = text.strip_prefix("group.") {
        let (name, q) = split_scoped(rest, text)?;
        (Scope::Group(name.to_string()), q)
    } else {
        (Scope::All, text)
    };
    let quantity = parse_quantity(rest).ok_or_else(|| {
        format!("unknown metric `{text}`: {EXAMPLES}; latency, latency_compensated (closed model), service_time, the phases (connect, tls_handshake, waiting, receiving) and the stream times (stream.ttft, stream.itl, stream.tpot, stream.e2e) take min, mean, max, p50, p90, p95, p99, p999 or any pNN; stream figures: stream.goodput, stream.good, stream.tokens_per_s, stream.output_tokens, stream.input_tokens, stream.streams")
    })?;
    if matches!(
        (&scope, quantity),
        (
            Scope::Group(_),
            Quantity::StreamTime(..) | Quantity::Stream(_)
        )
    ) {
        return Err(format!(
            "`{text}`: streams are measured for the run and for each step, not for a group: write `step.<name>.{rest}` or `{rest}`"
        ));
    }
    if matches!((&scope, quantity), (Scope::Group(_), Quantity::Phase(..))) {
        return Err(format!(
            "`{text}`: phases are measured for the run and for each step, not for a group: write `step.<name>.{rest}` or `{rest}`"
        ));
    }
    Ok(MetricRef { scope, quantity })
}

/// Splits `create application.latency.p95` into the name and the quantity at the last known suffix.
fn split_scoped<'a>(rest: &'a str, whole: &str) -> Result<(&'a str, &'a str), String> {
    let phases = PHASE_SPELLINGS.map(|(name, _)| format!(".{name}."));
    let known = [
        ".latency.",
        ".latency_compensated.",
        ".service_time.",
        ".errors",
        ".requests",
        ".failed",
        ".http.errors",
        ".stream.",
    ];
    let cut = known
        .iter()
        .copied()
        .chain(phases.iter().map(String::as_str))
        .filter_map(|c| rest.rfind(c))
        .min()
        .ok_or_else(|| {
            format!("`{whole}` names no metric after the step/group name: {EXAMPLES}")
        })?;
    let name = rest[..cut].trim().trim_matches('"');
    if name.is_empty() {
        return Err(format!("`{whole}` has an empty step/group name"));
    }
    Ok((name, &rest[cut + 1..]))
}

fn parse_quantity(text: &str) -> Option<Quantity> {
    Some(match text {
        "http.errors" | "errors" | "errors.rate" | "http.error_rate" => Quantity::ErrorRate,
        "requests.rate" | "http.rate" | "rate" => Quantity::RequestRate,
        "requests" | "requests.total" => Quantity::Requests,
        "failed" | "requests.failed" => Quantity::Failed,
        _ => {
            if let Some(stat) = text.strip_prefix("latency.") {
                Quantity::Latency(parse_stat(stat)?)
            } else if let Some(stat) = text.strip_prefix("latency_compensated.") {
                Quantity::CompensatedLatency(parse_stat(stat)?)
            } else if let Some(stat) = text.strip_prefix("service_time.") {
                Quantity::ServiceTime(parse_stat(stat)?)
            } else if let Some(rest) = text.strip_prefix("stream.") {
                parse_stream(rest)?
            } else {
                let (name, stat) = text.split_once('.')?;
                let (_, phase) = PHASE_SPELLINGS.iter().find(|(n, _)| *n == name)?;
                Quantity::Phase(*phase, parse_stat(stat)?)
            }
        }
    })
}

/// `ttft.p95`, `itl.mean`, `tpot.p99`, `e2e.max`, or a figure (`goodput`, `tokens_per_s`).
fn parse_stream(text: &str) -> Option<Quantity> {
    if let Some(figure) = StreamFigure::parse(text) {
        return Some(Quantity::Stream(figure));
    }
    let (name, stat) = text.split_once('.')?;
    Some(Quantity::StreamTime(
        loadlab_metrics::StreamTime::parse(name)?,
        parse_stat(stat)?,
    ))
}

fn parse_stat(text: &str) -> Option<Stat> {
    Some(match text {
        "min" => Stat::Min,
        "mean" | "avg" => Stat::Mean,
        "max" => Stat::Max,
        "med" | "median" => Stat::Percentile(50.0),
        "p999" => Stat::Percentile(99.9),
        _ => {
            let digits = text.strip_prefix('p')?;
            if !digits.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
                return None;
            }
            let p: f64 = if digits == "100" {
                100.0
            } else if digits.len() > 2 && !digits.contains('.') {
                // p999 -> 99.9, p9999 -> 99.99; `p101` or `p250` is no percentile (it was
                // read as p10.1 and p25.0).
                if !digits.starts_with("99") {
                    return None;
                }
                format!("{}.{}", &digits[..2], &digits[2..]).parse().ok()?
            } else {
                digits.parse().ok()?
            };
            if !(0.0..=100.0).contains(&p) {
                return None;
            }
            Stat::Percentile(p)
        }
    })
}

fn parse_value(quantity: Quantity, text: &str) -> Result<f64, String> {
    match quantity {
        Quantity::Latency(_)
        | Quantity::CompensatedLatency(_)
        | Quantity::ServiceTime(_)
        | Quantity::Phase(..)
        | Quantity::StreamTime(..) => {
            if let Ok(ms) = text.parse::<f64>() {
                return Ok(ms); // bare numbers are milliseconds, as in k6
            }
            parse_duration(text)
                .map(|d| d.as_secs_f64() * 1e3)
                .map_err(|e| format!("{e} (a latency bound is a duration such as 500ms or 2.8s)"))
        }
        Quantity::ErrorRate => {
            let rate = if let Some(pct) = text.strip_suffix('%') {
                pct.trim()
                    .parse::<f64>()
                    .map(|p| p / 100.0)
                    .map_err(|_| format!("invalid percentage `{text}`, e.g. 5%"))
            } else {
                text.parse::<f64>()
                    .map_err(|_| format!("invalid error rate `{text}`: write a percentage like 5% or a fraction like 0.05"))
            }?;
            if rate.is_finite() && !(0.0..=1.0).contains(&rate) {
                return Err(format!(
                    "error rate `{text}` is outside 0% to 100%: write a percentage like 5% or a fraction like 0.05"
                ));
            }
            Ok(rate)
        }
        Quantity::RequestRate => crate::units::parse_rate(text),
        Quantity::Requests | Quantity::Failed => text
            .parse::<f64>()
            .map_err(|_| format!("invalid count `{text}`: expected a number")),
        Quantity::Stream(_) => {
            if let Some(pct) = text.strip_suffix('%') {
                return pct
                    .trim()
                    .parse::<f64>()
                    .map(|p| p / 100.0)
                    .map_err(|_| format!("invalid percentage `{text}`, e.g. 90%"));
            }
            text.trim_end_matches("/s")
                .trim()
                .parse::<f64>()
                .map_err(|_| format!("invalid number `{text}`: expected a number"))
        }
    }
}

#[cfg(test)]
mod tests;
