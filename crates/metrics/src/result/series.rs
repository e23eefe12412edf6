//! The run's time series in `run.json`: per-slice figures (`intervals`), the windows of at
//! least [`WINDOW_REQUESTS`] requests the charts and windowed thresholds read, and a steered
//! run's stretches of constant load.

use crate::histogram::LatencyHistogram;
use serde::{Deserialize, Serialize};

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

impl IntervalStats {
    /// Measured (after the warm-up) and within a plan of `planned_duration_s`: the slices in
    /// which the offered load was the plan's, not the drain of what was in flight after it.
    pub fn within_plan(&self, planned_duration_s: f64) -> bool {
        !self.warmup && self.t + self.length_s <= planned_duration_s + 0.05
    }
}

fn one_second() -> f64 {
    1.0
}

/// A window closes once it holds this many requests (or a second, whichever comes first):
/// a short run's 100 ms slices at 30 requests/s hold 3 requests each, and their p95 and
/// rate would zigzag between nothing and twice the truth.
pub const WINDOW_REQUESTS: u64 = 20;

/// One window of [`RunResult::windows`].
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct WindowStats {
    /// Seconds since the start of the run (including warm-up) at the start of the window.
    pub t: f64,
    pub length_s: f64,
    pub warmup: bool,
    pub requests: u64,
    pub failed: u64,
    /// Requests per second over the window's length.
    pub rate: f64,
    /// Percentiles of the window's requests, from its slices' histograms merged.
    pub latency_ms: IntervalLatency,
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

/// A stretch of a steered run between two changes of its load, and what was measured in it:
/// the exploratory answer ("at 800/s p95 was 40 ms, at 1,200/s 900 ms").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadStretch {
    /// Seconds from the run's start.
    pub from_s: f64,
    pub to_s: f64,
    pub level: crate::steering::StretchLevel,
    /// The time the figures cover: the record's intervals wholly inside the stretch, after
    /// the warm-up. An interval in which the load changed belongs to no stretch: its requests
    /// were sent at two levels.
    pub measured_s: f64,
    pub requests: u64,
    pub failed: u64,
    /// Requests per second of `measured_s`.
    pub rate: f64,
    /// Percentiles of the stretch's requests, from its intervals' histograms merged.
    pub latency_ms: IntervalLatency,
}
