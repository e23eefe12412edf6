//! The resolved scenario: what the engine runs, after parsing, defaults and validation.

use crate::credentials::Credentials;
pub use crate::step_parts::{Capture, CaptureSource, ThinkTime};
use crate::threshold::Threshold;
use std::net::IpAddr;
use std::time::Duration;

pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
/// Response bodies are read and discarded; beyond this size the request fails `body_too_large`.
pub const DEFAULT_MAX_BODY: u64 = 16 * 1024 * 1024;

#[derive(Debug, Clone, PartialEq)]
pub struct Scenario {
    pub name: String,
    /// The file it came from, for messages; `None` when built from flags.
    pub source: Option<String>,
    /// Base URL that relative step paths are joined to; a password in it is redacted
    /// (`admin:***@`): the credentials live in the steps (see [`Scenario::set_target`]).
    pub target: Option<String>,
    pub defaults: Defaults,
    pub load: Load,
    /// Recorded, but excluded from statistics and thresholds.
    pub warmup: Duration,
    pub thresholds: Vec<Threshold>,
    pub flows: Vec<Flow>,
    pub connections: ConnectionPolicy,
    /// HTTP version and shared, multiplexed connections (`http:`).
    pub http: HttpConfig,
    /// Local addresses connections are spread over (empty: let the OS choose).
    pub source_addresses: Vec<IpAddr>,
    /// Skip TLS certificate verification.
    pub insecure: bool,
    /// Data sets that templates read rows from (`{{ users.username }}`).
    pub data: Vec<DataSet>,
    /// What is sampled besides the requests (`monitor:`; by default the host).
    pub monitor: crate::monitor::MonitorConfig,
    /// Where each interval is also sent while the run goes (`outputs:`, `--out`).
    pub outputs: Vec<crate::output::OutputSpec>,
}

/// Rows a template can read: a CSV file or an inline list, and how a VU picks its row.
#[derive(Debug, Clone, PartialEq)]
pub struct DataSet {
    pub name: String,
    /// Column names (from the CSV header, the keys of inline objects, or `value`).
    pub columns: Vec<String>,
    /// Cells: strings from CSV; inline values keep their JSON type (numbers stay numbers).
    pub rows: Vec<Vec<serde_json::Value>>,
    pub pick: Pick,
    /// `split: segments`: segment i of N takes only rows i, i+N, i+2N… (`unique` sets always
    /// do), so no two generators of one plan use the same row.
    pub split: bool,
    /// The CSV file as the scenario names it (relative to the scenario file), when the rows
    /// came from one: what must travel with the scenario to another machine.
    pub csv: Option<String>,
}

/// How a VU takes its row (once per iteration, at the first step that reads the set).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Pick {
    /// Rows in order, shared by all VUs, wrapping around at the end.
    #[default]
    Sequential,
    /// Any row, uniformly at random.
    Random,
    /// Each row at most once in the whole run; running out is an error.
    Unique,
}

impl DataSet {
    /// Segments of a plan take disjoint rows of this set.
    pub fn split_by_segment(&self) -> bool {
        self.split || self.pick == Pick::Unique
    }
}

impl Pick {
    pub fn as_str(self) -> &'static str {
        match self {
            Pick::Sequential => "sequential",
            Pick::Random => "random",
            Pick::Unique => "unique",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Defaults {
    pub timeout: Duration,
    pub headers: Vec<(String, String)>,
    pub max_body: u64,
    /// Where responses say how long the server spent (`defaults.server_latency_header`).
    pub server_latency: ServerLatency,
    /// Send a W3C `traceparent` with every request and keep the trace ids of the slowest.
    pub trace: bool,
}

impl Default for Defaults {
    fn default() -> Self {
        Self {
            timeout: DEFAULT_TIMEOUT,
            headers: Vec::new(),
            max_body: DEFAULT_MAX_BODY,
            server_latency: ServerLatency::ServerTiming,
            trace: false,
        }
    }
}

/// The response header that carries the server's own time for a request.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum ServerLatency {
    /// W3C `Server-Timing`: its `total` entry, else `app`, else the largest `dur` (the
    /// outermost span when entries nest; entries are never summed, since they may overlap).
    #[default]
    ServerTiming,
    /// A single-duration header such as `X-Response-Time: 12ms` (a bare number is ms).
    Header(String),
    /// Responses are not read for it (`server_latency_header: none`).
    Off,
}

impl ServerLatency {
    /// As written in the scenario (`Server-Timing`, `X-Response-Time`, `none`).
    pub fn as_str(&self) -> &str {
        match self {
            ServerLatency::ServerTiming => "Server-Timing",
            ServerLatency::Header(h) => h,
            ServerLatency::Off => "none",
        }
    }
}

/// How virtual users hold connections.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ConnectionPolicy {
    /// Each VU keeps its own keep-alive connection (like a browser tab or a client instance).
    #[default]
    PerVu,
    /// Requests take any idle connection of the worker's pool.
    Shared,
    /// A new connection for every request (no keep-alive).
    None,
}

/// Which HTTP version requests speak.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum HttpVersion {
    /// HTTP/1.1 over plain TCP and over TLS.
    Http1,
    /// HTTP/2: ALPN `h2` over TLS, prior knowledge (h2c) over plain TCP.
    Http2,
    /// ALPN over TLS (`h2`, else `http/1.1`), as browsers do; HTTP/1.1 over plain TCP.
    #[default]
    Auto,
}

impl HttpVersion {
    pub fn as_str(self) -> &'static str {
        match self {
            HttpVersion::Http1 => "1.1",
            HttpVersion::Http2 => "2",
            HttpVersion::Auto => "auto",
        }
    }

    /// `"1.1"`, `"2"` or `auto` (also `1`, `2.0`, `h2`, `http/1.1`, as people write them).
    pub fn parse(text: &str) -> Option<HttpVersion> {
        Some(match text.trim().to_ascii_lowercase().as_str() {
            "1.1" | "1" | "http/1.1" => HttpVersion::Http1,
            "2" | "2.0" | "h2" | "h2c" => HttpVersion::Http2,
            "auto" => HttpVersion::Auto,
            _ => return None,
        })
    }
}

/// Default streams at once on one shared HTTP/2 connection (h2load's `-m` is often 100;
/// servers commonly allow 100 to 250).
pub const DEFAULT_MAX_STREAMS: u32 = 100;

/// `http:`: the protocol version, and connections shared between VUs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HttpConfig {
    pub version: HttpVersion,
    /// Shared connections per origin that every request of the run multiplexes over (the way
    /// gateways and service meshes talk); `None`: connections follow `connections:` (one per
    /// VU by default).
    pub connections: Option<u32>,
    /// Streams at once on one shared connection, capped by the server's
    /// `SETTINGS_MAX_CONCURRENT_STREAMS` (HTTP/1.1 connections carry one request at a time).
    pub max_streams: u32,
    /// Which HTTP/2 client the engine uses (`--http2-client`; not in scenario files).
    pub client: Http2Client,
}

/// The engine's HTTP/2 client. Both give the same results. `Wire`, the purpose-built one, is
/// the default: a gRPC call costs 0.4× the `h2` crate's CPU against a fast server, and plain
/// GETs against nginx cost the same within the noise (bench/README.md, issue 42). `H2` stays
/// for streamed responses and as the way out if the purpose-built client meets a server it
/// does not get on with.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Http2Client {
    H2,
    #[default]
    Wire,
}

impl Http2Client {
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "h2" => Some(Http2Client::H2),
            "wire" => Some(Http2Client::Wire),
            _ => None,
        }
    }
}

impl Default for HttpConfig {
    fn default() -> Self {
        Self {
            version: HttpVersion::Auto,
            connections: None,
            max_streams: DEFAULT_MAX_STREAMS,
            client: Http2Client::default(),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Flow {
    pub name: String,
    pub weight: u32,
    pub steps: Vec<Step>,
}

/// One thing a virtual user does.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    Request(Box<RequestStep>),
    Think(ThinkTime),
    /// The steps, `count` times in a row.
    Loop {
        count: u64,
        steps: Vec<Step>,
    },
    /// Steps a VU runs only on its first iteration (until they succeed once).
    Once(Vec<Step>),
    /// A WebSocket session (`ws:`).
    Ws(Box<crate::ws::WsStep>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Method {
    Get,
    Post,
    Put,
    Patch,
    Delete,
    Head,
    Options,
}

impl Method {
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Post => "POST",
            Method::Put => "PUT",
            Method::Patch => "PATCH",
            Method::Delete => "DELETE",
            Method::Head => "HEAD",
            Method::Options => "OPTIONS",
        }
    }

    pub fn parse(text: &str) -> Option<Method> {
        Some(match text.to_ascii_uppercase().as_str() {
            "GET" => Method::Get,
            "POST" => Method::Post,
            "PUT" => Method::Put,
            "PATCH" => Method::Patch,
            "DELETE" => Method::Delete,
            "HEAD" => Method::Head,
            "OPTIONS" => Method::Options,
            _ => return None,
        })
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct RequestStep {
    /// Shown in summaries; defaults to `METHOD path`.
    pub name: String,
    pub group: Option<String>,
    pub method: Method,
    /// A path (joined to the target) or an absolute URL.
    pub url: String,
    pub headers: Vec<(String, String)>,
    pub body: Option<Body>,
    pub timeout: Option<Duration>,
    /// Query parameters appended to the URL (values may hold templates).
    pub query: Vec<(String, String)>,
    /// Free-form labels, carried for reports.
    pub tags: Vec<(String, String)>,
    pub captures: Vec<Capture>,
    pub checks: Vec<Check>,
    /// Credentials from the URL (or, for a path, from the target), sent as HTTP Basic
    /// authentication to their origin only, unless the step sets `Authorization` itself.
    pub auth: Option<Credentials>,
    /// This step's HTTP version, when it differs from the scenario's (`http: {version: ...}`).
    pub http_version: Option<HttpVersion>,
    /// Set for a `grpc:` step: the call this request makes (its body is the message in JSON
    /// form, encoded to protobuf by the engine).
    pub grpc: Option<std::sync::Arc<crate::grpc::GrpcCall>>,
    /// Set when the response is a stream of events read as they arrive (`stream:`).
    pub stream: Option<std::sync::Arc<crate::stream::StreamSpec>>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Body {
    Json(serde_json::Value),
    Text(String),
    /// `application/x-www-form-urlencoded` fields.
    Form(Vec<(String, String)>),
}

/// A condition on a response; a failed check fails the request (`check_failed`).
#[derive(Debug, Clone, PartialEq)]
pub enum Check {
    Status(Vec<u16>),
    Json {
        path: crate::jsonpath::JsonPath,
        expected: serde_json::Value,
    },
    BodyContains(String),
    Header {
        name: String,
        value: String,
    },
    MaxLatency(Duration),
    /// A gRPC call's `grpc-status` is one of these (`check: { grpc_status: OK }`); replaces
    /// the rule that every status but `OK` is an error.
    GrpcStatus(Vec<loadlab_metrics::GrpcCode>),
    /// A streamed response held at least this many events (`check: {stream: {min_events}}`).
    StreamEvents(u64),
    /// A streamed response carried at least this many output tokens.
    StreamTokens(u64),
}

impl Check {
    pub fn needs_body(&self) -> bool {
        matches!(self, Check::Json { .. } | Check::BodyContains(_))
    }

    /// How the check is named in results, e.g. `status in [200, 201]`.
    pub fn describe(&self) -> String {
        match self {
            Check::Status(s) if s.len() == 1 => format!("status == {}", s[0]),
            Check::Status(s) => format!(
                "status in [{}]",
                s.iter().map(u16::to_string).collect::<Vec<_>>().join(", ")
            ),
            Check::Json { path, expected } => format!("{} == {expected}", path.text()),
            Check::BodyContains(t) => format!("body contains {t:?}"),
            Check::Header { name, value } => format!("header {name} == {value:?}"),
            Check::MaxLatency(d) => {
                format!("latency <= {}", crate::units::format_duration(*d))
            }
            Check::GrpcStatus(codes) if codes.len() == 1 => format!("grpc-status == {}", codes[0]),
            Check::GrpcStatus(codes) => format!(
                "grpc-status in [{}]",
                codes
                    .iter()
                    .map(|c| c.name())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Check::StreamEvents(n) => format!("stream events >= {n}"),
            Check::StreamTokens(n) => format!("stream tokens >= {n}"),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Load {
    Closed(ClosedLoad),
    Open(OpenLoad),
    Burst(BurstLoad),
}

impl Load {
    pub fn model(&self) -> loadlab_metrics::LoadModel {
        match self {
            Load::Closed(_) => loadlab_metrics::LoadModel::Closed,
            Load::Open(_) => loadlab_metrics::LoadModel::Open,
            Load::Burst(_) => loadlab_metrics::LoadModel::Burst,
        }
    }
}

/// Virtual users loop their flow (k6 `ramping-vus`, or a fixed number of iterations).
#[derive(Debug, Clone, PartialEq)]
pub struct ClosedLoad {
    pub start_vus: u32,
    /// Each stage moves linearly from the previous level to `vus` over its duration.
    pub stages: Vec<VuStage>,
    /// Each VU runs its flow this many times, then stops.
    pub iterations_per_vu: Option<u64>,
    /// All VUs together run this many iterations, then stop.
    pub shared_iterations: Option<u64>,
    /// Bound on an iteration-limited run.
    pub max_duration: Duration,
    /// Each VU starts an iteration at most once per `pace` (its intended schedule): a faster
    /// iteration waits for its next slot, a slower one is followed at once, and the slots it
    /// missed are not caught up. The schedule the compensated latency is measured against.
    pub pace: Option<Duration>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VuStage {
    pub duration: Duration,
    pub vus: u32,
}

/// Arrivals follow a rate whatever the target does (latency from intended send time).
#[derive(Debug, Clone, PartialEq)]
pub struct OpenLoad {
    pub stages: Vec<RateStage>,
    pub poisson: bool,
    pub max_in_flight: u32,
    /// `max_in_flight` was given (in the file or by `--max-in-flight`); false: it is the
    /// default, which the engine lowers to what the open-files limit allows (docs/limits.md).
    pub max_in_flight_given: bool,
    /// Stop after this many arrivals (for `--requests`).
    pub max_arrivals: Option<u64>,
    /// Arrivals closer together than this are started together, when the first of them is
    /// this late (`load.batch_window`, `--batch-window`); 0 starts each at its own time.
    pub batch_window: Duration,
}

impl OpenLoad {
    /// Dense arrivals are woken for in batches: the scheduler sleeps until the first pending
    /// arrival is this late and then starts every arrival that is due. Each wake-up costs far
    /// more than a request on a virtual machine, so one wake per arrival would more than
    /// double the CPU per request; one per millisecond tick (tokio's timer) leaves up to 2 ms
    /// of lag. Sparse arrivals (further apart than this) are woken for exactly. 0.8 ms keeps
    /// lag p99 under 1 ms on an idle core while a wake-up at 5,000/s starts four arrivals
    /// instead of two and a half (measured: 24 µs of CPU per request against 33–38 µs with
    /// 0.5 ms, 59–67 µs with 0, and 22 µs with 1 ms but lag p99 1.08 ms). The summary shows it
    /// next to the measured lag (see docs/open-model.md).
    pub const DEFAULT_BATCH_WINDOW: Duration = Duration::from_micros(800);

    /// The widest `batch_window` accepted: beyond it the window's lag would be most of what
    /// a fast service's latency shows, for a CPU saving that has flattened out by then.
    pub const MAX_BATCH_WINDOW: Duration = Duration::from_millis(10);
}

/// A constant rate, or a linear ramp from `rate` to `ramp_to`, per second.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RateStage {
    pub duration: Duration,
    pub rate: f64,
    pub ramp_to: Option<f64>,
}

/// `count` iterations released at once (a spike).
#[derive(Debug, Clone, PartialEq)]
pub struct BurstLoad {
    pub count: u64,
    /// Bound on how long the run waits for the burst to complete.
    pub max_duration: Duration,
}

impl Scenario {
    /// Why the warm-up leaves nothing to measure, if it does: a fixed-duration run no longer
    /// than its warm-up.
    pub fn warmup_problem(&self) -> Option<String> {
        let plan = self.plan();
        (!plan.ends_when_done() && self.warmup >= plan.duration() && !self.warmup.is_zero()).then(
            || {
                format!(
                    "the warm-up ({}) is not shorter than the run ({}): nothing would be measured",
                    crate::units::format_duration(self.warmup),
                    crate::units::format_duration(plan.duration())
                )
            },
        )
    }

    /// Sets the base URL (`--target`): checked, its password redacted, and its credentials (or
    /// none) given to every step written as a path.
    pub fn set_target(&mut self, text: &str) -> Result<(), String> {
        let (target, auth) = crate::addresses::check_target_credentials(text)?;
        self.target = Some(target);
        for flow in &mut self.flows {
            for_each_request_mut(&mut flow.steps, &mut |r| {
                if r.url.starts_with('/') {
                    r.auth = auth.clone();
                }
            });
        }
        Ok(())
    }

    /// Every request step of every flow, in order (inside loops and `once` blocks too).
    pub fn request_steps(&self) -> impl Iterator<Item = &RequestStep> {
        let mut out = Vec::new();
        for f in &self.flows {
            collect_requests(&f.steps, &mut out);
        }
        out.into_iter()
    }

    /// Every capture name, in order of first appearance: index `i` is `Var::Capture(i)`.
    pub fn capture_names(&self) -> Vec<String> {
        let mut seen = std::collections::HashSet::new();
        let mut names: Vec<String> = Vec::new();
        for f in &self.flows {
            for c in step_captures(&f.steps) {
                if seen.insert(c.name.as_str()) {
                    names.push(c.name.clone());
                }
            }
        }
        names
    }

    /// Every WebSocket step of every flow, in order (inside loops and `once` blocks too).
    pub fn ws_steps(&self) -> Vec<&crate::ws::WsStep> {
        let mut out = Vec::new();
        for f in &self.flows {
            collect_ws(&f.steps, &mut out);
        }
        out
    }
}

/// Calls `f` on every request step of a step list, depth first.
pub(crate) fn for_each_request_mut(steps: &mut [Step], f: &mut impl FnMut(&mut RequestStep)) {
    for s in steps {
        match s {
            Step::Request(r) => f(r),
            Step::Think(_) | Step::Ws(_) => {}
            Step::Loop { steps, .. } | Step::Once(steps) => for_each_request_mut(steps, f),
        }
    }
}

/// Request steps of a step list, depth first.
pub fn collect_requests<'a>(steps: &'a [Step], out: &mut Vec<&'a RequestStep>) {
    for s in steps {
        match s {
            Step::Request(r) => out.push(r),
            Step::Think(_) | Step::Ws(_) => {}
            Step::Loop { steps, .. } | Step::Once(steps) => collect_requests(steps, out),
        }
    }
}

/// WebSocket steps of a step list, depth first.
pub fn collect_ws<'a>(steps: &'a [Step], out: &mut Vec<&'a crate::ws::WsStep>) {
    for s in steps {
        match s {
            Step::Ws(w) => out.push(w),
            Step::Request(_) | Step::Think(_) => {}
            Step::Loop { steps, .. } | Step::Once(steps) => collect_ws(steps, out),
        }
    }
}

/// Every capture of a step list (requests' and WebSocket sessions'), in the order written.
pub fn step_captures(steps: &[Step]) -> Vec<&Capture> {
    let mut out = Vec::new();
    for s in steps {
        match s {
            Step::Request(r) => out.extend(r.captures.iter()),
            Step::Ws(w) => out.extend(w.captures()),
            Step::Think(_) => {}
            Step::Loop { steps, .. } | Step::Once(steps) => out.extend(step_captures(steps)),
        }
    }
    out
}
