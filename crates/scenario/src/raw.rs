//! The scenario file exactly as written: serde types that reject unknown keys with a position.

use crate::model::ConnectionPolicy;
pub use crate::raw_values::{ByteSize, RawCapture, Scalar, ThinkSpec};
use crate::units::{de_opt_duration, de_opt_rate};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::time::Duration;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawScenario {
    pub name: Option<String>,
    pub target: Option<String>,
    #[serde(default)]
    pub defaults: RawDefaults,
    pub load: Option<RawLoad>,
    #[serde(default, deserialize_with = "de_opt_duration")]
    pub warmup: Option<Duration>,
    /// Each a string (`latency.p95 < 500ms over 30s, abort`) or a mapping (`{metric: …,
    /// over: 30s, below: 500ms, abort: true}`): read by `validate::thresholds`.
    #[serde(default)]
    pub thresholds: Vec<serde_yaml_ng::Value>,
    #[serde(default)]
    pub flows: Vec<RawFlow>,
    /// Shorthand for a single flow.
    #[serde(default)]
    pub steps: Steps,
    pub connections: Option<ConnectionPolicy>,
    /// The HTTP version and shared, multiplexed connections.
    pub http: Option<RawHttp>,
    /// Data sets (`users: {csv: users.csv, pick: sequential}`), by name.
    #[serde(default)]
    pub data: BTreeMap<String, RawData>,
    pub source_addresses: Option<OneOrMany>,
    pub insecure: Option<bool>,
    /// Read by `loadlab study` (see the study module); `run` ignores it.
    #[allow(dead_code)]
    pub study: Option<serde_yaml_ng::Value>,
    /// Read by `loadlab capacity`; `run` ignores it.
    #[allow(dead_code)]
    pub capacity: Option<serde_yaml_ng::Value>,
    pub monitor: Option<RawMonitor>,
    /// Live outputs (`- json: live.jsonl` or `- "json=live.jsonl"`).
    #[serde(default)]
    pub outputs: Vec<RawOutput>,
}

/// One `outputs:` entry as written: `{ kind: dest }` or the flag's `kind=dest`.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum RawOutput {
    Text(String),
    Map(BTreeMap<String, String>),
}

/// `monitor:` as written; checked into a `MonitorConfig` by `validate::monitor`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawMonitor {
    #[serde(default, deserialize_with = "de_opt_duration")]
    pub interval: Option<Duration>,
    pub host: Option<bool>,
    #[serde(default)]
    pub processes: Vec<RawProcessWatch>,
    #[serde(default)]
    pub cgroups: Vec<RawCgroupWatch>,
    #[serde(default)]
    pub prometheus: Vec<RawPrometheusWatch>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawProcessWatch {
    pub name: Option<String>,
    pub pid: Option<u32>,
    pub port: Option<u16>,
    #[serde(rename = "match")]
    pub pattern: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawCgroupWatch {
    pub name: Option<String>,
    pub path: Option<String>,
    pub container: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawPrometheusWatch {
    pub name: Option<String>,
    pub url: Option<String>,
    #[serde(default)]
    pub series: Vec<String>,
}

/// `http: {version: "2", connections: 4, max_streams: 100}` (a step may set `version` only).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawHttp {
    /// `"1.1"`, `"2"` or `auto`; written as a number (`2`, `1.1`) too.
    pub version: Option<Scalar>,
    pub connections: Option<u32>,
    pub max_streams: Option<u32>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawDefaults {
    #[serde(default, deserialize_with = "de_opt_duration")]
    pub timeout: Option<Duration>,
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    pub max_body: Option<ByteSize>,
    pub server_latency_header: Option<String>,
    pub trace: Option<bool>,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum ModelKind {
    Closed,
    Open,
    Burst,
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Arrivals {
    Constant,
    Poisson,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawLoad {
    pub model: ModelKind,
    pub stages: Option<Vec<RawStage>>,
    pub vus: Option<u32>,
    pub start_vus: Option<u32>,
    pub iterations: Option<u64>,
    pub shared_iterations: Option<u64>,
    #[serde(default, deserialize_with = "de_opt_duration")]
    pub duration: Option<Duration>,
    #[serde(default, deserialize_with = "de_opt_rate")]
    pub rate: Option<f64>,
    pub max_in_flight: Option<u32>,
    pub arrivals: Option<Arrivals>,
    #[serde(default, deserialize_with = "de_opt_duration")]
    pub batch_window: Option<Duration>,
    pub count: Option<u64>,
    #[serde(default, deserialize_with = "de_opt_duration")]
    pub max_duration: Option<Duration>,
    #[serde(default, deserialize_with = "de_opt_duration")]
    pub pace: Option<Duration>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawStage {
    #[serde(default, deserialize_with = "de_opt_duration")]
    pub duration: Option<Duration>,
    pub vus: Option<u32>,
    #[serde(default, deserialize_with = "de_opt_rate")]
    pub rate: Option<f64>,
    #[serde(default, deserialize_with = "de_opt_rate")]
    pub ramp_to: Option<f64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawFlow {
    pub name: Option<String>,
    pub weight: Option<u32>,
    #[serde(default)]
    pub steps: Steps,
}

/// Steps as written. Boxed: a step has many optional keys, and serde grows vectors ahead of
/// need, so a file of 40,000 one-step flows would otherwise hold ~100 MB of empty slots.
pub type Steps = Vec<Box<RawStep>>;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawStep {
    pub name: Option<String>,
    pub group: Option<String>,
    pub get: Option<String>,
    pub post: Option<String>,
    pub put: Option<String>,
    pub patch: Option<String>,
    pub delete: Option<String>,
    pub head: Option<String>,
    pub options: Option<String>,
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    pub json: Option<serde_json::Value>,
    pub body: Option<String>,
    #[serde(default)]
    pub form: Option<BTreeMap<String, Scalar>>,
    #[serde(default)]
    pub query: BTreeMap<String, Scalar>,
    #[serde(default)]
    pub tags: BTreeMap<String, Scalar>,
    #[serde(default, deserialize_with = "de_opt_duration")]
    pub timeout: Option<Duration>,
    pub think: Option<ThinkSpec>,
    #[serde(default)]
    pub capture: BTreeMap<String, RawCapture>,
    pub check: Option<RawCheck>,
    #[serde(rename = "loop")]
    pub loop_: Option<RawLoop>,
    pub once: Option<Steps>,
    /// This step's HTTP version (`http: {version: "1.1"}`).
    pub http: Option<RawHttp>,
    /// A WebSocket session (see `raw_ws`).
    pub ws: Option<crate::raw_ws::RawWs>,
    /// A gRPC call (see `raw_grpc`).
    pub grpc: Option<crate::raw_grpc::RawGrpc>,
    /// The response is a stream of events (see `raw_stream`).
    pub stream: Option<crate::raw_stream::RawStream>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawLoop {
    pub count: u64,
    #[serde(default)]
    pub steps: Steps,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawCheck {
    pub status: Option<StatusSpec>,
    #[serde(default)]
    pub json: BTreeMap<String, serde_json::Value>,
    pub body_contains: Option<String>,
    #[serde(default)]
    pub header: BTreeMap<String, String>,
    #[serde(default, deserialize_with = "de_opt_duration")]
    pub max_latency: Option<Duration>,
    /// Only on a `grpc:` step: the statuses the call may end with.
    pub grpc_status: Option<crate::raw_grpc::RawGrpcStatus>,
    /// Only on a step with `stream:`: events and tokens the stream must hold.
    pub stream: Option<crate::raw_stream::RawStreamCheck>,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum StatusSpec {
    One(u16),
    Many(Vec<u16>),
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum RawPick {
    Sequential,
    Random,
    Unique,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawData {
    pub csv: Option<String>,
    /// A JSON Lines file: one object per line (LLM prompt sets are often written so).
    pub jsonl: Option<String>,
    pub values: Option<Vec<serde_json::Value>>,
    pub pick: Option<RawPick>,
    pub split: Option<RawSplit>,
}

/// `split: segments`: the rows are shared out among the segments of a plan.
#[derive(Debug, Deserialize, Clone, Copy)]
#[serde(rename_all = "snake_case")]
pub enum RawSplit {
    Segments,
}

/// Every key the file format knows, per section, for "did you mean" suggestions.
pub const TOP_KEYS: &[&str] = &[
    "name",
    "target",
    "defaults",
    "load",
    "warmup",
    "thresholds",
    "flows",
    "steps",
    "connections",
    "http",
    "data",
    "source_addresses",
    "insecure",
    "monitor",
    "outputs",
];
