//! One interval's resource readings as the monitor takes them and the run record keeps them:
//! a [`Sample`] of named series, the busiest other processes, and what could not be read.
//! Plain data, so that the record, its summary and merges need no sampling code.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::Duration;

/// The values of one interval, by series name (`host.cpu_percent`,
/// `processes.target.rss_bytes`, `prometheus.app.process_cpu_seconds_total`, ...).
///
/// Shares of CPU and rates are averages over the interval that ends at `elapsed_ms`;
/// gauges (memory, sockets, load) are read at its end. A series that could not be read in
/// this interval is absent from `values` and its source is listed in `missing`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    /// End of the interval, since the monitor started (in a run record: since the plan's
    /// t = 0, so that samples line up with the request intervals).
    pub elapsed_ms: u64,
    /// End of the interval, wall clock (milliseconds since the Unix epoch).
    pub unix_ms: u64,
    /// Length of the interval the CPU shares and rates were computed over.
    pub interval_ms: u64,
    pub values: BTreeMap<String, f64>,
    /// The busiest processes other than the generator and the monitored ones, by command
    /// name, busiest first (the "who else is using the CPU" of a contended host).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub top_processes: Vec<ProcessCpu>,
    /// Sources (`processes.target`, `prometheus.app`, `host.pressure`) with no value here.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing: Vec<String>,
    /// Problems first seen in this interval (each is reported once, not every interval).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<MonitorWarning>,
}

impl Sample {
    pub fn get(&self, series: &str) -> Option<f64> {
        self.values.get(series).copied()
    }

    pub fn elapsed(&self) -> Duration {
        Duration::from_millis(self.elapsed_ms)
    }
}

/// CPU used by the processes sharing one command name, in % of one core.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProcessCpu {
    /// The command name (`comm`, at most 15 characters), e.g. `stress-ng`, `java`.
    pub name: String,
    /// How many processes of that name used CPU in the interval.
    pub processes: u32,
    /// Percent of one core (200 = two full cores).
    pub cpu_percent: f64,
}

/// A source that could not be read: the run goes on, the series are marked missing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MonitorWarning {
    /// `processes.target`, `cgroups.db`, `prometheus.app`, `host.pressure`, ...
    pub source: String,
    pub message: String,
}

impl std::fmt::Display for MonitorWarning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "monitor: {}: {}", self.source, self.message)
    }
}
