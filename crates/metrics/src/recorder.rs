//! Per-worker accumulation of outcomes into the current interval's delta (no locks: each
//! worker owns one), plus the gauges that outlive an interval (requests in flight).

use crate::delta::{DeltaPool, IntervalDelta, Reserve};
use crate::{ErrorKind, Outcome, Protocol};

/// Name, group, tags and checks of a request step, in scenario order.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct StepInfo {
    pub name: String,
    #[serde(default)]
    pub group: Option<String>,
    /// `key=value` labels from the scenario's `tags:`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// Each check as written (`status == 200`), in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub checks: Vec<String>,
}

/// Everything one worker measured since its last tick. Not shared: each worker owns one.
#[derive(Debug, Clone)]
pub struct Recorder {
    current: IntervalDelta,
    /// Requests sent and not yet recorded, per step.
    in_flight: Vec<u64>,
    /// Their sum, kept as they change (read on every request by the connection pool).
    in_flight_total: u64,
    /// Most requests in flight at once in this interval, and in the one before: idle
    /// connections are kept for that many, so a burst does not close and reopen them.
    peak_in_flight: u64,
    previous_peak_in_flight: u64,
    step_count: usize,
    /// The run stopped and its in-flight requests were counted: later outcomes are ignored,
    /// so nothing is counted twice.
    closed: bool,
    /// Where the next interval's delta comes from (histograms reused, not reallocated).
    pool: DeltaPool,
    /// The executor reports VUs becoming active ([`Recorder::vu_active`]): each interval
    /// keeps the most that were active at once.
    tracks_vus: bool,
}

impl Recorder {
    pub fn new(step_count: usize) -> Self {
        Self {
            current: IntervalDelta::new(step_count),
            in_flight: vec![0; step_count],
            in_flight_total: 0,
            peak_in_flight: 0,
            previous_peak_in_flight: 0,
            step_count,
            closed: false,
            pool: DeltaPool::new(),
            tracks_vus: false,
        }
    }

    /// A recorder whose intervals reuse the deltas handed back to `pool`.
    pub fn with_pool(step_count: usize, pool: DeltaPool) -> Self {
        Self {
            current: pool.take(step_count),
            pool,
            ..Self::new(step_count)
        }
    }

    /// Before the run: makes the histograms of its delta and of one spare in the pool, for
    /// the run and its first `steps` steps ([`IntervalDelta::reserve`]): the delta it records
    /// into first, and the one it takes at the first interval's end, when no delta has come
    /// back to the pool yet.
    pub fn reserve(&mut self, reserve: Reserve) {
        self.current.reserve(reserve);
        let mut spare = self.pool.take(self.current.steps.len());
        spare.reserve(reserve);
        self.pool.give(spare);
    }

    /// A request of `step` is about to be sent: it counts as in flight until recorded.
    #[inline]
    pub fn begin(&mut self, step: u16) {
        if self.closed {
            return;
        }
        self.in_flight[step as usize] += 1;
        self.in_flight_total += 1;
        self.peak_in_flight = self.peak_in_flight.max(self.in_flight_total);
    }

    /// Records a request that ended (answered or failed). Every `record` follows a `begin`.
    #[inline]
    pub fn record(&mut self, o: &Outcome) {
        if self.closed {
            return;
        }
        let index = o.step as usize;
        if self.in_flight[index] > 0 {
            self.in_flight[index] -= 1;
            self.in_flight_total -= 1;
        }
        let step = &mut self.current.steps[index];
        step.requests += 1;
        step.bytes_sent += o.bytes_sent;
        step.bytes_received += o.bytes_received;
        step.latency.record(o.latency_us);
        if o.status != 0 {
            step.service.record(o.service_us);
            step.phases.record(&o.phases);
            step.add_status(o.status, 1);
        }
        if let Some(kind) = o.error {
            step.failed += 1;
            step.errors[kind.index()] += 1;
        }
        if let Some(lag) = o.lag_us {
            step.lag.record(lag);
        }
        if let Some(server) = o.server_us {
            step.server.record(server);
        }
        if let Some(trace_id) = o.trace_id {
            step.exemplars.offer(crate::Exemplar {
                latency_us: o.latency_us,
                trace_id,
                at_ms: None,
            });
        }
    }

    /// Adds what a WebSocket session of `step` exchanged; `session_us` when it ended (its
    /// duration, upgrade to close).
    pub fn record_ws(&mut self, step: u16, counts: &crate::WsCounts, session_us: Option<u64>) {
        if self.closed {
            return;
        }
        let step = &mut self.current.steps[step as usize];
        step.ws.add(counts);
        if let Some(us) = session_us {
            step.session.record(us);
        }
    }

    /// Adds what a gRPC call of `step` exchanged (`counts`) and the status it ended with, if
    /// it got one (given apart, so a call's counters need no vector of their own);
    /// `first_message_us` for a server-streaming call that received a message (from the
    /// call's start, as its latency is measured, to the first message).
    pub fn record_grpc(
        &mut self,
        step: u16,
        counts: &crate::GrpcCounts,
        status: Option<crate::GrpcCode>,
        first_message_us: Option<u64>,
    ) {
        if self.closed {
            return;
        }
        let step = &mut self.current.steps[step as usize];
        step.grpc.add(counts);
        if let Some(code) = status {
            step.grpc.add_ending(code.as_u8(), 1);
        }
        if let Some(us) = first_message_us {
            step.first_message.record(us);
        }
    }

    /// Adds one streamed response of `step` (its times from the request's start, as its
    /// latency is measured) to the step's stream histograms and counters.
    pub fn record_stream(&mut self, step: u16, sample: &crate::StreamSample<'_>) {
        if self.closed {
            return;
        }
        let step = &mut self.current.steps[step as usize];
        step.stream.count(sample);
        step.stream_series.record(sample);
    }

    /// Counts one failure of check `check` of `step` (the request itself is recorded with
    /// kind `check_failed` by `record`).
    pub fn record_check_failure(&mut self, step: u16, check: usize) {
        self.current.steps[step as usize].add_check_failures(check, 1);
    }

    /// The pause probe's lateness for one tick (µs).
    pub fn record_pause(&mut self, us: u64) {
        self.current.pauses.record(us);
    }

    pub fn record_scheduler_lag(&mut self, us: u64) {
        self.current.scheduler_lag.record(us);
    }

    /// An iteration ran to its end, taking `duration_us` from its start.
    pub fn iteration_completed(&mut self, duration_us: u64) {
        self.current.iterations_completed += 1;
        self.current.iteration_duration.record(duration_us);
    }

    /// A VU became active: `active` of this worker's VUs are active now (closed model).
    pub fn vu_active(&mut self, active: u64) {
        self.tracks_vus = true;
        self.current.active_max = self.current.active_max.max(active);
    }

    pub fn iterations_dropped(&mut self, n: u64) {
        self.current.iterations_dropped += n;
    }

    pub fn delayed_by_max_in_flight(&mut self) {
        self.current.delayed_by_max_in_flight += 1;
    }

    /// A request waited for a free stream slot on the shared connections of its origin.
    pub fn delayed_by_stream_limit(&mut self) {
        self.current.delayed_by_stream_limit += 1;
    }

    /// A request waited for a connection: enough were already being opened to its origin.
    pub fn delayed_by_connect_limit(&mut self) {
        self.current.delayed_by_connect_limit += 1;
    }

    /// Connections to `origin` opened since the last call, by the protocol they spoke.
    pub fn connections_opened(&mut self, origin: u16, protocol: Protocol, n: u64) {
        self.current.note_connections(origin as usize, protocol, n);
    }

    pub fn data_refused(&mut self, set: usize) {
        self.current.note_data_refused(set, 1);
    }

    /// Keeps one example message per error kind and interval.
    pub fn note_error(&mut self, kind: ErrorKind, message: impl FnOnce() -> String) {
        self.current.note_error(kind, message);
    }

    pub fn in_flight(&self) -> u64 {
        self.in_flight_total
    }

    /// Most requests in flight at once over the last one to two intervals.
    pub fn recent_peak_in_flight(&self) -> u64 {
        self.peak_in_flight.max(self.previous_peak_in_flight)
    }

    /// The run stopped: requests still in flight are counted `interrupted` in the current
    /// interval (sent, never answered) instead of vanishing.
    pub fn abandon_in_flight(&mut self) {
        self.closed = true;
        for (step, n) in self.current.steps.iter_mut().zip(&mut self.in_flight) {
            if *n > 0 {
                step.add_interrupted(*n);
                *n = 0;
            }
        }
        self.in_flight_total = 0;
    }

    /// Hands out the interval measured since the last tick and starts the next one.
    pub fn take_interval(&mut self, active: u64, cpu_seconds: f64) -> IntervalDelta {
        let next = self.pool.take(self.step_count);
        let mut delta = std::mem::replace(&mut self.current, next);
        delta.active = active;
        if self.tracks_vus {
            // The VUs active now are the next interval's first peak.
            delta.active_max = delta.active_max.max(active);
            self.current.active_max = active;
        }
        delta.in_flight = self.in_flight();
        delta.cpu_seconds = cpu_seconds;
        self.previous_peak_in_flight = self.peak_in_flight;
        self.peak_in_flight = delta.in_flight;
        delta
    }

    /// The interval being measured (for tests and final checks).
    pub fn current(&self) -> &IntervalDelta {
        &self.current
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
            status,
            error: ErrorKind::from_status(status),
            ..Outcome::default()
        }
    }

    #[test]
    fn deltas_add_exactly() {
        let mut a = Recorder::new(2);
        let mut b = Recorder::new(2);
        let mut whole = Recorder::new(2);
        for i in 0..1000u64 {
            let o = outcome(
                (i % 2) as u16,
                1 + i % 97,
                if i % 10 == 0 { 500 } else { 200 },
            );
            whole.begin(o.step);
            whole.record(&o);
            let r = if i % 3 == 0 { &mut a } else { &mut b };
            r.begin(o.step);
            r.record(&o);
        }
        let mut merged = a.take_interval(0, 0.0);
        merged.add(&b.take_interval(0, 0.0));
        let whole = whole.take_interval(0, 0.0);
        assert_eq!(merged, whole);
        assert_eq!(merged.failed(), 100);
        assert_eq!(
            merged.steps[0].errors[ErrorKind::Http5xx.index()]
                + merged.steps[1].errors[ErrorKind::Http5xx.index()],
            100
        );
    }

    #[test]
    fn reserved_histograms_are_made_before_the_run_and_change_no_figure() {
        let pool = DeltaPool::new();
        let mut r = Recorder::with_pool(6, pool.clone());
        r.reserve(Reserve {
            steps: 4,
            tls: false,
        });
        let made = |d: &IntervalDelta, step: usize| {
            let s = &d.steps[step];
            [
                &s.latency,
                &s.service,
                &s.lag,
                &s.phases.connect,
                &s.phases.waiting,
                &s.phases.receiving,
            ]
            .iter()
            .all(|h| h.is_reserved())
        };
        assert!(made(r.current(), 0) && made(r.current(), 3));
        assert!(!made(r.current(), 4), "steps past the first 4 stay lazy");
        assert!(!r.current().steps[0].phases.tls_handshake.is_reserved());
        assert!(r.current().scheduler_lag.is_reserved());
        assert_eq!(
            r.current(),
            &IntervalDelta::new(6),
            "empty is empty, made or not"
        );
        r.begin(0);
        r.record(&outcome(0, 3, 200));
        let first = r.take_interval(0, 0.0);
        assert_eq!(first.steps[0].latency.len(), 1);
        // The delta taken at the first interval's end is the spare made before the run.
        assert!(made(r.current(), 0) && made(r.current(), 3));
    }

    #[test]
    fn pooled_deltas_are_reused_empty() {
        let pool = DeltaPool::new();
        let mut r = Recorder::with_pool(1, pool.clone());
        r.begin(0);
        r.record(&outcome(0, 3, 503));
        let first = r.take_interval(1, 0.5);
        assert_eq!(first.requests(), 1);
        pool.give(first);
        r.begin(0);
        r.record(&outcome(0, 7, 200));
        let _ = r.take_interval(1, 0.5); // the next current came from the pool
        let reused = r.take_interval(0, 0.0);
        assert_eq!(reused.requests(), 0);
        assert!(
            reused.steps[0].statuses.is_empty() && reused.steps[0].errors.iter().all(|&n| n == 0)
        );
        assert!(reused.steps[0].latency.is_empty(), "cleared");
        assert!(reused.steps[0].latency.is_reserved(), "its memory kept");
    }

    #[test]
    fn phases_iterations_and_peak_vus_are_kept_per_interval() {
        let mut r = Recorder::new(1);
        r.begin(0);
        r.record(&Outcome {
            phases: crate::Phases {
                connect_us: Some(80),
                tls_us: Some(400),
                waiting_us: Some(2_000),
                receiving_us: Some(100),
            },
            ..outcome(0, 3, 200)
        });
        // A request without a response has no phases (like no service time).
        r.begin(0);
        r.record(&Outcome {
            phases: crate::Phases {
                connect_us: Some(80),
                ..crate::Phases::default()
            },
            error: Some(ErrorKind::Timeout),
            ..outcome(0, 3, 0)
        });
        r.iteration_completed(5_000);
        r.iteration_completed(7_000);
        for active in [1, 2, 3] {
            r.vu_active(active);
        }
        let first = r.take_interval(2, 0.0);
        let phases = &first.steps[0].phases;
        assert_eq!((phases.connect.len(), phases.tls_handshake.len()), (1, 1));
        assert_eq!((phases.waiting.len(), phases.receiving.len()), (1, 1));
        assert_eq!(first.iteration_duration.len(), 2);
        assert_eq!(first.iterations_completed, 2);
        assert_eq!((first.active, first.active_max), (2, 3));
        let second = r.take_interval(2, 0.0);
        assert_eq!(second.active_max, 2, "the VUs still active count");
        assert!(second.iteration_duration.is_empty());
        let untracked = Recorder::new(1).take_interval(5, 0.0);
        assert_eq!(untracked.active_max, 0, "only executors that report VUs");
    }

    #[test]
    fn the_recent_peak_of_requests_in_flight_lasts_one_more_interval() {
        let mut r = Recorder::new(1);
        for _ in 0..5 {
            r.begin(0);
        }
        for _ in 0..4 {
            r.record(&outcome(0, 100, 200));
        }
        assert_eq!((r.in_flight(), r.recent_peak_in_flight()), (1, 5));
        r.take_interval(0, 0.0);
        assert_eq!(
            r.recent_peak_in_flight(),
            5,
            "kept through the next interval"
        );
        r.take_interval(0, 0.0);
        assert_eq!(r.recent_peak_in_flight(), 1, "then only what is in flight");
    }

    #[test]
    fn in_flight_requests_become_interrupted() {
        let mut r = Recorder::new(2);
        for _ in 0..5 {
            r.begin(1);
        }
        r.record(&outcome(1, 3, 200));
        assert_eq!(r.in_flight(), 4);
        let first = r.take_interval(1, 0.0);
        assert_eq!(first.in_flight, 4);
        r.abandon_in_flight();
        let last = r.take_interval(0, 0.0);
        assert_eq!(last.steps[1].requests, 4);
        assert_eq!(last.steps[1].errors[ErrorKind::Interrupted.index()], 4);
        assert!(
            last.steps[1].latency.is_empty(),
            "interrupted requests have no latency"
        );
        assert_eq!(r.in_flight(), 0);
        r.record(&outcome(1, 3, 200));
        assert_eq!(
            r.take_interval(0, 0.0).requests(),
            0,
            "an answer after the stop is not counted twice"
        );
    }
}
