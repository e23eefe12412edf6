//! What a virtual user does in one iteration: pick a flow by weight, run its steps, record.

mod request;

use crate::flow_picker::FlowPicker;
use crate::http::DeferredIo;
use crate::idle_pool::IdlePool;
use crate::prepare::{FlowStep, PreparedScenario};
use crate::transport::Transport;
use crate::vu::VuState;
use loadlab_metrics::{micros, Recorder};
use loadlab_scenario::{ConnectionPolicy, Pick, ThinkTime};
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use tokio::time::{Duration, Instant};

/// Connections a VU (or an open-model iteration) holds, one slot per origin.
pub type ConnSet<C> = Vec<Option<C>>;

/// State shared by everything running on one worker thread (single-threaded, so `Rc`/`RefCell`).
pub struct Worker<T: Transport> {
    pub transport: T,
    pub scenario: Rc<PreparedScenario>,
    pub recorder: RefCell<Recorder>,
    pub picker: RefCell<FlowPicker>,
    pub rng: RefCell<fastrand::Rng>,
    pub start: Instant,
    /// No new iterations or requests after this instant.
    pub end: Instant,
    /// Set when the run ends (soft: finish in-flight requests, start nothing new).
    pub stopping: Cell<bool>,
    /// Idle connections per origin (shared policy and the open model).
    pub pool: IdlePool<T::Conn>,
    /// Sub-millisecond waits for the open model's arrivals; `None` uses tokio's timer
    /// (1 ms ticks), which is also what paused-time tests need.
    pub precise_timer: Option<loadlab_timer::PreciseTimer>,
    /// Plain HTTP/1.1 reads looked at when the open model's scheduler wakes, not by waking
    /// the worker (see http/deferred.rs); `None`: tokio's reactor reads every connection.
    pub deferred: Option<Arc<DeferredIo>>,
    /// Notified when a request begins on an idle worker: the pause probe sleeps until then.
    pub requests_begun: tokio::sync::Notify,
}

impl<T: Transport> Worker<T> {
    /// Sleeps until `at`, precisely when a precise timer is available.
    pub async fn sleep_until(&self, at: Instant) {
        if let Some(timer) = &self.precise_timer {
            if timer.sleep_until(at.into_std()).await.is_ok() {
                return;
            }
        }
        tokio::time::sleep_until(at).await;
    }

    pub fn new_conn_set(&self) -> ConnSet<T::Conn> {
        (0..self.scenario.origins.len()).map(|_| None).collect()
    }

    /// Runs one iteration of `vu`. `intended` is the planned start (open model and burst).
    /// Returns false when the VU cannot go on (a `unique` data set ran out of rows).
    pub async fn iteration(
        &self,
        conns: &mut ConnSet<T::Conn>,
        vu: &mut VuState,
        intended: Option<Instant>,
        pooled: bool,
    ) -> bool {
        let flow_index = self.picker.borrow_mut().next();
        let scenario = self.scenario.clone();
        let flow = &scenario.flows[flow_index];
        let mut timing = Span::starting(&flow.steps);
        let keep_alive = scenario.connections != ConnectionPolicy::None;
        let mut first = true;
        let mut loops: Vec<u64> = Vec::new();
        let mut pc = 0usize;
        let ops = &flow.steps;
        let finished = 'run: {
            while pc < ops.len() {
                if self.stopping.get() {
                    break 'run false;
                }
                match &ops[pc] {
                    FlowStep::Think(t) => {
                        timing.end = None;
                        let d = self.think_time(t);
                        if Instant::now() + d >= self.end {
                            // Thinking past the end: the VU idles until the run stops
                            // (returning at once would start a new iteration at once).
                            tokio::time::sleep_until(self.end).await;
                            break 'run false;
                        }
                        tokio::time::sleep(d).await;
                    }
                    FlowStep::Ws(index) => {
                        let ws = &scenario.sessions[*index as usize];
                        match self.ws_session(ws, vu, intended, first, &mut timing).await {
                            Next::Continue => {}
                            Next::StopIteration => break 'run false,
                            Next::StopVu => return false,
                        }
                        first = false;
                    }
                    FlowStep::Request(index) => {
                        let req = &scenario.requests[*index as usize];
                        let request = self.request(
                            req,
                            conns,
                            vu,
                            intended,
                            first,
                            keep_alive,
                            pooled,
                            &mut timing,
                        );
                        match request.await {
                            Next::Continue => {}
                            Next::StopIteration => break 'run false,
                            Next::StopVu => return false,
                        }
                        first = false;
                    }
                    control => {
                        if let Some(to) = jump(control, &mut loops, vu) {
                            pc = to;
                            continue;
                        }
                    }
                }
                pc += 1;
            }
            true
        };
        if finished {
            self.record_completed(&timing);
        }
        vu.iteration += 1;
        true
    }

    /// How long a think step waits: its fixed time, or a uniform draw between its bounds.
    #[inline]
    fn think_time(&self, t: &ThinkTime) -> Duration {
        if t.max > t.min {
            let span = (t.max - t.min).as_nanos() as u64;
            t.min + Duration::from_nanos(self.rng.borrow_mut().u64(0..=span))
        } else {
            t.min
        }
    }

    /// Counts an iteration that ran to its end, with how long its span took (read off the
    /// clock only when its last step was not a request that ended it).
    #[inline]
    fn record_completed(&self, timing: &Span) {
        let end = timing.end.unwrap_or_else(Instant::now);
        let took = timing
            .start
            .map_or(0, |start| micros(end.saturating_duration_since(start)));
        self.recorder.borrow_mut().iteration_completed(took);
    }

    /// Takes this iteration's row of every data set in `sets`; false if a set ran out.
    pub(crate) fn take_rows(&self, sets: &[u16], vu: &mut VuState) -> bool {
        let data = &self.scenario.data;
        for &set in sets {
            let set = set as usize;
            if vu.current_row(set).is_some() {
                continue;
            }
            let own = data.own_rows(set);
            let nth = match data.sets[set].pick {
                Pick::Random => self.rng.borrow_mut().u64(0..own.count),
                Pick::Sequential => data.cursors[set].fetch_add(1, Ordering::Relaxed) % own.count,
                Pick::Unique => {
                    let n = data.cursors[set].fetch_add(1, Ordering::Relaxed);
                    if n >= own.count {
                        self.recorder.borrow_mut().data_refused(set);
                        return false;
                    }
                    n
                }
            };
            vu.take_row(set, own.row(nth) as u32);
        }
        true
    }
}

/// When an iteration started and (if its last step was a request) ended.
pub(crate) struct Span {
    pub start: Option<Instant>,
    pub end: Option<Instant>,
}

impl Span {
    /// The span of an iteration of `steps`: a flow that starts with a request starts when
    /// it is wanted, one that ends with a request ends when it is done (no clock read of
    /// its own).
    #[inline]
    fn starting(steps: &[FlowStep]) -> Self {
        Span {
            start: (!matches!(steps.first(), Some(FlowStep::Request(_)))).then(Instant::now),
            end: None,
        }
    }
}

/// Follows a loop or once step: where the flow jumps to (back to a loop's body while it
/// has rounds left, past a block this VU already ran once), `None` to go on to the next step.
#[inline]
fn jump(step: &FlowStep, loops: &mut Vec<u64>, vu: &mut VuState) -> Option<usize> {
    match step {
        FlowStep::Loop { count } => loops.push(*count),
        FlowStep::LoopEnd { start } => {
            if let Some(left) = loops.last_mut() {
                *left -= 1;
                if *left > 0 {
                    return Some(*start as usize + 1);
                }
            }
            loops.pop();
        }
        FlowStep::Once { id, end } => {
            if vu.once_done & (1u64 << id) != 0 {
                return Some(*end as usize + 1);
            }
        }
        FlowStep::OnceEnd { id } => vu.once_done |= 1u64 << id,
        FlowStep::Think(_) | FlowStep::Ws(_) | FlowStep::Request(_) => {}
    }
    None
}

/// What the flow does after a request.
pub(crate) enum Next {
    Continue,
    StopIteration,
    StopVu,
}
