//! Which metric a statistic or a verdict is about ([`MetricId`]), with its unit and the
//! direction that is good for it, as a type shared by analysis, store and report: nothing
//! downstream decides by matching a metric's name.
//!
//! A metric is written as in `study.json` (`latency_ms.p95`, `steps.signin.latency_ms.p99`,
//! `groups.auth.errors.rate`); the threshold spelling (`latency.p95`, `step.signin.latency.p99`,
//! `group.auth.errors`) is accepted as input too and read as the same metric.

use crate::verdict::Verdict;
use serde::{Deserialize, Serialize};
use std::fmt;

/// Which way a metric should move.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GoodDirection {
    /// Latency, errors.
    Lower,
    /// Throughput, completed requests and iterations.
    Higher,
}

/// The unit a metric's values are in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MetricUnit {
    Millis,
    PerSecond,
    /// 0–1 (error rate).
    Fraction,
    Count,
    /// Percent (a resource series: CPU in % of one core, memory used %).
    Percent,
    /// Bytes (RSS, memory).
    Bytes,
    /// Bytes per second (network and disk rates).
    BytesPerSecond,
    /// CPU seconds per second, i.e. cores busy (the rate of a Prometheus
    /// `…cpu_seconds_total` counter); shown as % of one core like a process's CPU.
    Cores,
    /// Any other resource series (a load average, a Prometheus gauge or rate).
    Plain,
}

/// The unit of a resource series, from the naming conventions its sources follow (the
/// monitor's `_percent`, `_bytes`, `_bytes_per_s`; Prometheus's `_cpu_seconds_total`, read
/// as a rate). The one place that reads units from names: tables, charts and comparisons
/// all ask it.
pub fn series_unit(series: &str) -> MetricUnit {
    if series.ends_with("_bytes_per_s") {
        MetricUnit::BytesPerSecond
    } else if series.ends_with("_percent") {
        MetricUnit::Percent
    } else if series.ends_with("_bytes") {
        MetricUnit::Bytes
    } else if series.starts_with("prometheus.") && series.ends_with("cpu_seconds_total") {
        MetricUnit::Cores
    } else {
        MetricUnit::Plain
    }
}

/// One statistic of a latency histogram.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LatencyStat {
    Min,
    Mean,
    P50,
    P90,
    P95,
    P99,
    P999,
    Max,
}

/// A percentile stands on at least this many samples beyond it: p99 needs 1,000 requests.
/// With fewer it is close to the maximum, and no conclusion is drawn from it.
pub const MIN_SAMPLES_BEYOND: f64 = 10.0;

/// Whether the `q` percentile (0.99 for p99) of `count` samples rests on fewer than
/// [`MIN_SAMPLES_BEYOND`] samples beyond it.
pub fn thin_percentile(count: u64, q: f64) -> bool {
    (count as f64) * (1.0 - q) < MIN_SAMPLES_BEYOND
}

impl LatencyStat {
    /// The quantile of a percentile statistic (`P99` → 0.99); `None` for min, mean, max.
    pub fn quantile(self) -> Option<f64> {
        match self {
            LatencyStat::P50 => Some(0.5),
            LatencyStat::P90 => Some(0.9),
            LatencyStat::P95 => Some(0.95),
            LatencyStat::P99 => Some(0.99),
            LatencyStat::P999 => Some(0.999),
            LatencyStat::Min | LatencyStat::Mean | LatencyStat::Max => None,
        }
    }

    pub const ALL: [LatencyStat; 8] = [
        LatencyStat::Min,
        LatencyStat::Mean,
        LatencyStat::P50,
        LatencyStat::P90,
        LatencyStat::P95,
        LatencyStat::P99,
        LatencyStat::P999,
        LatencyStat::Max,
    ];

    /// The statistics shown in tables: all but p99.9 (too few requests per run for most).
    pub fn tabulated() -> impl Iterator<Item = LatencyStat> {
        Self::ALL.into_iter().filter(|s| *s != LatencyStat::P999)
    }

    /// The field name in the run JSON's `LatencySummary`.
    pub fn as_str(self) -> &'static str {
        match self {
            LatencyStat::Min => "min",
            LatencyStat::Mean => "mean",
            LatencyStat::P50 => "p50",
            LatencyStat::P90 => "p90",
            LatencyStat::P95 => "p95",
            LatencyStat::P99 => "p99",
            LatencyStat::P999 => "p999",
            LatencyStat::Max => "max",
        }
    }

    fn parse(s: &str) -> Option<LatencyStat> {
        Some(match s {
            "min" => LatencyStat::Min,
            "mean" | "avg" => LatencyStat::Mean,
            "p50" | "median" => LatencyStat::P50,
            "p90" => LatencyStat::P90,
            "p95" => LatencyStat::P95,
            "p99" => LatencyStat::P99,
            "p999" | "p99.9" => LatencyStat::P999,
            "max" => LatencyStat::Max,
            _ => return None,
        })
    }

    /// `p95`, `mean`, `p99.9` (as people say it).
    pub fn label(self) -> &'static str {
        match self {
            LatencyStat::P999 => "p99.9",
            s => s.as_str(),
        }
    }
}

/// What is measured, independent of the scope it is measured in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Quantity {
    /// Completed requests per second of measured time (`requests.rate`).
    Throughput,
    /// Completed requests (`requests.total`).
    Requests,
    /// Completed iterations of the flows (`iterations.completed`, run scope only).
    Iterations,
    /// Failed / total requests (`errors.rate`).
    ErrorRate,
    /// Failed requests (`errors.count`).
    Errors,
    /// A statistic of the latency histogram (`latency_ms.p95`).
    Latency(LatencyStat),
    /// Closed model: a statistic of the latency compensated for coordinated omission
    /// (`latency_compensated_ms.p95`; see `compensation`).
    CompensatedLatency(LatencyStat),
    /// The mean of a resource series over the steady window (`resources.host.cpu_percent`).
    ResourceMean,
    /// Its largest sample (`resources.processes.target.rss_bytes.max`).
    ResourceMax,
    /// A statistic of a streamed-response time (`stream.ttft_ms.p95`).
    Stream(crate::StreamTime, LatencyStat),
    /// Output tokens of streamed responses per second (`stream.output_tokens_per_s`).
    TokensPerS,
    /// Streams meeting every objective, per second (`stream.goodput_per_s`).
    Goodput,
}

impl Quantity {
    /// Every quantity, in table order.
    pub fn all() -> Vec<Quantity> {
        let mut q = vec![
            Quantity::Throughput,
            Quantity::Requests,
            Quantity::Iterations,
            Quantity::ErrorRate,
            Quantity::Errors,
        ];
        q.extend(LatencyStat::ALL.iter().map(|s| Quantity::Latency(*s)));
        q.extend(
            LatencyStat::ALL
                .iter()
                .map(|s| Quantity::CompensatedLatency(*s)),
        );
        for t in crate::StreamTime::ALL {
            q.extend(LatencyStat::ALL.iter().map(|s| Quantity::Stream(t, *s)));
        }
        q.extend([Quantity::TokensPerS, Quantity::Goodput]);
        q
    }

    /// The canonical name, as in `study.json`.
    pub fn name(self) -> String {
        match self {
            Quantity::Throughput => "requests.rate".into(),
            Quantity::Requests => "requests.total".into(),
            Quantity::Iterations => "iterations.completed".into(),
            Quantity::ErrorRate => "errors.rate".into(),
            Quantity::Errors => "errors.count".into(),
            Quantity::Latency(s) => format!("latency_ms.{}", s.as_str()),
            Quantity::CompensatedLatency(s) => format!("latency_compensated_ms.{}", s.as_str()),
            Quantity::ResourceMean => "mean".into(),
            Quantity::ResourceMax => "max".into(),
            Quantity::Stream(t, s) => format!("stream.{}_ms.{}", t.as_str(), s.as_str()),
            Quantity::TokensPerS => "stream.output_tokens_per_s".into(),
            Quantity::Goodput => "stream.goodput_per_s".into(),
        }
    }

    /// Every spelling accepted for this quantity (canonical first).
    fn spellings(self) -> Vec<String> {
        let mut v = vec![self.name()];
        match self {
            Quantity::Throughput => v.extend(["throughput".into(), "rps".into(), "rate".into()]),
            Quantity::Requests => v.extend(["requests".into(), "requests.count".into()]),
            Quantity::Iterations => v.push("iterations".into()),
            Quantity::ErrorRate => v.extend([
                "errors".into(),
                "http.errors".into(),
                "error_rate".into(),
                "http.error_rate".into(),
            ]),
            Quantity::Errors => v.extend(["failed".into(), "errors.total".into()]),
            Quantity::Latency(s) => {
                for prefix in ["latency_ms.", "latency."] {
                    for alias in ["avg", "median", "p99.9"] {
                        if LatencyStat::parse(alias) == Some(s) {
                            v.push(format!("{prefix}{alias}"));
                        }
                    }
                }
                v.push(format!("latency.{}", s.as_str()));
                // `--metric p95`, as the help's list of defaults names them.
                if s.as_str().starts_with('p') {
                    v.push(s.as_str().to_string());
                }
            }
            Quantity::CompensatedLatency(s) => {
                v.push(format!("latency_compensated.{}", s.as_str()));
                if s == LatencyStat::P999 {
                    v.push("latency_compensated.p99.9".into());
                }
            }
            Quantity::ResourceMean | Quantity::ResourceMax => {}
            // The threshold spellings: `stream.ttft.p95`, `stream.tokens_per_s`, `stream.goodput`.
            Quantity::Stream(t, s) => v.push(format!("stream.{}.{}", t.as_str(), s.as_str())),
            Quantity::TokensPerS => v.push("stream.tokens_per_s".into()),
            Quantity::Goodput => v.push("stream.goodput".into()),
        }
        v
    }

    pub fn good_direction(self) -> GoodDirection {
        match self {
            Quantity::Throughput
            | Quantity::Requests
            | Quantity::Iterations
            | Quantity::TokensPerS
            | Quantity::Goodput => GoodDirection::Higher,
            // Using less CPU and memory for the same work is better.
            Quantity::ErrorRate
            | Quantity::Errors
            | Quantity::Latency(_)
            | Quantity::CompensatedLatency(_)
            | Quantity::Stream(..)
            | Quantity::ResourceMean
            | Quantity::ResourceMax => GoodDirection::Lower,
        }
    }

    pub fn unit(self) -> MetricUnit {
        match self {
            Quantity::Throughput => MetricUnit::PerSecond,
            Quantity::Requests | Quantity::Iterations | Quantity::Errors => MetricUnit::Count,
            Quantity::ErrorRate => MetricUnit::Fraction,
            Quantity::Latency(_) | Quantity::CompensatedLatency(_) | Quantity::Stream(..) => {
                MetricUnit::Millis
            }
            Quantity::TokensPerS | Quantity::Goodput => MetricUnit::PerSecond,
            Quantity::ResourceMean | Quantity::ResourceMax => MetricUnit::Plain,
        }
    }

    /// `p95 latency`, `throughput`, `error rate`.
    pub fn label(self) -> String {
        match self {
            Quantity::Throughput => "throughput".into(),
            Quantity::Requests => "requests".into(),
            Quantity::Iterations => "iterations".into(),
            Quantity::ErrorRate => "error rate".into(),
            Quantity::Errors => "errors".into(),
            Quantity::Latency(s) => format!("{} latency", s.label()),
            Quantity::CompensatedLatency(s) => format!("{} compensated latency", s.label()),
            Quantity::ResourceMean => "mean".into(),
            Quantity::ResourceMax => "max".into(),
            Quantity::Stream(t, s) => format!("{} {}", s.label(), t.label()),
            Quantity::TokensPerS => "output tokens/s".into(),
            Quantity::Goodput => "goodput".into(),
        }
    }
}

/// Where a metric is measured: the whole run, one group of steps, or one step.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Scope {
    Run,
    Group(String),
    Step(String),
    /// A resource series by its full name (`processes.target.cpu_percent`).
    Resource(String),
}

/// Sources a resource series name starts with, and the shorter spellings accepted for them.
const RESOURCE_SOURCES: [(&str, &str); 7] = [
    ("host.", "host."),
    ("generator.", "generator."),
    ("processes.", "processes."),
    ("process.", "processes."),
    ("cgroups.", "cgroups."),
    ("cgroup.", "cgroups."),
    ("prometheus.", "prometheus."),
];

/// A metric of a run: a quantity in a scope, e.g. p99 latency of step `signin`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct MetricId {
    pub scope: Scope,
    pub quantity: Quantity,
}

/// A metric name that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MetricNameError {
    #[error("unknown metric `{0}`")]
    Unknown(String),
    #[error("`{0}`: iterations are counted for the whole run only (write `iterations.completed`)")]
    ScopedIterations(String),
    #[error("`{0}`: the step or group name is empty")]
    EmptyName(String),
}

impl MetricId {
    pub fn run(quantity: Quantity) -> Self {
        Self {
            scope: Scope::Run,
            quantity,
        }
    }

    pub fn group(name: &str, quantity: Quantity) -> Self {
        Self {
            scope: Scope::Group(name.to_string()),
            quantity,
        }
    }

    pub fn step(name: &str, quantity: Quantity) -> Self {
        Self {
            scope: Scope::Step(name.to_string()),
            quantity,
        }
    }

    pub fn latency(stat: LatencyStat) -> Self {
        Self::run(Quantity::Latency(stat))
    }

    /// The mean (or max) of a resource series, e.g. `processes.target.cpu_percent`.
    pub fn resource(series: &str, max: bool) -> Self {
        Self {
            scope: Scope::Resource(series.to_string()),
            quantity: if max {
                Quantity::ResourceMax
            } else {
                Quantity::ResourceMean
            },
        }
    }

    /// The resource series it reads, if it is one.
    pub fn resource_series(&self) -> Option<&str> {
        match &self.scope {
            Scope::Resource(s) => Some(s),
            _ => None,
        }
    }

    pub fn good_direction(&self) -> GoodDirection {
        self.quantity.good_direction()
    }

    pub fn unit(&self) -> MetricUnit {
        match &self.scope {
            Scope::Resource(series) => series_unit(series),
            _ => self.quantity.unit(),
        }
    }

    /// A time: a change reads `slower`/`faster` (request latency and stream times).
    pub fn is_latency(&self) -> bool {
        matches!(self.quantity, Quantity::Latency(_) | Quantity::Stream(..))
    }

    /// The verdict for a significant change in the given direction (`increase`: the variant's
    /// values are larger): latency reads `slower`/`faster`, everything else `worse`/`better`.
    pub fn verdict_for(&self, increase: bool) -> Verdict {
        let bad = match self.good_direction() {
            GoodDirection::Lower => increase,
            GoodDirection::Higher => !increase,
        };
        match (self.is_latency(), bad) {
            (true, true) => Verdict::Slower,
            (true, false) => Verdict::Faster,
            (false, true) => Verdict::Worse,
            (false, false) => Verdict::Better,
        }
    }

    /// `p95 latency`, `p99 latency of step `signin``, `error rate of group `auth``.
    pub fn label(&self) -> String {
        match &self.scope {
            Scope::Resource(series) => format!("{} {series}", self.quantity.label()),
            Scope::Run => self.quantity.label(),
            Scope::Group(g) => format!("{} of group `{g}`", self.quantity.label()),
            Scope::Step(s) => format!("{} of step `{s}`", self.quantity.label()),
        }
    }

    /// The step or group name, if any.
    pub fn scope_name(&self) -> Option<&str> {
        match &self.scope {
            Scope::Run | Scope::Resource(_) => None,
            Scope::Group(n) | Scope::Step(n) => Some(n),
        }
    }
}

impl fmt::Display for MetricId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.scope {
            Scope::Run => write!(f, "{}", self.quantity.name()),
            Scope::Group(g) => write!(f, "groups.{g}.{}", self.quantity.name()),
            Scope::Step(s) => write!(f, "steps.{s}.{}", self.quantity.name()),
            Scope::Resource(series) if self.quantity == Quantity::ResourceMax => {
                write!(f, "resources.{series}.max")
            }
            Scope::Resource(series) => write!(f, "resources.{series}"),
        }
    }
}

mod parse;
#[cfg(test)]
mod tests;
