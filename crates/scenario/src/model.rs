//! The resolved scenario: what the engine runs, after parsing, defaults and validation.

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
    /// Base URL that relative step paths are joined to.
    pub target: Option<String>,
    pub defaults: Defaults,
    pub load: Load,
    /// Recorded, but excluded from statistics and thresholds.
    pub warmup: Duration,
    pub thresholds: Vec<Threshold>,
    pub flows: Vec<Flow>,
    pub connections: ConnectionPolicy,
    /// Local addresses connections are spread over (empty: let the OS choose).
    pub source_addresses: Vec<IpAddr>,
    /// Skip TLS certificate verification.
    pub insecure: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Defaults {
    pub timeout: Duration,
    pub headers: Vec<(String, String)>,
    pub max_body: u64,
}

impl Default for Defaults {
    fn default() -> Self {
        Self {
            timeout: DEFAULT_TIMEOUT,
            headers: Vec::new(),
            max_body: DEFAULT_MAX_BODY,
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

#[derive(Debug, Clone, PartialEq)]
pub struct Flow {
    pub name: String,
    pub weight: u32,
    pub steps: Vec<Step>,
}

/// One thing a virtual user does. New kinds (loops, captures...) are added as variants.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    Request(Box<RequestStep>),
    Think(ThinkTime),
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ThinkTime {
    pub min: Duration,
    pub max: Duration,
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
}

#[derive(Debug, Clone, PartialEq)]
pub enum Body {
    Json(serde_json::Value),
    Text(String),
}

#[derive(Debug, Clone, PartialEq)]
pub enum Load {
    Closed(ClosedLoad),
    Open(OpenLoad),
    Burst(BurstLoad),
}

impl Load {
    pub fn model_name(&self) -> &'static str {
        match self {
            Load::Closed(_) => "closed",
            Load::Open(_) => "open",
            Load::Burst(_) => "burst",
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
    /// Stop after this many arrivals (for `--requests`).
    pub max_arrivals: Option<u64>,
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
    /// Every request step of every flow, in order: (flow index, step).
    pub fn request_steps(&self) -> impl Iterator<Item = &RequestStep> {
        self.flows.iter().flat_map(|f| {
            f.steps.iter().filter_map(|s| match s {
                Step::Request(r) => Some(r.as_ref()),
                Step::Think(_) => None,
            })
        })
    }
}
