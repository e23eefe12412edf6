//! Per-second slices of a run, for live progress and the over-time charts.

use crate::histogram::{new_histogram, record_us, LatencyHistogram};
use crate::Outcome;

/// What a worker accumulates between two ticks.
#[derive(Debug, Clone)]
pub struct IntervalAccumulator {
    pub requests: u64,
    pub failed: u64,
    pub latency: LatencyHistogram,
}

impl IntervalAccumulator {
    pub fn new() -> Self {
        Self {
            requests: 0,
            failed: 0,
            latency: new_histogram(),
        }
    }

    #[inline]
    pub fn record(&mut self, o: &Outcome) {
        self.requests += 1;
        if o.error.is_some() {
            self.failed += 1;
        }
        record_us(&mut self.latency, o.latency_us);
    }

    /// Hands out what was accumulated since the last tick and starts afresh.
    pub fn take(&mut self, index: u32, active: u64) -> IntervalSnapshot {
        let snapshot = IntervalSnapshot {
            index,
            requests: self.requests,
            failed: self.failed,
            latency: self.latency.clone(),
            active,
        };
        self.requests = 0;
        self.failed = 0;
        self.latency.reset();
        snapshot
    }
}

impl Default for IntervalAccumulator {
    fn default() -> Self {
        Self::new()
    }
}

/// One worker's (or, merged, the whole run's) slice `index` (second `index` of the run).
#[derive(Debug, Clone)]
pub struct IntervalSnapshot {
    pub index: u32,
    pub requests: u64,
    pub failed: u64,
    pub latency: LatencyHistogram,
    /// Active VUs (closed) or requests in flight (open) at the tick.
    pub active: u64,
}

impl IntervalSnapshot {
    pub fn merge(&mut self, other: &IntervalSnapshot) {
        self.requests += other.requests;
        self.failed += other.failed;
        self.latency
            .add(&other.latency)
            .expect("same histogram bounds");
        self.active += other.active;
    }
}
