//! Per-interval hand-over of a worker's measurements to the coordinator, which streams them to
//! the run record and the progress line. Intervals are slices of the plan (whole seconds, or
//! tenths for a short run: `loadlab_metrics::slice_for`), with one extra boundary
//! where the warm-up ends inside a slice, so no interval mixes the two.

use crate::flow::Worker;
use crate::health::thread_cpu_seconds;
use crate::transport::Transport;
use loadlab_metrics::IntervalDelta;
use std::cell::Cell;
use std::rc::Rc;
use std::sync::mpsc::Sender;
use tokio::time::{Duration, Instant};

/// One worker's measurements of interval `index` (`start..end` since the plan's start).
#[derive(Debug)]
pub struct Tick {
    pub index: u32,
    pub start: Duration,
    pub end: Duration,
    pub delta: IntervalDelta,
    /// The worker's last interval (the run ended inside it).
    pub last: bool,
}

/// Where intervals begin and end: every slice, plus the end of the warm-up.
#[derive(Debug, Clone, Copy)]
pub struct IntervalClock {
    /// Warm-up in whole milliseconds (boundaries closer than that are one boundary).
    warmup_ms: u64,
    /// Slice length in whole milliseconds (at least 1).
    slice_ms: u64,
}

impl IntervalClock {
    pub fn new(warmup: Duration, slice: Duration) -> Self {
        Self {
            warmup_ms: warmup.as_millis().min(u128::from(u64::MAX / 2)) as u64,
            slice_ms: (slice.as_millis() as u64).clamp(1, 3_600_000),
        }
    }

    /// Only a warm-up that ends inside a slice adds a boundary.
    fn split_slice(&self) -> Option<u64> {
        (!self.warmup_ms.is_multiple_of(self.slice_ms)).then_some(self.warmup_ms / self.slice_ms)
    }

    pub fn end_of(&self, index: u32) -> Duration {
        let i = u64::from(index);
        let ms = match self.split_slice() {
            Some(f) if i == f => self.warmup_ms,
            Some(f) if i > f => i * self.slice_ms,
            _ => (i + 1) * self.slice_ms,
        };
        Duration::from_millis(ms)
    }

    pub fn start_of(&self, index: u32) -> Duration {
        if index == 0 {
            Duration::ZERO
        } else {
            self.end_of(index - 1)
        }
    }

    /// Ends no later than the warm-up: statistics leave it out.
    pub fn is_warmup(&self, index: u32) -> bool {
        self.end_of(index).as_millis() as u64 <= self.warmup_ms
    }
}

pub async fn tick<T: Transport>(
    worker: Rc<Worker<T>>,
    active: Rc<Cell<u64>>,
    out: Sender<Tick>,
    clock: IntervalClock,
    mut done: tokio::sync::watch::Receiver<bool>,
) {
    let mut index: u32 = 0;
    let mut cpu_mark = thread_cpu_seconds();
    let mut sched_mark = loadlab_monitor::thread_schedstat();
    loop {
        let boundary = worker.start + clock.end_of(index);
        // Wake at the boundary, or earlier when the run ends.
        tokio::select! {
            _ = tokio::time::sleep_until(boundary) => {}
            _ = done.changed() => {}
        }
        // Only `done` ends the ticks, never the cancellation itself: the worker counts the
        // requests still in flight as interrupted after the load stops and before it sends
        // `done`, and the last interval must hold them (ending on the cancellation lost them
        // all whenever a boundary came first: 0 requests after Ctrl-C while all hung).
        let finished = *done.borrow();
        let now = Instant::now();
        if now >= boundary || finished {
            let cpu = thread_cpu_seconds();
            let mut recorder = worker.recorder.borrow_mut();
            for (origin, protocol, n) in worker.transport.take_opened() {
                recorder.connections_opened(origin, protocol, n);
            }
            let mut delta = recorder.take_interval(active.get(), (cpu - cpu_mark).max(0.0));
            drop(recorder);
            cpu_mark = cpu;
            // How long this worker waited for a CPU, and how often it was scheduled.
            let sched = loadlab_monitor::thread_schedstat();
            if let (Some(now), Some(before)) = (sched, sched_mark) {
                delta.run_delay_seconds = now.waited.saturating_sub(before.waited).as_secs_f64();
                delta.run_slices = now.slices.saturating_sub(before.slices);
            }
            sched_mark = sched;
            let last = finished && now < boundary;
            let end = if last {
                now.saturating_duration_since(worker.start)
            } else {
                clock.end_of(index)
            };
            let tick = Tick {
                index,
                start: clock.start_of(index),
                end: end.max(clock.start_of(index)),
                delta,
                last,
            };
            if out.send(tick).is_err() {
                return;
            }
            index += 1;
        }
        if finished {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECOND: Duration = Duration::from_secs(1);

    #[test]
    fn boundaries_are_seconds_and_the_end_of_warmup() {
        let whole = IntervalClock::new(Duration::from_secs(2), SECOND);
        let ends: Vec<u64> = (0..4).map(|i| whole.end_of(i).as_millis() as u64).collect();
        assert_eq!(ends, [1000, 2000, 3000, 4000]);
        assert!(whole.is_warmup(1) && !whole.is_warmup(2));
        let split = IntervalClock::new(Duration::from_millis(2500), SECOND);
        let ends: Vec<u64> = (0..5).map(|i| split.end_of(i).as_millis() as u64).collect();
        assert_eq!(ends, [1000, 2000, 2500, 3000, 4000]);
        assert_eq!(split.start_of(3), Duration::from_millis(2500));
        assert!(split.is_warmup(2) && !split.is_warmup(3));
        let none = IntervalClock::new(Duration::ZERO, SECOND);
        assert!(!none.is_warmup(0));
    }

    #[test]
    fn short_runs_are_cut_in_tenths_with_the_warm_up_end_kept() {
        let tenth = Duration::from_millis(100);
        let fine = IntervalClock::new(Duration::from_millis(250), tenth);
        let ends: Vec<u64> = (0..5).map(|i| fine.end_of(i).as_millis() as u64).collect();
        assert_eq!(ends, [100, 200, 250, 300, 400]);
        assert!(fine.is_warmup(2) && !fine.is_warmup(3));
        let aligned = IntervalClock::new(Duration::from_millis(300), tenth);
        let ends: Vec<u64> = (0..4)
            .map(|i| aligned.end_of(i).as_millis() as u64)
            .collect();
        assert_eq!(ends, [100, 200, 300, 400]);
        assert!(aligned.is_warmup(2) && !aligned.is_warmup(3));
    }
}
