//! The coordinator's side of a run: adds the workers' ticks of each interval together, puts
//! the resource samples that ended in it beside them, streams the sum to the run record,
//! folds it into the summary, shows it to the live observers and reports progress.

use crate::cancel::Cancel;
use crate::executor::{IntervalClock, Tick};
use crate::resources::ResourceFeed;
use loadlab_metrics::{DeltaPool, IntervalDelta, ThresholdBreach};
use loadlab_record::{
    Guarded, IntervalRecord, LiveControl, LiveObserver, RecordEnd, RecordMeta, Summarizer,
};
use std::collections::BTreeMap;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::Duration;

/// Live figures for the progress line.
#[derive(Debug, Clone)]
pub struct Progress {
    pub elapsed: Duration,
    pub planned: Duration,
    pub warmup: bool,
    pub rate: f64,
    pub p95_ms: f64,
    pub active: u64,
    pub total_requests: u64,
    pub total_failed: u64,
    /// The load has ended and `active` requests are still in flight: they get at most this
    /// much longer (the request timeout, up to 30 s) before they count as interrupted. A run
    /// against a target that stopped answering waits out this time, and must say so.
    pub draining: Option<Duration>,
}

/// Receives the figures of each completed interval.
pub type ProgressCallback = Box<dyn FnMut(&Progress) + Send>;

/// An interval being assembled from the workers' ticks.
struct Pending {
    start: Duration,
    end: Duration,
    delta: IntervalDelta,
    ticks: usize,
}

pub struct Coordinator {
    pub summary: Summarizer,
    pub sink: Option<Guarded>,
    progress: Option<ProgressCallback>,
    clock: IntervalClock,
    planned: Duration,
    /// How long requests in flight at the plan's end may still take.
    grace: Duration,
    workers: usize,
    pending: BTreeMap<u32, Pending>,
    totals: (u64, u64),
    intervals: u32,
    /// Deltas go back to the workers once written: histograms are allocated once per run.
    pool: DeltaPool,
    resources: Option<Box<dyn ResourceFeed>>,
    /// CPU of the resource monitor's threads, once stopped.
    pub monitor_cpu_percent: Option<f64>,
    observers: Vec<Box<dyn LiveObserver>>,
    /// Raised when an observer stops the run (the workers watch it).
    cancel: Cancel,
    /// The threshold that stopped the run, when one did.
    pub breach: Option<ThresholdBreach>,
}

/// How long an interval waits for its resource sample (the monitor reads /proc just after
/// the boundary, as the workers hand over theirs).
const SAMPLE_WAIT: Duration = Duration::from_millis(300);

impl Coordinator {
    pub fn new(
        meta: &RecordMeta,
        sink: Option<Guarded>,
        progress: Option<ProgressCallback>,
        clock: IntervalClock,
        planned: Duration,
        workers: usize,
        pool: DeltaPool,
    ) -> Self {
        let mut sink = sink;
        if let Some(s) = sink.as_mut() {
            s.begin(meta);
        }
        Self {
            summary: Summarizer::for_record(meta),
            sink,
            progress,
            clock,
            planned,
            grace: Duration::ZERO,
            workers,
            pending: BTreeMap::new(),
            totals: (0, 0),
            intervals: 0,
            pool,
            resources: None,
            monitor_cpu_percent: None,
            observers: Vec::new(),
            cancel: Cancel::new(),
            breach: None,
        }
    }

    /// Shows every interval to `observers` (after `begin` with the run's metadata); an
    /// observer's abort raises `cancel`.
    pub fn with_observers(
        mut self,
        mut observers: Vec<Box<dyn LiveObserver>>,
        cancel: Cancel,
        meta: &RecordMeta,
    ) -> Self {
        for o in &mut observers {
            o.begin(meta);
        }
        self.observers = observers;
        self.cancel = cancel;
        self
    }

    /// The run ended: observers flush.
    pub fn end_observers(&mut self, end: &RecordEnd) {
        for o in &mut self.observers {
            o.end(end);
        }
    }

    fn show_observers(&mut self, record: &IntervalRecord) {
        for o in &mut self.observers {
            if let LiveControl::Abort(breach) = o.interval(record, &self.summary) {
                if self.breach.is_none() && !self.cancel.is_cancelled() {
                    self.breach = Some(breach);
                    self.cancel.drain_because(crate::StopCause::Threshold);
                }
            }
        }
    }

    /// Requests in flight when the plan ends may take `grace` longer (the progress says so).
    pub fn with_grace(mut self, grace: Duration) -> Self {
        self.grace = grace;
        self
    }

    /// Puts the resource monitor's samples beside the intervals.
    pub fn with_resources(mut self, resources: Option<Box<dyn ResourceFeed>>) -> Self {
        self.resources = resources;
        self
    }

    /// Collects ticks until every worker has ended, writing each interval (in order) once
    /// every worker has handed it over or ended before it.
    pub fn collect(&mut self, ticks: &Receiver<Tick>) {
        // The last interval index of each worker that has ended.
        let mut ended: Vec<u32> = Vec::new();
        loop {
            match ticks.recv_timeout(Duration::from_millis(200)) {
                Ok(tick) => {
                    if tick.last {
                        ended.push(tick.index);
                    }
                    let entry = self.pending.entry(tick.index).or_insert_with(|| Pending {
                        start: tick.start,
                        end: tick.end,
                        delta: IntervalDelta::default(),
                        ticks: 0,
                    });
                    entry.end = entry.end.max(tick.end);
                    if entry.ticks == 0 {
                        entry.delta = tick.delta;
                    } else {
                        entry.delta.add(&tick.delta);
                        self.pool.give(tick.delta);
                    }
                    entry.ticks += 1;
                    self.flush_complete(&ended);
                }
                Err(RecvTimeoutError::Timeout) => continue,
                Err(RecvTimeoutError::Disconnected) => break,
            }
        }
        while let Some((index, p)) = self.pending.pop_first() {
            let last = self.pending.is_empty();
            self.write(index, p, last);
        }
        if let Some(mut feed) = self.resources.take() {
            // Nothing left to attach them to (no interval at all): stop the monitor.
            self.monitor_cpu_percent = feed.finish().1;
        }
    }

    /// Writes the complete intervals at the front of the queue.
    fn flush_complete(&mut self, ended: &[u32]) {
        while let Some(entry) = self.pending.first_entry() {
            let index = *entry.key();
            let gone = ended.iter().filter(|&&last| last < index).count();
            if entry.get().ticks + gone < self.workers {
                break;
            }
            let p = entry.remove();
            // Every worker has ended and nothing follows: the run's last interval.
            let last = ended.len() >= self.workers && self.pending.is_empty();
            self.write(index, p, last);
        }
    }

    fn write(&mut self, tick_index: u32, p: Pending, last: bool) {
        let resources = match self.resources.as_mut() {
            Some(feed) if last => {
                let (samples, cost) = feed.finish();
                self.monitor_cpu_percent = cost;
                self.resources = None;
                samples
            }
            Some(feed) => feed.until(p.end, SAMPLE_WAIT),
            None => Vec::new(),
        };
        let record = IntervalRecord {
            index: self.intervals,
            start_s: p.start.as_secs_f64(),
            length_s: p.end.saturating_sub(p.start).as_secs_f64().max(1e-3),
            warmup: self.clock.is_warmup(tick_index),
            delta: p.delta,
            resources,
        };
        self.intervals += 1;
        if let Some(sink) = self.sink.as_mut() {
            sink.interval(&record);
        }
        self.summary.add(&record);
        self.show_observers(&record);
        self.totals.0 += record.delta.requests();
        self.totals.1 += record.delta.failed();
        let draining = (p.start >= self.planned && record.delta.active > 0)
            .then(|| (self.planned + self.grace).saturating_sub(p.end));
        if let (Some(progress), Some(stats)) =
            (self.progress.as_mut(), self.summary.intervals().last())
        {
            progress(&Progress {
                elapsed: p.end.min(self.planned.max(Duration::from_secs(1))),
                planned: self.planned,
                warmup: record.warmup,
                rate: stats.rate,
                p95_ms: stats.latency_ms.p95,
                active: record.delta.active,
                total_requests: self.totals.0,
                total_failed: self.totals.1,
                draining,
            });
        }
        self.pool.give(record.delta);
    }

    pub fn intervals(&self) -> u32 {
        self.intervals
    }
}
