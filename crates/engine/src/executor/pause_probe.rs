//! The pause probe (after jHiccup, inside the worker): a timer on the worker's own thread fires
//! every [`PERIOD`] while requests are in flight, and how late the worker handles it is what
//! any response arriving then
//! would have waited before being timed. It sees everything that keeps the worker from
//! running: another process on its core (preempting it mid-batch, not only delaying its
//! wake-ups), the hypervisor's steal, the worker's own busy batches. A separate sleeping
//! thread does not: the kernel's scheduler wakes a thread that barely runs at once, and one
//! beside a CPU hog on the generator's core read a p99 of 0.1 ms while the workers' latency
//! p99 grew by 2 ms. `loadlab_record::disturbance` judges the probe against the latencies reported.
//!
//! Closed-model workers run it. The open model's scheduler already measures the same thing at
//! every batch of arrivals (its scheduler lag, and how late requests were written), without
//! extra wake-ups; a burst is a pile-up in the generator by design.

use crate::flow::Worker;
use crate::transport::Transport;
use std::rc::Rc;
use std::time::Duration;

/// How often the probe fires while requests are in flight. Often enough that a 2-second run
/// of one worker has 1,000 ticks (p99 stands on 10 beyond it, as the rule requires); not a
/// divisor of a scheduler tick (1, 3.3, 4 or 10 ms): a probe in step with the tick samples
/// one phase of it only, and a 4 ms probe beside a CPU hog on the worker's core read p99
/// 0.7-1.6 ms where 1 ms and 2.9 ms read 3.1-3.3 ms (latency p99 grew from 1.3 to 4.5 ms).
/// Every tick that wakes an idle worker costs CPU (1 ms ticks added 50% to the CPU per
/// request of 10 VUs at 8,000 requests/s), so not faster either.
pub const PERIOD: Duration = Duration::from_micros(1_700);

/// Longest run of missed expirations recorded one by one (a longer stop is rare and its
/// length is in the last sample anyway).
const MAX_MISSED: u64 = 10_000;

/// Records the worker's lateness at every tick while it has requests in flight (an idle
/// worker distorts nothing, and is not woken: each tick costs a wake-up), until the task is
/// dropped.
pub async fn pause_probe<T: Transport>(worker: Rc<Worker<T>>) {
    let Ok(mut timer) = loadlab_timer::PeriodicTimer::new(PERIOD) else {
        return;
    };
    loop {
        if worker.recorder.borrow().in_flight() == 0 {
            if timer.stop().is_err() {
                return;
            }
            worker.requests_begun.notified().await;
            if timer.start().is_err() {
                return;
            }
        }
        let Ok((late, expirations)) = timer.tick().await else {
            return;
        };
        let mut recorder = worker.recorder.borrow_mut();
        // Ticks that passed while the worker could not run were each late by a period more
        // than the one after them, as a response arriving then would have been.
        let missed = expirations.min(MAX_MISSED);
        for k in (0..missed).rev() {
            let us = (late + PERIOD * k as u32).as_micros() as u64;
            recorder.record_pause(us);
        }
    }
}
