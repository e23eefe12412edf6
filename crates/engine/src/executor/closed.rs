//! Closed model: VUs loop their flow; a controller follows the plan's VU count (k6 ramping-vus).

use super::{now, wait_all};
use crate::flow::Worker;
use crate::steering::SteerWatch;
use crate::transport::Transport;
use crate::vu::VuState;
use loadlab_scenario::plan::Segment;
use loadlab_scenario::ConnectionPolicy;
use loadlab_scenario::{ClosedLoad, Load};
use std::cell::Cell;
use std::rc::Rc;
use tokio::sync::{watch, Notify};
use tokio::time::{Duration, Instant};

#[derive(Clone, Copy)]
struct Control {
    target: u64,
    stop: bool,
}

/// What each VU of the plan does on its own: how many iterations, and at what pace.
#[derive(Clone, Copy)]
struct VuPlan {
    iterations: Option<u64>,
    pace: Option<Duration>,
}

pub async fn run<T: Transport>(
    worker: Rc<Worker<T>>,
    mut load: ClosedLoad,
    segment: Segment,
    active: Rc<Cell<u64>>,
    mut steer: Option<SteerWatch>,
) {
    let (tx, rx) = watch::channel(Control {
        target: 0,
        stop: false,
    });
    let live = Rc::new(Cell::new(0u64));
    let finished = Rc::new(Notify::new());
    let tickets = Rc::new(Cell::new(load.shared_iterations.map(|n| segment.share(n))));
    let mut spawned = 0u64;
    loop {
        // Steered: the VU count follows the load as driven (VUs retire at their iteration's end).
        if let Some((Load::Closed(driven), _)) = steer.as_mut().and_then(SteerWatch::changed) {
            load = driven;
        }
        let elapsed = now().saturating_duration_since(worker.start);
        let target = if now() >= worker.end {
            0
        } else {
            segment.share(u64::from(load.vus_at(elapsed)))
        };
        while spawned < target {
            live.set(live.get() + 1);
            tokio::task::spawn_local(vu(
                worker.clone(),
                spawned,
                spawned * u64::from(segment.count) + u64::from(segment.index) + 1,
                rx.clone(),
                VuPlan {
                    iterations: load.iterations_per_vu,
                    pace: load.pace,
                },
                tickets.clone(),
                active.clone(),
                live.clone(),
                finished.clone(),
            ));
            spawned += 1;
        }
        let _ = tx.send(Control {
            target,
            stop: false,
        });
        let iteration_bound = load.iterations_per_vu.is_some() || load.shared_iterations.is_some();
        // All work done — or none to do: a segment's share of a small plan can be no VU.
        let owns_vus = spawned > 0 || segment.share(u64::from(load.max_vus())) == 0;
        if iteration_bound && owns_vus && live.get() == 0 {
            break; // all work done
        }
        let next = match load.next_change_after(elapsed) {
            Some(at) => (worker.start + at).min(worker.end),
            None => worker.end,
        };
        if now() >= worker.end {
            break;
        }
        tokio::select! {
            _ = tokio::time::sleep_until(next) => {}
            _ = finished.notified(), if iteration_bound => {}
            _ = steered(&mut steer) => {}
        }
    }
    worker.stopping.set(true);
    let _ = tx.send(Control {
        target: 0,
        stop: true,
    });
    wait_all(&live, &finished).await;
}

/// Until the load is steered (never, for a run without steering).
async fn steered(steer: &mut Option<SteerWatch>) {
    match steer {
        Some(steer) => steer.wait().await,
        None => std::future::pending().await,
    }
}

#[allow(clippy::too_many_arguments)]
async fn vu<T: Transport>(
    worker: Rc<Worker<T>>,
    index: u64,
    vu_id: u64,
    mut control: watch::Receiver<Control>,
    plan: VuPlan,
    tickets: Rc<Cell<Option<u64>>>,
    active: Rc<Cell<u64>>,
    live: Rc<Cell<u64>>,
    finished: Rc<Notify>,
) {
    let mut conns = worker.new_conn_set();
    let mut state = VuState::new(vu_id);
    let pooled = worker.scenario.connections == ConnectionPolicy::Shared;
    let mut done = 0u64;
    let mut is_active = false;
    // The paced schedule's next slot (`pace`): none before the first iteration.
    let mut next_slot: Option<Instant> = None;
    loop {
        let c = *control.borrow_and_update();
        if c.stop || worker.stopping.get() {
            break;
        }
        if index >= c.target {
            if is_active {
                is_active = false;
                active.set(active.get() - 1);
                conns = worker.new_conn_set(); // an idle VU holds no connection
            }
            if control.changed().await.is_err() {
                break;
            }
            continue;
        }
        if !is_active {
            is_active = true;
            active.set(active.get() + 1);
            worker.recorder.borrow_mut().vu_active(active.get());
        }
        if plan.iterations.is_some_and(|n| done >= n) {
            break;
        }
        if let Some(slot) = next_slot.filter(|&slot| slot > now()) {
            if slot >= worker.end {
                // The next slot is past the end: the VU idles until the run stops.
                tokio::time::sleep_until(worker.end).await;
                break;
            }
            // Early: wait for the slot, or for a change of the VU count (this VU may be
            // ramped down meanwhile), then look again.
            tokio::select! {
                _ = tokio::time::sleep_until(slot) => {}
                changed = control.changed() => if changed.is_err() { break },
            }
            continue;
        }
        if let Some(pace) = plan.pace {
            // On time, or late within this slot's period: the grid goes on. A slot missed
            // whole while the last iteration ran is not caught up (the compensated latency
            // accounts for it): the grid starts again from now.
            let t = now();
            next_slot = Some(match next_slot {
                Some(slot) if slot + pace > t => slot + pace,
                _ => t + pace,
            });
        }
        if let Some(left) = tickets.get() {
            if left == 0 {
                break;
            }
            tickets.set(Some(left - 1));
        }
        if !worker.iteration(&mut conns, &mut state, None, pooled).await {
            break;
        }
        done += 1;
        // An iteration can complete without ever waiting (a request that fails before any
        // I/O, say a source address that cannot be bound): without a yield point this VU would
        // spin and starve the worker's timers, its ticker and cancellation.
        tokio::task::coop::consume_budget().await;
    }
    if is_active {
        active.set(active.get() - 1);
    }
    live.set(live.get() - 1);
    finished.notify_one();
}
