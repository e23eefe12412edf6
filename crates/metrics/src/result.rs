//! The run result: the versioned JSON summary of one run (`loadlab.run.v2`), derived from
//! the run record (see `record`) by one function — at the end of a run, after a crash, and
//! when segments are merged.
//!
//! Field names are a public interface: reports, baselines, studies and users' scripts read
//! them. The JSON Schema lives in `docs/schema/run.v2.json` and a test checks results
//! against it. Results of schema v1 still load (see [`RunResult::from_json`]).

use crate::histogram::LatencyHistogram;
use crate::validity::{InvalidKind, TargetVerdict, Validity};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
#[cfg(test)]
use std::time::Duration;
use std::time::SystemTime;

pub const SCHEMA: &str = "loadlab.run.v2";
/// The schema before the run record (typed validity, per-scope histograms) existed.
pub const SCHEMA_V1: &str = "loadlab.run.v1";

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct RunResult {
    pub schema: String,
    pub tool_version: String,
    pub name: String,
    pub scenario_file: Option<String>,
    pub target: Option<String>,
    /// Wall-clock time of the plan's start (t = 0 of every interval).
    pub started_at: String,
    /// Fingerprint of the resolved scenario: segments of one plan share it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan_hash: Option<String>,
    /// The share of the plan this run executed (`loadlab run --segment i/N`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub segment: Option<SegmentId>,
    pub valid: bool,
    /// Why the measurement cannot be trusted (empty when valid).
    #[serde(default)]
    pub validity: Validity,
    /// Findings about the target that do not invalidate the measurement.
    #[serde(default)]
    pub verdicts: Vec<TargetVerdict>,
    /// Stopped before the plan ended (signal, crash): the numbers cover only what ran.
    pub interrupted: bool,
    /// How the run ended.
    #[serde(default)]
    pub stop: StopReason,
    /// Measured time, after warm-up.
    pub duration_s: f64,
    pub warmup_s: f64,
    pub load: LoadInfo,
    pub requests: Requests,
    #[serde(default)]
    pub bytes: Bytes,
    pub latency_ms: LatencySummary,
    pub service_time_ms: LatencySummary,
    pub lag_ms: LagSummary,
    /// Per origin: the HTTP version asked for and the protocol its connections actually spoke.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub origins: Vec<OriginResult>,
    /// What the target reported spending (`Server-Timing`), when it said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_latency_ms: Option<LatencySummary>,
    pub errors: BTreeMap<String, u64>,
    pub error_hints: BTreeMap<String, String>,
    pub error_examples: BTreeMap<String, String>,
    pub status_codes: BTreeMap<String, u64>,
    pub iterations: Iterations,
    pub steps: Vec<StepResult>,
    pub groups: Vec<GroupResult>,
    /// Per `key=value` tag of the scenario's steps.
    #[serde(default)]
    pub tags: Vec<GroupResult>,
    pub thresholds: Vec<ThresholdResult>,
    pub generator: Generator,
    pub intervals: Vec<IntervalStats>,
    /// Base64 HdrHistogram V2 (deflate) encodings, for exact merging across runs.
    pub histograms: Histograms,
    /// The generator machine (CPU, cores, memory, OS); absent in results written before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub environment: Option<crate::Environment>,
    /// The host, the generator and the monitored processes, cgroups and Prometheus series,
    /// per interval and summarised (absent: nothing was monitored).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<crate::resources::Resources>,
    /// A merged run: each segment it was made of.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub segments: Vec<SegmentSummary>,
    /// A merged run whose segments met at a start barrier: how far apart their clocks were.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_skew: Option<crate::clock::ClockSkew>,
    /// Things the reader must know about how the numbers were made.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The plan ran to its end (or its work was done).
    #[default]
    Completed,
    /// A signal (Ctrl-C, SIGTERM, SIGHUP) stopped it; the result covers what ran.
    Signal,
    /// The process died (SIGKILL, crash, power cut): the result is what its record held.
    Crashed,
}

/// Part `index` of `count` of a plan (0-based).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Hash, PartialOrd, Ord)]
pub struct SegmentId {
    pub index: u32,
    pub count: u32,
}

impl std::fmt::Display for SegmentId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// One segment of a merged run, as the per-segment table shows it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SegmentSummary {
    pub index: u32,
    /// Host (or pod) the segment ran on.
    pub host: Option<String>,
    pub started_at: String,
    pub requests: u64,
    pub failed: u64,
    pub cpu_percent: f64,
    pub valid: bool,
    pub invalid: Vec<InvalidKind>,
    pub interrupted: bool,
    /// Start offset from the earliest segment, in ms (clock skew and start-up together).
    pub start_offset_ms: f64,
    /// Kubernetes node and pod it ran in, when it ran in a cluster.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod: Option<String>,
    /// Its clock against the start barrier's reference (own − reference), when estimated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock: Option<crate::clock::ClockEstimate>,
}

impl RunResult {
    /// Reads a run result of schema v2 or v1 (v1's text reasons become kind `other`).
    pub fn from_json(text: &str) -> Result<RunResult, serde_json::Error> {
        let mut value: serde_json::Value = serde_json::from_str(text)?;
        if let Some(old) = value
            .as_object_mut()
            .and_then(|o| o.remove("invalid_reasons"))
        {
            let reasons: Vec<serde_json::Value> = old
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|m| m.as_str())
                .map(|m| serde_json::json!({ "kind": InvalidKind::Other, "message": m }))
                .collect();
            value["validity"] = serde_json::json!({ "reasons": reasons });
        }
        serde_json::from_value(value)
    }

    /// The invalidity messages, in order (for summaries).
    pub fn invalid_messages(&self) -> Vec<&str> {
        self.validity.messages()
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a run result always serializes")
    }
}

/// Bytes on the wire, request and response heads and bodies.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Default)]
pub struct Bytes {
    pub sent: u64,
    pub received: u64,
}

/// The planned load over time, as executed (what a chart draws as "planned").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlannedLoad {
    /// `true`: virtual users (closed model); `false`: arrivals per second (open model).
    pub vus: bool,
    /// `(seconds since start, VUs or arrivals/s)`, warm-up included.
    pub points: Vec<(f64, f64)>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct LoadInfo {
    pub model: String,
    pub planned_duration_s: f64,
    pub max_vus: Option<u32>,
    pub peak_rate: Option<f64>,
    pub planned_arrivals: Option<f64>,
    pub max_in_flight: Option<u32>,
    pub count: Option<u64>,
    /// The load over time as planned (closed and open models).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub planned: Option<PlannedLoad>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct Requests {
    /// Every request that ended in the measured time: answered, failed or interrupted.
    pub total: u64,
    pub ok: u64,
    pub failed: u64,
    /// Of the failed: sent, but in flight when the run stopped.
    #[serde(default)]
    pub interrupted: u64,
    /// Requests per second of measured time.
    pub rate: f64,
    /// Requests completed during warm-up (not in any statistic).
    pub warmup: u64,
    /// Requests that waited for a free stream slot on a shared connection (`http.connections`);
    /// their latency includes the wait, their service time does not.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub delayed_by_stream_limit: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Where a run's requests went and what its connections spoke.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct OriginResult {
    /// `scheme://host[:port]`.
    pub url: String,
    /// The HTTP version the scenario asked for: `1.1`, `2` or `auto`.
    pub version: String,
    /// The protocol the run's connections spoke (`http/1.1`, `h2`, `h2c`): the one most of
    /// them spoke if they differed, or what was negotiated before the load if none opened.
    pub protocol: Option<crate::Protocol>,
    /// Connections opened during the run, per protocol.
    pub connections: BTreeMap<String, u64>,
    /// Shared, multiplexed connections per origin (`http.connections`); absent: per VU.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shared_connections: Option<u32>,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Default)]
pub struct LatencySummary {
    pub count: u64,
    pub min: f64,
    pub mean: f64,
    pub stdev: f64,
    pub p50: f64,
    pub p90: f64,
    pub p95: f64,
    pub p99: f64,
    pub p999: f64,
    pub max: f64,
}

impl LatencySummary {
    pub fn of(h: &LatencyHistogram) -> Self {
        if h.is_empty() {
            return Self::default();
        }
        let ms = |us: u64| us as f64 / 1000.0;
        let q = |p: f64| ms(h.value_at_quantile(p));
        Self {
            count: h.len(),
            min: ms(h.min()),
            mean: h.mean() / 1000.0,
            stdev: h.stdev() / 1000.0,
            p50: q(0.50),
            p90: q(0.90),
            p95: q(0.95),
            p99: q(0.99),
            p999: q(0.999),
            max: ms(h.max()),
        }
    }

    /// Any percentile from the histogram, for thresholds like `latency.p97`.
    pub fn percentile_of(h: &LatencyHistogram, p: f64) -> f64 {
        h.value_at_quantile(p / 100.0) as f64 / 1000.0
    }
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Default)]
pub struct LagSummary {
    pub p50: f64,
    pub p99: f64,
    pub max: f64,
}

impl LagSummary {
    pub fn of(h: &LatencyHistogram) -> Self {
        if h.is_empty() {
            return Self::default();
        }
        let ms = |us: u64| us as f64 / 1000.0;
        Self {
            p50: ms(h.value_at_quantile(0.5)),
            p99: ms(h.value_at_quantile(0.99)),
            max: ms(h.max()),
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct Iterations {
    pub completed: u64,
    /// Arrivals that could not start before the run ended.
    pub dropped: u64,
    /// Arrivals that had to wait because `max_in_flight` requests were already open.
    pub delayed_by_max_in_flight: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct StepResult {
    pub name: String,
    pub group: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    pub requests: u64,
    pub failed: u64,
    pub errors: BTreeMap<String, u64>,
    pub status_codes: BTreeMap<String, u64>,
    pub latency_ms: LatencySummary,
    pub service_time_ms: LatencySummary,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_latency_ms: Option<LatencySummary>,
    /// Each check of the step with how often it failed (empty when the step has no checks).
    #[serde(default)]
    pub checks: Vec<CheckResult>,
    #[serde(default, skip_serializing_if = "Bytes::is_zero")]
    pub bytes: Bytes,
    /// The step's histograms (any percentile of any step can be computed from them).
    #[serde(default)]
    pub histograms: Histograms,
    /// The slowest requests with their trace ids (`defaults.trace: true`), slowest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub slowest: Vec<crate::SlowRequest>,
}

/// One `check:` of a step and its failures.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CheckResult {
    /// The check as written, e.g. `status in [200, 201]` or `$.ok == true`.
    pub check: String,
    pub failed: u64,
}

/// A group of steps (`group:`) or a tag (`key=value`): its steps' requests together.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct GroupResult {
    pub name: String,
    pub requests: u64,
    pub failed: u64,
    pub latency_ms: LatencySummary,
    pub service_time_ms: LatencySummary,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_latency_ms: Option<LatencySummary>,
    #[serde(default)]
    pub histograms: Histograms,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ThresholdResult {
    pub expr: String,
    /// `None` when the metric had no data (which fails the threshold).
    pub actual: Option<f64>,
    pub ok: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct Generator {
    /// Process CPU time / wall time / cores the generator may use, in percent.
    pub cpu_percent: f64,
    pub cpu_seconds: f64,
    pub cores: u32,
    pub threads: u32,
    pub saturated: bool,
    pub scheduler_lag_ms_p99: f64,
    /// The open model's batch window (see `RecordMeta::batch_window_ms`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch_window_ms: Option<f64>,
    pub max_rss_bytes: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct IntervalStats {
    /// Seconds since the start of the run (including warm-up) at the start of the slice.
    pub t: f64,
    /// Length of the slice in seconds (1, except at the warm-up boundary and the end).
    #[serde(default = "one_second")]
    pub length_s: f64,
    pub warmup: bool,
    pub requests: u64,
    pub failed: u64,
    /// Requests per second over the slice's real length.
    pub rate: f64,
    pub latency_ms: IntervalLatency,
    /// Active VUs (closed model) or iterations in flight (open model) at the end of the slice.
    pub active: u64,
    /// Requests in flight at the end of the slice.
    #[serde(default)]
    pub in_flight: u64,
}

fn one_second() -> f64 {
    1.0
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Default)]
pub struct IntervalLatency {
    pub p50: f64,
    pub p95: f64,
    pub p99: f64,
    pub max: f64,
}

impl IntervalLatency {
    pub fn of(h: Option<&LatencyHistogram>) -> Self {
        let Some(h) = h.filter(|h| !h.is_empty()) else {
            return Self::default();
        };
        let q = |p: f64| h.value_at_quantile(p) as f64 / 1000.0;
        Self {
            p50: q(0.5),
            p95: q(0.95),
            p99: q(0.99),
            max: h.max() as f64 / 1000.0,
        }
    }
}

/// Base64 HdrHistogram V2 (deflate) encodings of a scope's histograms (empty: no data).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct Histograms {
    #[serde(default)]
    pub latency: String,
    #[serde(default)]
    pub service_time: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub lag: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub server_latency: String,
}

impl Bytes {
    pub fn is_zero(&self) -> bool {
        self.sent == 0 && self.received == 0
    }
}

/// Base64 of the compressed V2 encoding (what HdrHistogram logs and tools read).
pub fn encode_histogram(h: &LatencyHistogram) -> String {
    use base64::Engine;
    use hdrhistogram::serialization::Serializer;
    let mut bytes = Vec::new();
    hdrhistogram::serialization::V2DeflateSerializer::new()
        .serialize(h, &mut bytes)
        .expect("serializing to memory cannot fail");
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// Empty for an empty histogram (a scope with no data), else [`encode_histogram`].
pub fn encode_nonempty(h: &LatencyHistogram) -> String {
    if h.is_empty() {
        String::new()
    } else {
        encode_histogram(h)
    }
}

pub fn decode_histogram(text: &str) -> Option<LatencyHistogram> {
    use base64::Engine;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text)
        .ok()?;
    hdrhistogram::serialization::Deserializer::new()
        .deserialize(&mut bytes.as_slice())
        .ok()
}

/// UTC timestamp `2026-11-22T07:30:00Z` without a date-time dependency.
pub fn rfc3339(t: SystemTime) -> String {
    let secs = t
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0) as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Civil-from-days (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        (rem % 3600) / 60,
        rem % 60
    )
}

/// Parses `YYYY-MM-DDTHH:MM:SS[.fff]Z` (UTC, what results and `--start-at` use).
pub fn parse_rfc3339(s: &str) -> Option<SystemTime> {
    let s = s.trim();
    let b = s.as_bytes();
    if b.len() < 20 || !s.ends_with('Z') || b[4] != b'-' || b[7] != b'-' || b[10] != b'T' {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let t = s.get(r)?;
        t.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| t.parse().ok())?
    };
    let (y, m, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (hh, mm, ss) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) || hh > 23 || mm > 59 || ss > 60 {
        return None;
    }
    let frac = &s[19..s.len() - 1];
    let nanos: u32 = match frac.strip_prefix('.') {
        None if frac.is_empty() => 0,
        Some(digits)
            if !digits.is_empty()
                && digits.len() <= 9
                && digits.bytes().all(|c| c.is_ascii_digit()) =>
        {
            format!("{digits:0<9}").parse().ok()?
        }
        _ => return None,
    };
    // Days from civil (Howard Hinnant's algorithm).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let secs = days * 86_400 + hh * 3600 + mm * 60 + ss;
    u64::try_from(secs)
        .ok()
        .map(|s| SystemTime::UNIX_EPOCH + std::time::Duration::new(s, nanos))
}

/// Seconds since the Unix epoch (negative before it), with sub-second precision.
pub fn unix_seconds(t: SystemTime) -> f64 {
    match t.duration_since(SystemTime::UNIX_EPOCH) {
        Ok(d) => d.as_secs_f64(),
        Err(e) => -e.duration().as_secs_f64(),
    }
}

/// The inverse of [`unix_seconds`].
pub fn from_unix_seconds(s: f64) -> SystemTime {
    if s >= 0.0 {
        SystemTime::UNIX_EPOCH + std::time::Duration::from_secs_f64(s.min(1e12))
    } else {
        SystemTime::UNIX_EPOCH - std::time::Duration::from_secs_f64((-s).min(1e12))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps() {
        assert_eq!(rfc3339(SystemTime::UNIX_EPOCH), "1970-01-01T00:00:00Z");
        let t = SystemTime::UNIX_EPOCH + Duration::from_secs(1_795_305_600 + 3661);
        assert_eq!(rfc3339(t), "2026-11-22T01:01:01Z");
    }

    #[test]
    fn parses_what_it_writes() {
        let t = SystemTime::UNIX_EPOCH + Duration::from_secs(1_767_225_600 + 3723);
        assert_eq!(parse_rfc3339(&rfc3339(t)), Some(t));
        let ms = parse_rfc3339("2026-11-23T10:00:00.250Z").unwrap();
        assert_eq!(rfc3339(ms), "2026-11-23T10:00:00Z");
        assert!(
            (unix_seconds(ms)
                - unix_seconds(parse_rfc3339("2026-11-23T10:00:00Z").unwrap())
                - 0.25)
                .abs()
                < 1e-6
        );
        for bad in [
            "",
            "2026-11-23",
            "2026-11-23T10:00:00",
            "2026-13-01T00:00:00Z",
            "2026-11-23T10:00:00.Z",
            "x026-11-23T10:00:00Z",
        ] {
            assert_eq!(parse_rfc3339(bad), None, "{bad}");
        }
    }

    #[test]
    fn histogram_round_trip() {
        let mut h = crate::new_histogram();
        for v in [1u64, 10, 100, 1000, 123_456] {
            h.record(v).unwrap();
        }
        let back = decode_histogram(&encode_histogram(&h)).unwrap();
        assert_eq!(back.len(), 5);
        assert_eq!(back.max(), h.max());
    }
}
