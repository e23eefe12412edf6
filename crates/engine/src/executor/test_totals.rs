//! Test support: every interval a worker handed over, added up, with full histograms so
//! assertions read like the whole run's figures.

use super::Tick;
use loadlab_metrics::{ErrorKind, IntervalDelta, LatencyHistogram};
use std::sync::mpsc::Receiver;

pub struct StepTotals {
    pub requests: u64,
    pub failed: u64,
    pub errors: [u64; ErrorKind::COUNT],
    pub check_failures: Vec<u64>,
    pub latency: LatencyHistogram,
    pub service: LatencyHistogram,
    pub waiting: LatencyHistogram,
    pub receiving: LatencyHistogram,
}

pub struct Totals {
    pub steps: Vec<StepTotals>,
    /// Send lag of every step.
    pub lag: LatencyHistogram,
    /// How late the scheduler itself woke (the generator's health).
    pub scheduler_lag: LatencyHistogram,
    pub iterations_completed: u64,
    pub iteration_duration: LatencyHistogram,
    /// The most VUs active at once in any interval.
    pub vus_max: u64,
    pub iterations_dropped: u64,
    pub delayed_by_max_in_flight: u64,
    pub delayed_by_connect_limit: u64,
    pub data_refused: Vec<u64>,
    pub error_examples: Vec<(ErrorKind, String)>,
}

pub fn totals(ticks: &Receiver<Tick>) -> Totals {
    let mut all = IntervalDelta::default();
    let mut vus_max = 0;
    while let Ok(t) = ticks.try_recv() {
        vus_max = vus_max.max(t.delta.active_max);
        all.add(&t.delta);
    }
    let mut lag = loadlab_metrics::LazyHistogram::new();
    for s in &all.steps {
        lag.add(&s.lag);
    }
    Totals {
        steps: all
            .steps
            .iter()
            .map(|s| StepTotals {
                requests: s.requests,
                failed: s.failed,
                errors: s.errors.0,
                check_failures: s.check_failures.clone(),
                latency: s.latency.to_histogram(),
                service: s.service.to_histogram(),
                waiting: s.phases.waiting.to_histogram(),
                receiving: s.phases.receiving.to_histogram(),
            })
            .collect(),
        lag: lag.to_histogram(),
        scheduler_lag: all.scheduler_lag.to_histogram(),
        iterations_completed: all.iterations_completed,
        iteration_duration: all.iteration_duration.to_histogram(),
        vus_max,
        iterations_dropped: all.iterations_dropped,
        delayed_by_max_in_flight: all.delayed_by_max_in_flight,
        delayed_by_connect_limit: all.delayed_by_connect_limit,
        data_refused: all.data_refused,
        error_examples: all.error_examples,
    }
}
