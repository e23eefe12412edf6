//! What happened during one interval (one second, usually), per request step: histograms and
//! counters that add exactly. A worker hands one over at every tick; the coordinator adds the
//! workers' together, streams the sum to the run record, and folds it into the summary.

use crate::histogram::LazyHistogram;
use crate::Exemplars;
use crate::PhaseHistograms;
use crate::{ErrorKind, Protocol};

/// Adds `n` to `key`'s count in `counts`, kept sorted by key (few distinct keys — statuses,
/// close codes — so a small vector beats a map, and equal counts compare equal).
pub(crate) fn add_sorted<K: Ord + Copy>(counts: &mut Vec<(K, u64)>, key: K, n: u64) {
    match counts.binary_search_by_key(&key, |&(k, _)| k) {
        Ok(i) => counts[i].1 += n,
        Err(i) => counts.insert(i, (key, n)),
    }
}

/// One request step's share of an interval.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StepDelta {
    /// Requests that ended in the interval: answered, failed, or interrupted.
    pub requests: u64,
    /// Of those, the ones that failed (any error kind, `interrupted` included).
    pub failed: u64,
    /// Per error kind (index `ErrorKind::index`).
    pub errors: crate::ErrorCounts,
    /// (status, count); few distinct codes, so a small vector beats a map.
    pub statuses: Vec<(u16, u64)>,
    /// Failures by check index (empty until one fails).
    pub check_failures: Vec<u64>,
    pub bytes_sent: u64,
    pub bytes_received: u64,
    /// done − intended (open model, burst, first request of an iteration) or done − sent.
    pub latency: LazyHistogram,
    /// done − sent, for requests that got a response.
    pub service: LazyHistogram,
    /// sent − intended, for requests that had an intended time.
    pub lag: LazyHistogram,
    /// What the server said it spent (`Server-Timing` or a configured header).
    pub server: LazyHistogram,
    /// The slowest traced requests (with `defaults.trace: true`).
    pub exemplars: Exemplars,
    /// Connect, TLS handshake, waiting and receiving, for requests that got a response.
    pub phases: PhaseHistograms,
    /// WebSocket sessions of the step: messages, their bytes, close codes.
    pub ws: crate::WsCounts,
    /// How long WebSocket sessions lasted, upgrade to close.
    pub session: LazyHistogram,
    /// gRPC calls of the step: statuses, messages and their bytes.
    pub grpc: crate::GrpcCounts,
    /// Server-streaming gRPC calls: from the call's start to its first response message.
    pub first_message: LazyHistogram,
    /// Streamed responses (`stream:`): streams, events, tokens, goodput.
    pub stream: crate::StreamCounts,
    /// Streamed responses: TTFT, ITL, TPOT, E2E and events per stream.
    pub stream_series: crate::StreamSeries,
}

/// Which histograms a worker makes before the run ([`IntervalDelta::reserve`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reserve {
    /// The first this many steps' (each costs ~1.2 MB a delta).
    pub steps: usize,
    /// Their TLS handshake's too: the scenario has an https origin.
    pub tls: bool,
}

impl StepDelta {
    pub fn is_empty(&self) -> bool {
        self.requests == 0
            && self.bytes_sent == 0
            && self.check_failures.iter().all(|&n| n == 0)
            && self.ws.is_empty()
            && self.grpc.is_empty()
            && self.stream.is_empty()
    }

    pub fn add(&mut self, other: &StepDelta) {
        self.add_counters(other);
        self.latency.add(&other.latency);
        self.service.add(&other.service);
        self.lag.add(&other.lag);
        self.server.add(&other.server);
        self.exemplars.add(&other.exemplars);
        self.phases.add(&other.phases);
        self.session.add(&other.session);
        self.first_message.add(&other.first_message);
        self.stream_series.add(&other.stream_series);
    }

    /// Adds the counters of `other` but none of its histograms.
    pub fn add_counters(&mut self, other: &StepDelta) {
        self.requests += other.requests;
        self.failed += other.failed;
        for (a, b) in self.errors.iter_mut().zip(other.errors.0) {
            *a += b;
        }
        for &(status, n) in &other.statuses {
            self.add_status(status, n);
        }
        for (i, &n) in other.check_failures.iter().enumerate() {
            self.add_check_failures(i, n);
        }
        self.bytes_sent += other.bytes_sent;
        self.bytes_received += other.bytes_received;
        self.ws.add(&other.ws);
        self.grpc.add(&other.grpc);
        self.stream.add(&other.stream);
    }

    /// Adds `n` responses of `status` (kept sorted by status, so equal deltas compare equal).
    pub fn add_status(&mut self, status: u16, n: u64) {
        add_sorted(&mut self.statuses, status, n);
    }

    pub fn add_check_failures(&mut self, check: usize, n: u64) {
        if self.check_failures.len() <= check {
            self.check_failures.resize(check + 1, 0);
        }
        self.check_failures[check] += n;
    }

    /// Makes the histograms every request of the step records into, and the connect
    /// (and, with `tls`, handshake) phase's, which a connection opened mid-run records into
    /// first (see [`LazyHistogram::reserve`]): making one then writes ~190 KB of fresh
    /// memory on the worker, 1 ms on a VM, and delays the arrivals due meanwhile.
    pub fn reserve(&mut self, tls: bool) {
        for h in [
            &mut self.latency,
            &mut self.service,
            &mut self.lag,
            &mut self.phases.connect,
            &mut self.phases.waiting,
            &mut self.phases.receiving,
        ] {
            h.reserve();
        }
        if tls {
            self.phases.tls_handshake.reserve();
        }
    }

    /// Empties it, keeping the histograms' memory.
    pub fn clear(&mut self) {
        let (mut latency, mut service, mut lag, mut server, mut session, mut first_message) = (
            std::mem::take(&mut self.latency),
            std::mem::take(&mut self.service),
            std::mem::take(&mut self.lag),
            std::mem::take(&mut self.server),
            std::mem::take(&mut self.session),
            std::mem::take(&mut self.first_message),
        );
        for h in [
            &mut latency,
            &mut service,
            &mut lag,
            &mut server,
            &mut session,
            &mut first_message,
        ] {
            h.clear();
        }
        let mut phases = std::mem::take(&mut self.phases);
        phases.clear();
        let mut statuses = std::mem::take(&mut self.statuses);
        statuses.clear();
        let mut checks = std::mem::take(&mut self.check_failures);
        checks.clear();
        let mut stream_series = std::mem::take(&mut self.stream_series);
        stream_series.clear();
        *self = StepDelta {
            stream_series,
            latency,
            service,
            lag,
            server,
            session,
            first_message,
            phases,
            statuses,
            check_failures: checks,
            ..StepDelta::default()
        };
    }

    /// Counts `n` requests of this step that were in flight when the run stopped.
    pub fn add_interrupted(&mut self, n: u64) {
        self.requests += n;
        self.failed += n;
        self.errors[ErrorKind::Interrupted.index()] += n;
    }
}

/// Everything measured in one interval, per step and for the run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct IntervalDelta {
    pub steps: Vec<StepDelta>,
    /// How late the scheduler woke for arrivals (generator health; excludes waits for
    /// `max_in_flight`, which are the target's).
    pub scheduler_lag: LazyHistogram,
    pub iterations_completed: u64,
    /// How long each iteration completed in the interval took, start to end.
    pub iteration_duration: LazyHistogram,
    /// Arrivals that could not start before the run ended.
    pub iterations_dropped: u64,
    /// Arrivals that waited because `max_in_flight` requests were already open.
    pub delayed_by_max_in_flight: u64,
    /// Requests that waited for a free stream slot on a shared connection (`http.connections`):
    /// counted like arrivals waiting for `max_in_flight`, and measured from before the wait.
    pub delayed_by_stream_limit: u64,
    /// Requests that waited for a connection because enough were already being opened to
    /// their origin on the worker thread (counted like a stream-slot wait).
    pub delayed_by_connect_limit: u64,
    /// Connections opened, per origin (index of the record's `origins`) and protocol spoken
    /// (index `Protocol::index`).
    pub connections: Vec<[u64; Protocol::COUNT]>,
    /// Per data set: iterations refused because a `pick: unique` set ran out of rows.
    pub data_refused: Vec<u64>,
    /// CPU time the generator's worker threads used in the interval.
    pub cpu_seconds: f64,
    /// Time the worker threads were runnable but waited for a CPU (`schedstat`'s run delay),
    /// and how many times they were scheduled: the generator's own view of contention.
    pub run_delay_seconds: f64,
    pub run_slices: u64,
    /// The pause probe's lateness (µs, closed model): how late each worker handled a timer
    /// firing every 1.7 ms on its own thread while requests are in flight.
    pub pauses: LazyHistogram,
    /// Active VUs (closed model) or iterations in flight (open model, burst) at its end.
    pub active: u64,
    /// The most VUs active at once during the interval (closed model; 0 when not tracked).
    pub active_max: u64,
    /// Requests in flight at its end.
    pub in_flight: u64,
    /// A first message per error kind seen in the interval (an example for the user).
    pub error_examples: Vec<(ErrorKind, String)>,
}

impl IntervalDelta {
    pub fn new(step_count: usize) -> Self {
        Self {
            steps: vec![StepDelta::default(); step_count],
            ..Self::default()
        }
    }

    /// Makes the run's and the first `steps` steps' histograms before the run, so that a
    /// worker does not make them on the clock; the other steps' are made when first used
    /// (each reserved step costs ~1.2 MB a delta: six histograms of ~190 KB).
    pub fn reserve(&mut self, reserve: Reserve) {
        self.scheduler_lag.reserve();
        self.iteration_duration.reserve();
        for step in self.steps.iter_mut().take(reserve.steps) {
            step.reserve(reserve.tls);
        }
    }

    /// Empties it for another interval of `step_count` steps, keeping its memory.
    pub fn clear(&mut self, step_count: usize) {
        self.steps.resize_with(step_count, StepDelta::default);
        for s in &mut self.steps {
            s.clear();
        }
        self.scheduler_lag.clear();
        self.iteration_duration.clear();
        self.iterations_completed = 0;
        self.iterations_dropped = 0;
        self.delayed_by_max_in_flight = 0;
        self.delayed_by_stream_limit = 0;
        self.delayed_by_connect_limit = 0;
        self.connections.clear();
        self.data_refused.clear();
        self.cpu_seconds = 0.0;
        self.run_delay_seconds = 0.0;
        self.run_slices = 0;
        self.pauses.clear();
        self.active = 0;
        self.active_max = 0;
        self.in_flight = 0;
        self.error_examples.clear();
    }

    /// Adds another worker's (or segment's) delta of the same interval.
    pub fn add(&mut self, other: &IntervalDelta) {
        if self.steps.len() < other.steps.len() {
            self.steps.resize(other.steps.len(), StepDelta::default());
        }
        for (a, b) in self.steps.iter_mut().zip(&other.steps) {
            a.add(b);
        }
        self.scheduler_lag.add(&other.scheduler_lag);
        self.iteration_duration.add(&other.iteration_duration);
        self.iterations_completed += other.iterations_completed;
        self.iterations_dropped += other.iterations_dropped;
        self.delayed_by_max_in_flight += other.delayed_by_max_in_flight;
        self.delayed_by_stream_limit += other.delayed_by_stream_limit;
        self.delayed_by_connect_limit += other.delayed_by_connect_limit;
        for (origin, counts) in other.connections.iter().enumerate() {
            for protocol in Protocol::ALL {
                self.note_connections(origin, protocol, counts[protocol.index()]);
            }
        }
        for (i, &n) in other.data_refused.iter().enumerate() {
            self.note_data_refused(i, n);
        }
        self.cpu_seconds += other.cpu_seconds;
        self.run_delay_seconds += other.run_delay_seconds;
        self.run_slices += other.run_slices;
        self.pauses.add(&other.pauses);
        self.active += other.active;
        // Each worker's (or segment's) peak: their VUs ramp together, so the sum is the peak.
        self.active_max += other.active_max;
        self.in_flight += other.in_flight;
        for (kind, message) in &other.error_examples {
            self.note_error(*kind, || message.clone());
        }
    }

    /// Counts `n` connections to `origin` that spoke `protocol`.
    pub fn note_connections(&mut self, origin: usize, protocol: Protocol, n: u64) {
        if n == 0 {
            return;
        }
        if self.connections.len() <= origin {
            self.connections.resize(origin + 1, [0; Protocol::COUNT]);
        }
        self.connections[origin][protocol.index()] += n;
    }

    pub fn note_data_refused(&mut self, set: usize, n: u64) {
        if self.data_refused.len() <= set {
            self.data_refused.resize(set + 1, 0);
        }
        self.data_refused[set] += n;
    }

    /// Keeps the first message of each error kind.
    pub fn note_error(&mut self, kind: ErrorKind, message: impl FnOnce() -> String) {
        if !self.error_examples.iter().any(|(k, _)| *k == kind) {
            self.error_examples.push((kind, message()));
        }
    }

    pub fn requests(&self) -> u64 {
        self.steps.iter().map(|s| s.requests).sum()
    }

    pub fn failed(&self) -> u64 {
        self.steps.iter().map(|s| s.failed).sum()
    }

    /// The latency of every step together: the one step's own histogram when only one step
    /// holds values (most scenarios have one step), so that the summary and the interval log
    /// do not each allocate and fill a ~190 KB histogram per interval to read it.
    pub fn latency(&self) -> std::borrow::Cow<'_, LazyHistogram> {
        let mut holding = self.steps.iter().filter(|s| !s.latency.is_empty());
        match (holding.next(), holding.next()) {
            (None, _) => std::borrow::Cow::Owned(LazyHistogram::new()),
            (Some(one), None) => std::borrow::Cow::Borrowed(&one.latency),
            (Some(_), Some(_)) => {
                let mut all = LazyHistogram::new();
                for s in &self.steps {
                    all.add(&s.latency);
                }
                std::borrow::Cow::Owned(all)
            }
        }
    }
}

/// Deltas handed back after use, so that every interval reuses the histograms of an earlier
/// one: a run allocates its histograms once, and its memory stays flat however long it runs.
/// Shared by the workers and the coordinator (one exchange per worker and interval).
#[derive(Debug, Clone, Default)]
pub struct DeltaPool(std::sync::Arc<std::sync::Mutex<Vec<IntervalDelta>>>);

/// Deltas kept for reuse at most (more are dropped).
const POOL_LIMIT: usize = 64;

impl DeltaPool {
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty delta for `step_count` steps: a used one when there is one (emptied when it
    /// was given back).
    pub fn take(&self, step_count: usize) -> IntervalDelta {
        let spare = self.0.lock().ok().and_then(|mut v| v.pop());
        match spare {
            Some(mut d) => {
                d.steps.resize_with(step_count, StepDelta::default);
                d
            }
            None => IntervalDelta::new(step_count),
        }
    }

    /// Hands a delta back once its interval is written and folded in, emptied here: on the
    /// coordinator's thread, not on the worker's that takes it. Emptying zeroes every
    /// histogram (~190 KB each, two or more per step): 51 steps took the worker 2–3 ms at each
    /// interval, and at the 100 ms intervals of a short run its pause probe read that as a
    /// disturbed run (p99 1.6–3.1 ms, `bench/ws-roundtrip.sh` with `DURATION=5`).
    pub fn give(&self, mut delta: IntervalDelta) {
        let steps = delta.steps.len();
        delta.clear(steps);
        if let Ok(mut v) = self.0.lock() {
            if v.len() < POOL_LIMIT {
                v.push(delta);
            }
        }
    }
}
