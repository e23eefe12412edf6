//! The open model's upcoming arrivals as the worker thread shares them: the scheduler fills a
//! short buffer from the plan, and whoever is awake when an arrival is due — the scheduler
//! after a timer, or a runner that has just finished its request — takes it. The rules that
//! keep the numbers honest (lag from the intended time, waits for `max_in_flight` told apart
//! from a late scheduler, arrivals that cannot start counted) live here, in one place.

use super::now;
use crate::flow::Worker;
use crate::transport::Transport;
use loadlab_metrics::micros;
use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use tokio::time::{Duration, Instant};

/// An arrival the generator reaches this long after the end of the run is `dropped`: it could
/// not start within the run. (Shorter than any request; longer than a batched wake-up.)
pub(super) const LATE_START_TOLERANCE: Duration = Duration::from_millis(10);

/// One planned arrival, handed to a runner: when it was meant to start and its user number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Arrival {
    pub intended: Instant,
    pub vu: u64,
}

/// What is due next.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Next {
    /// Start this arrival now.
    Start(Arrival),
    /// Nothing is due before this instant (the earliest buffered arrival).
    At(Instant),
    /// Every `max_in_flight` slot is taken: wait until one frees.
    Full,
    /// No connection to this origin is idle or may be opened now: wait until one may (see
    /// [`ArrivalQueue::with_gate`]).
    NoConnection(usize),
    /// The buffer is empty (the scheduler refills it, or the plan is done).
    Empty,
    /// The run is over for new arrivals: what is left can only be dropped.
    Over,
}

pub(super) struct ArrivalQueue {
    /// Planned arrivals not yet started, in order of intended time.
    planned: RefCell<VecDeque<Instant>>,
    /// Arrivals started so far (numbers the users).
    started: Cell<u64>,
    /// This worker's segment: user numbers are `started · count + index + 1`.
    segment_count: u64,
    segment_index: u64,
    /// Iterations in flight, and at most how many may be.
    pub active: std::rc::Rc<Cell<u64>>,
    limit: u64,
    /// Arrivals held back by every `max_in_flight` slot being taken (the target's slowness).
    by_slot: HeldBack,
    /// The origin every arrival's first request goes to over a pooled connection, if one is.
    gate: Option<usize>,
    /// Arrivals handed to runners that have not taken their connection yet.
    pub handed: std::rc::Rc<Cell<u64>>,
    /// Arrivals held back by no connection being available (the target's slowness, or the
    /// bound on opening them).
    by_connection: HeldBack,
}

/// Arrivals held back by one cause that is not the scheduler's: whether one is held now, when
/// the cause last ended (arrivals due before then were held by it, and their scheduler lag
/// runs from then), and whether the first buffered arrival was already counted as delayed.
#[derive(Default)]
struct HeldBack {
    waiting: Cell<bool>,
    freed_at: Cell<Option<Instant>>,
    front_counted: Cell<bool>,
}

impl HeldBack {
    /// The first buffered arrival is held: true when it is to be counted (once).
    fn hold(&self) -> bool {
        self.waiting.set(true);
        !self.front_counted.replace(true)
    }

    /// The cause ended at `at()`, if an arrival was held; true if one was.
    fn release(&self, at: impl FnOnce() -> Instant) -> bool {
        let was_waiting = self.waiting.replace(false);
        if was_waiting {
            self.freed_at.set(Some(at()));
        }
        was_waiting
    }

    /// An arrival meant for `intended` starts: until when this cause held it, if it did, and
    /// whether it is still to be counted as delayed.
    fn start(&self, intended: Instant) -> (Option<Instant>, bool) {
        let held = self.freed_at.get().filter(|&freed| freed > intended);
        let counted = self.front_counted.replace(false);
        (held, held.is_some() && !counted)
    }
}

impl ArrivalQueue {
    pub fn new(
        active: std::rc::Rc<Cell<u64>>,
        limit: u64,
        segment: loadlab_scenario::plan::Segment,
    ) -> Self {
        Self {
            planned: RefCell::new(VecDeque::new()),
            started: Cell::new(0),
            segment_count: u64::from(segment.count),
            segment_index: u64::from(segment.index),
            active,
            limit: limit.max(1),
            by_slot: HeldBack::default(),
            gate: None,
            handed: std::rc::Rc::default(),
            by_connection: HeldBack::default(),
        }
    }

    /// Arrivals start only while a connection to `origin` is available for each, when every
    /// arrival's first request goes there over a pooled connection. Otherwise a started
    /// arrival waits for a connection inside its request, and the runner that gives one back
    /// takes it again for the next due arrival before the woken waiter runs: older arrivals
    /// starved behind younger ones (0.3–3 s at 50,000/s). Held here, they stay in order, and
    /// whoever frees a connection starts the oldest with it, in the same wake-up.
    pub fn with_gate(mut self, origin: Option<usize>) -> Self {
        self.gate = origin;
        self
    }

    pub fn push(&self, intended: Instant) {
        self.planned.borrow_mut().push_back(intended);
    }

    pub fn buffered(&self) -> usize {
        self.planned.borrow().len()
    }

    /// The latest buffered arrival (the scheduler refills after it).
    pub fn last(&self) -> Option<Instant> {
        self.planned.borrow().back().copied()
    }

    /// The arrival after the first (the scheduler batches when the two are close).
    pub fn second(&self) -> Option<Instant> {
        self.planned.borrow().get(1).copied()
    }

    /// Empties the buffer, returning how many arrivals were in it (to be counted dropped).
    pub fn drain(&self) -> u64 {
        let mut planned = self.planned.borrow_mut();
        let n = planned.len() as u64;
        planned.clear();
        n
    }

    /// Forgets the buffered arrivals intended at or after `from` (a steered run re-plans
    /// them): they were never due, so they are not dropped.
    pub fn discard_from(&self, from: Instant) {
        let mut planned = self.planned.borrow_mut();
        while planned.back().is_some_and(|&t| t >= from) {
            planned.pop_back();
        }
        if planned.is_empty() {
            // The arrival a cause held was the front: the next front is a new one.
            self.by_slot.front_counted.set(false);
            self.by_connection.front_counted.set(false);
        }
    }

    /// A slot freed (an iteration finished). True when the scheduler should hear of it: an
    /// arrival was waiting for a slot, or nothing is in flight any more.
    pub fn finished_one(&self) -> bool {
        let left = self.active.get().saturating_sub(1);
        self.active.set(left);
        let was_waiting = self.by_slot.release(now);
        was_waiting || left == 0
    }

    /// Takes the next arrival if it is due and may start; records its scheduler lag.
    pub fn take_due<T: Transport>(&self, worker: &Worker<T>) -> Next {
        let t = now();
        let Some(&intended) = self.planned.borrow().front() else {
            return Next::Empty;
        };
        if worker.stopping.get() || t >= worker.end + LATE_START_TOLERANCE {
            return Next::Over;
        }
        if intended > t {
            return Next::At(intended);
        }
        if self.active.get() >= self.limit {
            if self.by_slot.hold() {
                worker.recorder.borrow_mut().delayed_by_max_in_flight();
            }
            return Next::Full;
        }
        if let Some(origin) = self.gate {
            if worker.pool.available(origin) as u64 <= self.handed.get() {
                worker.pool.hold(origin);
                if self.by_connection.hold() {
                    worker.recorder.borrow_mut().delayed_by_connect_limit();
                }
                return Next::NoConnection(origin);
            }
            self.by_connection
                .release(|| worker.pool.ready_since(origin).unwrap_or(t));
        }
        self.planned.borrow_mut().pop_front();
        // Every arrival a full set of slots (or no connection) held back is counted, once.
        let (held_by_slot, count_slot) = self.by_slot.start(intended);
        let (held_by_connection, count_connection) = self.by_connection.start(intended);
        let mut recorder = worker.recorder.borrow_mut();
        if count_slot {
            recorder.delayed_by_max_in_flight();
        }
        if count_connection {
            recorder.delayed_by_connect_limit();
        }
        let late_from = held_by_slot
            .into_iter()
            .chain(held_by_connection)
            .max()
            .unwrap_or(intended);
        recorder.record_scheduler_lag(micros(t.saturating_duration_since(late_from)));
        drop(recorder);
        self.active.set(self.active.get() + 1);
        let n = self.started.get();
        self.started.set(n + 1);
        Next::Start(Arrival {
            intended,
            vu: n * self.segment_count + self.segment_index + 1,
        })
    }
}
