//! What the monitor hands out: one timestamped [`Sample`] of named series per interval,
//! warnings about sources it cannot read, and at the end a [`MonitorReport`].

pub use loadlab_metrics::resources::{MonitorWarning, ProcessCpu, Sample};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What [`crate::MonitorHandle::stop`] returns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MonitorReport {
    /// Samples not drained before `stop`, plus the final one covering the last partial
    /// interval (when it was at least a tenth of an interval long).
    pub samples: Vec<Sample>,
    /// Every warning of the whole run, in order.
    pub warnings: Vec<MonitorWarning>,
    /// Kind of each Prometheus series (`prometheus.app.process_cpu_seconds_total` → counter),
    /// so reports can say "per second" for counters.
    pub prometheus_kinds: BTreeMap<String, MetricKind>,
    pub cost: MonitorCost,
}

/// How a Prometheus series was recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MetricKind {
    /// Recorded as read.
    Gauge,
    /// Recorded as its per-second rate over the interval.
    Counter,
}

/// The monitor's own cost: CPU time of its threads over its lifetime.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct MonitorCost {
    /// CPU time of the sampling thread and the Prometheus scraper threads.
    pub cpu_ms: f64,
    /// How long the monitor ran.
    pub wall_ms: f64,
    /// `cpu_ms / wall_ms × 100`: percent of one core.
    pub cpu_percent: f64,
    pub samples: u64,
}
