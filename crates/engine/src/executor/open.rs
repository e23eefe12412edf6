//! Open model: arrivals start at their intended times whatever the target does; latency is
//! measured from the intended time, so a slow target cannot hide its queue (no coordinated
//! omission). `max_in_flight` bounds concurrency; arrivals that cannot start are `dropped`.

use super::{now, wait_all};
use crate::flow::{micros, Worker};
use crate::transport::Transport;
use crate::vu::VuState;
use loadlab_scenario::plan::Segment;
use loadlab_scenario::OpenLoad;
use std::cell::Cell;
use std::rc::Rc;
use tokio::sync::Notify;
use tokio::time::Duration;

/// Dense arrivals are woken for in batches: the scheduler sleeps until the first pending
/// arrival is this late and then starts every arrival that is due. Each wake-up costs far
/// more than a request on a virtual machine, so one wake per arrival would triple the CPU
/// per request; one per millisecond tick (tokio's timer) leaves up to 2 ms of lag. Sparse
/// arrivals (further apart than this) are woken for exactly.
const BATCH_LAG_BUDGET: Duration = Duration::from_micros(500);

/// An arrival the generator reaches this long after the end of the run is `dropped`: it could
/// not start within the run. (Shorter than any request; longer than a batched wake-up.)
const LATE_START_TOLERANCE: Duration = Duration::from_millis(10);

pub async fn run<T: Transport>(
    worker: Rc<Worker<T>>,
    load: OpenLoad,
    segment: Segment,
    seed: u64,
    active: Rc<Cell<u64>>,
) {
    let limit = segment.share(u64::from(load.max_in_flight)).max(1);
    let freed = Rc::new(Notify::new());
    let mut arrivals = load.arrivals(segment, seed);
    let mut upcoming = arrivals.next();
    let mut started = 0u64;
    // When the last wait for a free slot ended: arrivals due before then were held up by
    // `max_in_flight` (the target's slowness), not by the scheduler.
    let mut slot_freed_at: Option<tokio::time::Instant> = None;
    while let Some(offset) = upcoming {
        upcoming = arrivals.next();
        let intended = worker.start + offset;
        if intended >= worker.end || worker.stopping.get() {
            break;
        }
        if now() < intended {
            let dense = upcoming.is_some_and(|next| next <= offset + BATCH_LAG_BUDGET);
            let wake = if dense {
                intended + BATCH_LAG_BUDGET
            } else {
                intended
            };
            worker.sleep_until(wake).await;
        }
        let queued_behind_slot = slot_freed_at.is_some_and(|t| t > intended);
        let late_from = match slot_freed_at {
            Some(t) if t > intended => t,
            _ => intended,
        };
        worker
            .recorder
            .borrow_mut()
            .record_scheduler_lag(micros(now().saturating_duration_since(late_from)));
        if queued_behind_slot && active.get() < limit {
            worker.recorder.borrow_mut().delayed_by_max_in_flight();
        }
        // A generator that fell behind does not go on starting overdue arrivals after the end.
        let mut cannot_start = now() >= worker.end + LATE_START_TOLERANCE;
        if !cannot_start && active.get() >= limit {
            worker.recorder.borrow_mut().delayed_by_max_in_flight();
            cannot_start = loop {
                if active.get() < limit {
                    break false;
                }
                tokio::select! {
                    _ = freed.notified() => {}
                    _ = tokio::time::sleep_until(worker.end) => break true,
                }
            } || worker.stopping.get();
            slot_freed_at = Some(now());
        }
        if cannot_start {
            // This arrival and every later one could not start within the run: the plan
            // knows how many there are, so they are counted at once, never one by one.
            let rest = upcoming.map_or(0, |_| 1 + arrivals.remaining());
            worker.recorder.borrow_mut().iterations_dropped(1 + rest);
            break;
        }
        active.set(active.get() + 1);
        // Each arrival is a new user: its own VU number, first iteration, nothing captured.
        let mut state =
            VuState::new(started * u64::from(segment.count) + u64::from(segment.index) + 1);
        started += 1;
        let w = worker.clone();
        let (a, f) = (active.clone(), freed.clone());
        tokio::task::spawn_local(async move {
            let mut conns = w.new_conn_set();
            w.iteration(&mut conns, &mut state, Some(intended), true)
                .await;
            a.set(a.get() - 1);
            f.notify_one();
        });
        // Starting overdue arrivals never waits: give the started ones (and the ticker, and
        // cancellation) their turn now and then.
        tokio::task::coop::consume_budget().await;
    }
    if now() < worker.end && !worker.stopping.get() {
        tokio::time::sleep_until(worker.end).await;
    }
    worker.stopping.set(true);
    wait_all(&active, &freed).await;
}
