//! The run result: the versioned JSON summary of one run (`loadlab.run.v2`), derived from
//! the run record (see `record`) by one function — at the end of a run, after a crash, and
//! when segments are merged.
//!
//! Field names are a public interface: reports, baselines, studies and users' scripts read
//! them. The JSON Schema lives in `docs/schema/run.v2.json` and a test checks results
//! against it. Results of schema v1 still load (see [`RunResult::from_json`]).

use crate::histogram::LatencyHistogram;

mod encoder;
mod histograms;
mod series;

use crate::segment::Segment;
pub use crate::timestamp::{from_unix_seconds, parse_rfc3339, rfc3339, unix_seconds};
use crate::validity::{InvalidKind, TargetVerdict, Validity};
pub use encoder::HistogramEncoder;
pub use histograms::{decode_histogram, encode_histogram, encode_nonempty, Histograms};
use serde::{Deserialize, Serialize};
pub use series::{IntervalLatency, IntervalStats, LoadStretch, WindowStats, WINDOW_REQUESTS};
use std::collections::BTreeMap;

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
    pub segment: Option<Segment>,
    pub valid: bool,
    /// A run imported from another tool's result file: which tool and file. Its validity is
    /// not judged (`valid` is false, with no reason): see [`RunResult::validity_judged`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub imported: Option<crate::ImportedFrom>,
    /// Why the measurement cannot be trusted (empty when valid).
    #[serde(default)]
    pub validity: Validity,
    /// Findings about the target that do not invalidate the measurement.
    #[serde(default)]
    pub verdicts: Vec<TargetVerdict>,
    /// Stopped before the plan ended (signal, crash): the numbers cover only what ran. A run
    /// an abort threshold stopped (`stop: threshold`) is not interrupted: it failed.
    pub interrupted: bool,
    /// How the run ended.
    #[serde(default)]
    pub stop: StopReason,
    /// The threshold that stopped the run (`stop: threshold`), with its window and value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aborted_by_threshold: Option<crate::ThresholdBreach>,
    /// The commands that steered the run while it went (`loadlab control`, the dashboard's
    /// controls), in order: present only on a steered run, whose load is what they drove.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steering: Vec<crate::SteerEvent>,
    /// A command changed the load while the run went: `load.driven` is the load as driven,
    /// `stretches` what each stretch of constant load measured.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub steered: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stretches: Vec<LoadStretch>,
    /// The data sets and what the run used of each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub data_sets: Vec<crate::data_use::DataSetUse>,
    /// Measured time, after warm-up.
    pub duration_s: f64,
    pub warmup_s: f64,
    pub load: LoadInfo,
    pub requests: Requests,
    #[serde(default)]
    pub bytes: Bytes,
    pub latency_ms: LatencySummary,
    /// Closed model: the latency users arriving on each VU's schedule would have seen
    /// (coordinated omission compensated; see `compensation`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_compensated_ms: Option<LatencySummary>,
    /// Closed model: the schedule the compensation assumed, and the size of the correction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compensation: Option<crate::Compensation>,
    pub service_time_ms: LatencySummary,
    /// Where service time went: connect, TLS handshake, waiting (time to first byte),
    /// receiving (absent: not measured, as in records written before it existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phases_ms: Option<crate::PhaseSummary>,
    pub lag_ms: LagSummary,
    /// The most VUs active at once (closed model; absent for other models and old records).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vus_max: Option<u64>,
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
    /// Latency and throughput over time, in windows of consecutive slices holding enough
    /// requests for a curve ([`WINDOW_REQUESTS`], at most a second, never across the warm-up's
    /// end): what the over-time charts draw. Absent in results written before it existed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub windows: Vec<WindowStats>,
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
    /// The streamed responses of all steps with `stream:` together (TTFT, ITL, TPOT,
    /// tokens, goodput); absent when no step streamed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<crate::StreamResult>,
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
    /// A threshold marked `abort` failed over its window: the load stopped at once
    /// (`aborted_by_threshold` says which).
    Threshold,
    /// A control command (`loadlab control stop`, the dashboard's stop) ended it before its
    /// planned end: the result covers what ran, as the user chose, and is not interrupted.
    Control,
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
    /// Its measured latency over all steps (base64 HdrHistogram V2, as `histograms`): what a
    /// study of rounds of segments resamples. Empty in merges made before it was kept.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub latency: String,
}

impl RunResult {
    /// False for an imported run: the file it came from does not hold the generator's own
    /// timing, so it is neither valid nor invalid ("not judged (imported)").
    pub fn validity_judged(&self) -> bool {
        self.imported.is_none()
    }

    /// Its numbers may be used: a valid run, or an imported one (not judged, and nothing
    /// known against it).
    pub fn usable(&self) -> bool {
        self.valid || (self.imported.is_some() && self.validity.is_valid())
    }

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

/// Bytes of requests and responses, heads and bodies (HTTP/1.1: as on the wire, TLS
/// records aside; HTTP/2: header fields and bodies, before HPACK and framing).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Default)]
pub struct Bytes {
    pub sent: u64,
    pub received: u64,
    /// Per second of measured time.
    #[serde(default)]
    pub sent_per_s: f64,
    #[serde(default)]
    pub received_per_s: f64,
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
    pub model: crate::LoadModel,
    pub planned_duration_s: f64,
    pub max_vus: Option<u32>,
    pub peak_rate: Option<f64>,
    pub planned_arrivals: Option<f64>,
    /// Open model: the arrivals were a Poisson process (`arrivals: poisson`), so the count
    /// that came differs from `planned_arrivals` by chance.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub poisson: bool,
    pub max_in_flight: Option<u32>,
    pub count: Option<u64>,
    /// Closed model: each VU's intended schedule, an iteration per `pace_ms` (`load.pace`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pace_ms: Option<f64>,
    /// The load over time as planned (closed and open models).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub planned: Option<PlannedLoad>,
    /// A steered run: the load as its commands drove it (the plan until the first).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub driven: Option<PlannedLoad>,
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
    /// Requests that waited for a connection because as many as the generator opens at once
    /// to their origin (per worker thread) were already being opened; their latency includes
    /// the wait, their service time does not.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub delayed_by_connect_limit: u64,
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
    /// Iterations completed in the measured time (after warm-up), as `requests.total` counts
    /// requests.
    pub completed: u64,
    /// Iterations completed during warm-up (not in `completed`), as `requests.warmup`.
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub warmup: u64,
    /// Arrivals that could not start before the run ended.
    pub dropped: u64,
    /// Arrivals that had to wait because `max_in_flight` requests were already open.
    pub delayed_by_max_in_flight: u64,
    /// How long completed iterations took, start to end (k6's `iteration_duration`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<LatencySummary>,
}

fn is_zero_u64(n: &u64) -> bool {
    *n == 0
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
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_compensated_ms: Option<LatencySummary>,
    pub service_time_ms: LatencySummary,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_latency_ms: Option<LatencySummary>,
    /// Where the step's service time went (see [`RunResult::phases_ms`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phases_ms: Option<crate::PhaseSummary>,
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
    /// A WebSocket step's messages, close codes and session durations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ws: Option<crate::WsResult>,
    /// A gRPC step's calls by status, messages each way and first-message times.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grpc: Option<crate::GrpcResult>,
    /// A streaming step's TTFT, ITL, TPOT, end-to-end times, tokens and goodput.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<crate::StreamResult>,
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
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_compensated_ms: Option<LatencySummary>,
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
    /// Responses were read at the batch wake-ups (see `RecordMeta::reads_at_wakeups`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub reads_at_wakeups: bool,
    pub max_rss_bytes: u64,
    /// Closed model: the pause probe over the measured window, how late each worker handled a
    /// timer firing every 1.7 ms on its own thread while requests are in flight (ms); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pauses_ms: Option<PauseSummary>,
    /// Share of the worker threads' time (measured window × threads) they were runnable but
    /// waited for a CPU (the kernel's `schedstat` run delay).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_delay_share: Option<f64>,
    /// Mean wait for a CPU each time a worker thread was scheduled (ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_delay_per_wakeup_ms: Option<f64>,
    /// Time stolen by the hypervisor on the cores the generator may use (% of those cores,
    /// mean over the measured window).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steal_percent: Option<f64>,
    /// How late this host woke a timer before the run: its timing resolution.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_timer: Option<crate::HostTimer>,
    /// The least delay of the generator's that counted against the run, from `host_timer`
    /// (ms): latencies are precise to about this much on this host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay_floor_ms: Option<f64>,
}

/// Percentiles of the pause meter's oversleeps (ms).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Default)]
pub struct PauseSummary {
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub p999: f64,
    pub max: f64,
    /// Sleeps measured.
    pub samples: u64,
}

impl PauseSummary {
    pub fn of(h: &LatencyHistogram) -> Self {
        let ms = |q: f64| h.value_at_quantile(q) as f64 / 1000.0;
        Self {
            p50: ms(0.5),
            p90: ms(0.9),
            p99: ms(0.99),
            p999: ms(0.999),
            max: h.max() as f64 / 1000.0,
            samples: h.len(),
        }
    }
}

impl Bytes {
    pub fn is_zero(&self) -> bool {
        self.sent == 0 && self.received == 0
    }

    /// Totals with their rates over `seconds` of measured time.
    pub fn over(sent: u64, received: u64, seconds: f64) -> Bytes {
        let per_s = |n: u64| {
            if seconds > 0.0 {
                n as f64 / seconds
            } else {
                0.0
            }
        };
        Bytes {
            sent,
            received,
            sent_per_s: per_s(sent),
            received_per_s: per_s(received),
        }
    }
}
