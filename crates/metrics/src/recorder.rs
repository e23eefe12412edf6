//! Per-worker accumulation of outcomes: histograms and counters, merged exactly at the end.

use crate::histogram::{new_histogram, record_us, LatencyHistogram};
use crate::interval::IntervalAccumulator;
use crate::{ErrorKind, Outcome};

/// Name and group of a request step, in scenario order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepInfo {
    pub name: String,
    pub group: Option<String>,
}

/// Statistics of one request step.
#[derive(Debug, Clone)]
pub struct StepRecorder {
    pub latency: LatencyHistogram,
    pub service: LatencyHistogram,
    pub requests: u64,
    pub failed: u64,
    pub errors: [u64; ErrorKind::ALL.len()],
    /// (status, count); few distinct codes, so a small vector beats a map.
    pub statuses: Vec<(u16, u64)>,
    /// Failures of the step's checks, by check index (empty until one fails).
    pub check_failures: Vec<u64>,
}

impl StepRecorder {
    fn new() -> Self {
        Self {
            latency: new_histogram(),
            service: new_histogram(),
            requests: 0,
            failed: 0,
            errors: [0; ErrorKind::ALL.len()],
            statuses: Vec::new(),
            check_failures: Vec::new(),
        }
    }

    fn merge(&mut self, other: &StepRecorder) {
        self.latency
            .add(&other.latency)
            .expect("same histogram bounds");
        self.service
            .add(&other.service)
            .expect("same histogram bounds");
        self.requests += other.requests;
        self.failed += other.failed;
        for (a, b) in self.errors.iter_mut().zip(other.errors) {
            *a += b;
        }
        for &(status, count) in &other.statuses {
            add_status(&mut self.statuses, status, count);
        }
        for (i, &n) in other.check_failures.iter().enumerate() {
            add_check_failures(&mut self.check_failures, i, n);
        }
    }
}

fn add_check_failures(counts: &mut Vec<u64>, check: usize, n: u64) {
    if counts.len() <= check {
        counts.resize(check + 1, 0);
    }
    counts[check] += n;
}

fn add_status(statuses: &mut Vec<(u16, u64)>, status: u16, count: u64) {
    match statuses.iter_mut().find(|(s, _)| *s == status) {
        Some((_, c)) => *c += count,
        None => statuses.push((status, count)),
    }
}

/// Everything one worker measured. Not shared: each worker owns one, merged at the end.
#[derive(Debug, Clone)]
pub struct Recorder {
    pub steps: Vec<StepRecorder>,
    /// sent − intended (open model and burst).
    pub lag: LatencyHistogram,
    /// How late the scheduler woke for an arrival (generator health, excludes waits for capacity).
    pub scheduler_lag: LatencyHistogram,
    pub warmup_requests: u64,
    pub iterations_completed: u64,
    pub iterations_dropped: u64,
    /// Arrivals that waited for a free slot because `max_in_flight` was reached.
    pub delayed_by_max_in_flight: u64,
    pub interval: IntervalAccumulator,
    /// The first error message seen per kind, to show the user a real example.
    pub error_examples: Vec<(ErrorKind, String)>,
}

impl Recorder {
    pub fn new(step_count: usize) -> Self {
        Self {
            steps: (0..step_count).map(|_| StepRecorder::new()).collect(),
            lag: new_histogram(),
            scheduler_lag: new_histogram(),
            warmup_requests: 0,
            iterations_completed: 0,
            iterations_dropped: 0,
            delayed_by_max_in_flight: 0,
            interval: IntervalAccumulator::new(),
            error_examples: Vec::new(),
        }
    }

    #[inline]
    pub fn record(&mut self, o: &Outcome) {
        self.interval.record(o);
        if o.warmup {
            self.warmup_requests += 1;
            return;
        }
        let step = &mut self.steps[o.step as usize];
        step.requests += 1;
        record_us(&mut step.latency, o.latency_us);
        if o.status != 0 {
            record_us(&mut step.service, o.service_us);
            match step.statuses.iter_mut().find(|(s, _)| *s == o.status) {
                Some((_, c)) => *c += 1,
                None => step.statuses.push((o.status, 1)),
            }
        }
        if let Some(kind) = o.error {
            step.failed += 1;
            step.errors[kind.index()] += 1;
        }
        if let Some(lag) = o.lag_us {
            record_us(&mut self.lag, lag);
        }
    }

    /// Counts one failure of check `check` of `step` (outside warm-up; the request itself is
    /// recorded with kind `check_failed` by `record`).
    pub fn record_check_failure(&mut self, step: u16, check: usize, warmup: bool) {
        if !warmup {
            add_check_failures(&mut self.steps[step as usize].check_failures, check, 1);
        }
    }

    pub fn record_scheduler_lag(&mut self, us: u64) {
        record_us(&mut self.scheduler_lag, us);
    }

    /// Keeps one example message per error kind.
    pub fn note_error(&mut self, kind: ErrorKind, message: impl FnOnce() -> String) {
        if !self.error_examples.iter().any(|(k, _)| *k == kind) {
            self.error_examples.push((kind, message()));
        }
    }

    pub fn merge(&mut self, other: &Recorder) {
        for (a, b) in self.steps.iter_mut().zip(&other.steps) {
            a.merge(b);
        }
        self.lag.add(&other.lag).expect("same histogram bounds");
        self.scheduler_lag
            .add(&other.scheduler_lag)
            .expect("same histogram bounds");
        self.warmup_requests += other.warmup_requests;
        self.iterations_completed += other.iterations_completed;
        self.iterations_dropped += other.iterations_dropped;
        self.delayed_by_max_in_flight += other.delayed_by_max_in_flight;
        for (kind, msg) in &other.error_examples {
            self.note_error(*kind, || msg.clone());
        }
    }

    pub fn total_requests(&self) -> u64 {
        self.steps.iter().map(|s| s.requests).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(step: u16, ms: u64, status: u16) -> Outcome {
        Outcome {
            step,
            latency_us: ms * 1000,
            service_us: ms * 1000,
            lag_us: None,
            status,
            error: ErrorKind::from_status(status),
            warmup: false,
        }
    }

    #[test]
    fn merge_is_exact() {
        let mut a = Recorder::new(2);
        let mut b = Recorder::new(2);
        let mut whole = Recorder::new(2);
        for i in 0..1000u64 {
            let o = outcome(
                (i % 2) as u16,
                1 + i % 97,
                if i % 10 == 0 { 500 } else { 200 },
            );
            whole.record(&o);
            if i % 3 == 0 {
                a.record(&o)
            } else {
                b.record(&o)
            }
        }
        a.merge(&b);
        for s in 0..2 {
            assert_eq!(a.steps[s].requests, whole.steps[s].requests);
            assert_eq!(a.steps[s].failed, whole.steps[s].failed);
            assert_eq!(a.steps[s].latency, whole.steps[s].latency);
        }
        assert_eq!(a.steps[0].failed + a.steps[1].failed, 100);
        assert_eq!(
            a.steps[0].errors[ErrorKind::Http5xx.index()]
                + a.steps[1].errors[ErrorKind::Http5xx.index()],
            100
        );
    }

    #[test]
    fn warmup_is_counted_not_measured() {
        let mut r = Recorder::new(1);
        let mut o = outcome(0, 5, 200);
        o.warmup = true;
        r.record(&o);
        assert_eq!(r.warmup_requests, 1);
        assert_eq!(r.total_requests(), 0);
        assert_eq!(r.steps[0].latency.len(), 0);
    }
}
