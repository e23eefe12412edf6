//! What a virtual user does in one iteration: pick a flow by weight, run its steps, record.

use crate::exchange::exchange;
use crate::prepare::{FlowStep, PreparedFlow, PreparedScenario};
use crate::transport::Transport;
use loadlab_metrics::{ErrorKind, Outcome, Recorder};
use loadlab_scenario::ConnectionPolicy;
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use tokio::time::{Duration, Instant};

/// Smooth weighted round-robin: exact proportions over any window, no randomness needed.
pub struct FlowPicker {
    weights: Vec<i64>,
    current: Vec<i64>,
    total: i64,
}

impl FlowPicker {
    pub fn new(flows: &[PreparedFlow]) -> Self {
        let weights: Vec<i64> = flows.iter().map(|f| f.weight as i64).collect();
        Self {
            total: weights.iter().sum(),
            current: vec![0; weights.len()],
            weights,
        }
    }

    pub fn next(&mut self) -> usize {
        if self.weights.len() == 1 {
            return 0;
        }
        for (c, w) in self.current.iter_mut().zip(&self.weights) {
            *c += w;
        }
        let best = (0..self.current.len())
            .max_by_key(|&i| (self.current[i], -(i as i64)))
            .unwrap_or(0);
        self.current[best] -= self.total;
        best
    }
}

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
    pub warmup_end: Instant,
    /// No new iterations or requests after this instant.
    pub end: Instant,
    /// Set when the run ends (soft: finish in-flight requests, start nothing new).
    pub stopping: Cell<bool>,
    /// Idle connections per origin (shared policy and the open model).
    pub pool: RefCell<Vec<Vec<T::Conn>>>,
}

impl<T: Transport> Worker<T> {
    pub fn new_conn_set(&self) -> ConnSet<T::Conn> {
        (0..self.scenario.origins.len()).map(|_| None).collect()
    }

    fn take_pooled(&self, origin: usize) -> Option<T::Conn> {
        self.pool.borrow_mut()[origin].pop()
    }

    fn return_pooled(&self, origin: usize, conn: T::Conn) {
        self.pool.borrow_mut()[origin].push(conn);
    }

    /// Runs one iteration. `intended` is the planned start (open model and burst).
    pub async fn iteration(
        &self,
        conns: &mut ConnSet<T::Conn>,
        intended: Option<Instant>,
        pooled: bool,
    ) {
        let flow_index = self.picker.borrow_mut().next();
        let flow = &self.scenario.flows[flow_index];
        let keep_alive = self.scenario.connections != ConnectionPolicy::None;
        let mut first = true;
        for step in &flow.steps {
            if self.stopping.get() {
                return;
            }
            match step {
                FlowStep::Think(t) => {
                    let d = if t.max > t.min {
                        let span = (t.max - t.min).as_nanos() as u64;
                        t.min + Duration::from_nanos(self.rng.borrow_mut().u64(0..=span))
                    } else {
                        t.min
                    };
                    if Instant::now() + d >= self.end {
                        return;
                    }
                    tokio::time::sleep(d).await;
                }
                FlowStep::Request(index) => {
                    let req = &self.scenario.requests[*index as usize];
                    let origin = req.origin as usize;
                    let slot = &mut conns[origin];
                    if pooled && slot.is_none() {
                        *slot = self.take_pooled(origin);
                    }
                    let sent = Instant::now();
                    let result = exchange(&self.transport, slot, req, keep_alive).await;
                    let done = Instant::now();
                    if pooled {
                        if let Some(c) = slot.take() {
                            self.return_pooled(origin, c);
                        }
                    }
                    let measured_from = match intended {
                        Some(at) if first => at.min(sent),
                        _ => sent,
                    };
                    let (status, error) = match &result {
                        Ok(r) => (r.status, ErrorKind::from_status(r.status)),
                        Err(f) => (0, Some(f.kind)),
                    };
                    let outcome = Outcome {
                        step: *index,
                        latency_us: micros(done - measured_from),
                        service_us: micros(done - sent),
                        lag_us: if first {
                            intended.map(|at| micros(sent.saturating_duration_since(at)))
                        } else {
                            None
                        },
                        status,
                        error,
                        warmup: done < self.warmup_end,
                    };
                    let mut rec = self.recorder.borrow_mut();
                    rec.record(&outcome);
                    if let Err(f) = result {
                        rec.note_error(f.kind, || f.message.clone());
                    }
                    first = false;
                }
            }
        }
        self.recorder.borrow_mut().iterations_completed += 1;
    }
}

#[inline]
pub fn micros(d: Duration) -> u64 {
    d.as_micros().min(u64::MAX as u128) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weighted_picks_are_exact() {
        let flows: Vec<PreparedFlow> = [70, 20, 10]
            .iter()
            .map(|&w| PreparedFlow {
                name: String::new(),
                weight: w,
                steps: vec![],
            })
            .collect();
        let mut picker = FlowPicker::new(&flows);
        let mut counts = [0; 3];
        for _ in 0..1000 {
            counts[picker.next()] += 1;
        }
        assert_eq!(counts, [700, 200, 100]);
        // Interleaved, not in runs: the first 10 picks already hold the proportions.
        let mut picker = FlowPicker::new(&flows);
        let first: Vec<usize> = (0..10).map(|_| picker.next()).collect();
        assert_eq!(first.iter().filter(|&&i| i == 0).count(), 7);
    }
}
