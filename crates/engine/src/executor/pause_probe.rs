//! The pause probe (after jHiccup, inside the worker): a timer on the worker's own thread fires
//! every [`PERIOD`], and how late the worker handles it is what any response arriving then
//! would have waited before being timed. It sees everything that keeps the worker from
//! running: another process on its core (preempting it mid-batch, not only delaying its
//! wake-ups), the hypervisor's steal, the worker's own busy batches. A separate sleeping
//! thread does not: the kernel's scheduler wakes a thread that barely runs at once, and one
//! beside a CPU hog on the generator's core read a p99 of 0.1 ms while the workers' latency
//! p99 grew by 2 ms. `record::disturbance` judges the probe against the latencies reported.
//!
//! Closed-model workers run it. The open model's scheduler already measures the same thing at
//! every batch of arrivals (its scheduler lag, and how late requests were written), without
//! extra wake-ups; a burst is a pile-up in the generator by design.

use crate::flow::Worker;
use crate::transport::Transport;
use std::rc::Rc;
use std::time::Duration;

/// How often the probe fires: 1,000 samples a second resolve p99 of each interval.
pub const PERIOD: Duration = Duration::from_millis(1);

/// Longest run of missed expirations recorded one by one (a longer stop is rare and its
/// length is in the last sample anyway).
const MAX_MISSED: u64 = 10_000;

/// Records the worker's lateness at every tick until the task is dropped.
pub async fn pause_probe<T: Transport>(worker: Rc<Worker<T>>) {
    let Ok(mut timer) = loadlab_timer::PeriodicTimer::new(PERIOD) else {
        return;
    };
    while let Ok((late, expirations)) = timer.tick().await {
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
