//! Executors turn the plan into activity on one worker: closed (VUs), open (arrivals), burst.

mod arrival_queue;
mod burst;
mod closed;
#[cfg(test)]
mod flow_tests;
mod open;
#[cfg(test)]
mod open_tests;
mod pause_probe;
mod read_waits;
mod runners;
#[cfg(test)]
mod start_tests;
#[cfg(test)]
mod steer_tests;
mod steered;
#[cfg(test)]
mod test_support;
#[cfg(test)]
mod test_totals;
#[cfg(test)]
mod tests;
mod ticker;

pub use open::defers_reads;
pub use ticker::{IntervalClock, Tick};

use crate::cancel::Cancel;
use crate::flow::Worker;
use crate::steering::SteerWatch;
use crate::transport::Transport;
use loadlab_scenario::plan::Segment;
use loadlab_scenario::Load;
use std::cell::Cell;
use std::rc::Rc;
use std::sync::mpsc::Sender;
use tokio::time::{Duration, Instant};

/// Everything a worker needs besides its shared state.
pub struct WorkerPlan {
    pub load: Load,
    pub segment: Segment,
    pub seed: u64,
    /// How long in-flight requests may finish after the plan ends.
    pub grace: Duration,
    /// Where intervals begin and end.
    pub clock: IntervalClock,
    /// The changes a steered run follows (none: it follows its plan).
    pub steer: Option<SteerWatch>,
}

/// Runs one worker's share of the plan to completion (or cancellation).
pub async fn run_worker<T: Transport>(
    worker: Rc<Worker<T>>,
    mut plan: WorkerPlan,
    intervals: Sender<Tick>,
    cancel: Cancel,
) {
    wait_for_start(&worker, &cancel).await;
    let active = Rc::new(Cell::new(0u64));
    let (done_tx, done_rx) = tokio::sync::watch::channel(false);
    let ticker = tokio::task::spawn_local(ticker::tick(
        worker.clone(),
        active.clone(),
        intervals,
        plan.clock,
        done_rx,
    ));
    // The open model's scheduler lag measures the worker's lateness at every batch already;
    // a burst is a pile-up in the generator by design (its requests are sent one after the
    // other from one instant), which the probe would only measure again.
    let probe = matches!(plan.load, Load::Closed(_))
        .then(|| tokio::task::spawn_local(pause_probe::pause_probe(worker.clone())));
    let steer = plan.steer.take();
    let work = async {
        match &plan.load {
            Load::Closed(c) => {
                closed::run(
                    worker.clone(),
                    c.clone(),
                    plan.segment,
                    active.clone(),
                    steer,
                )
                .await
            }
            Load::Open(o) => {
                open::run(
                    worker.clone(),
                    o.clone(),
                    plan.segment,
                    plan.seed,
                    active.clone(),
                    steer,
                )
                .await
            }
            Load::Burst(b) => {
                burst::run(worker.clone(), b.clone(), plan.segment, active.clone()).await
            }
        }
    };
    let hard_deadline = worker.end + plan.grace;
    let mut work = std::pin::pin!(work);
    let cancelled = tokio::select! {
        _ = &mut work => false,
        _ = tokio::time::sleep_until(hard_deadline) => false,
        _ = wait_cancel(&cancel) => true,
    };
    worker.stopping.set(true);
    if cancelled && cancel.drains() {
        // A threshold's abort: no request starts any more, and those in flight get the grace
        // they would get at the plan's end (the work goes on: it reads their responses).
        let deadline = (now() + plan.grace).min(hard_deadline);
        tokio::select! {
            _ = &mut work => {}
            _ = tokio::time::sleep_until(deadline) => {}
            _ = drained(&worker, &cancel) => {}
        }
    }
    if let Some(probe) = probe {
        probe.abort();
    }
    // Whatever is still in flight now will never be recorded: count it, never hide it.
    worker.recorder.borrow_mut().abandon_in_flight();
    let _ = done_tx.send(true);
    let _ = ticker.await;
}

/// Until no request is in flight, or a signal ends the drain.
async fn drained<T: Transport>(worker: &Worker<T>, cancel: &Cancel) {
    while cancel.drains() && worker.recorder.borrow().in_flight() > 0 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// Every worker begins on the same instant, which is also t = 0 of every measurement (with
/// `--start-at`, possibly far ahead: a signal must still stop the wait). On the precise timer:
/// woken by tokio's 1 ms one, the first arrivals of every run were 0.6–1.7 ms late.
pub(super) async fn wait_for_start<T: Transport>(worker: &Worker<T>, cancel: &Cancel) {
    tokio::select! {
        _ = worker.sleep_until(worker.start) => {}
        _ = wait_cancel(cancel) => {}
    }
}

async fn wait_cancel(cancel: &Cancel) {
    while !cancel.is_cancelled() {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Waits until every task counted in `live` has finished.
pub(crate) async fn wait_all(live: &Rc<Cell<u64>>, notify: &tokio::sync::Notify) {
    while live.get() > 0 {
        notify.notified().await;
    }
}

pub(crate) fn now() -> Instant {
    Instant::now()
}
