//! The dashboard's observer of one run: on the coordinator's thread it builds the interval's
//! frame, reads the thresholds' current values from the run's threshold watch, serializes the event once and hands it
//! to the hub, which never waits. It also times itself (wall and thread CPU), for
//! `/api/state`'s `cost`.

use super::cpu::thread_cpu;
use super::event::{Event, FrameEvent, RunEnd, RunStart, ThresholdNow};
use super::hub::Kind;
use super::Inner;
use crate::frame::FrameBuilder;
use loadlab_analysis::thresholds::ThresholdWatch;
use loadlab_record::{
    IntervalRecord, LiveControl, LiveObserver, RecordEnd, RecordMeta, Summarizer,
};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

pub struct RunObserver {
    inner: Arc<Inner>,
    seq: u32,
    meta: Option<RecordMeta>,
    builder: FrameBuilder,
    /// Judges the run's thresholds (its observer runs first in every interval).
    watch: ThresholdWatch,
    totals: (u64, u64),
}

impl RunObserver {
    pub fn new(inner: Arc<Inner>, watch: ThresholdWatch) -> Self {
        let seq = inner.runs.fetch_add(1, Ordering::Relaxed) + 1;
        Self {
            inner,
            seq,
            meta: None,
            builder: FrameBuilder::default(),
            watch,
            totals: (0, 0),
        }
    }

    fn publish(&self, kind: Kind, event: &Event) {
        if let Ok(json) = serde_json::to_string(event) {
            self.inner.shared.hub.publish(kind, json);
        }
    }

    fn on_interval(&mut self, record: &IntervalRecord) {
        let frame = self.builder.frame(record);
        self.totals = (frame.total_requests, frame.total_failed);
        let event = Event::Frame(Box::new(FrameEvent {
            seq: self.seq,
            frame,
            thresholds: self
                .watch
                .states()
                .into_iter()
                .map(ThresholdNow::from)
                .collect(),
            context: self.inner.context(),
        }));
        self.publish(Kind::Frame, &event);
    }
}

impl LiveObserver for RunObserver {
    fn begin(&mut self, meta: &RecordMeta) {
        let started = (Instant::now(), thread_cpu());
        {
            self.builder = FrameBuilder::new(meta);
            let planned_unit = meta
                .load
                .planned
                .as_ref()
                .map(|p| if p.vus { "vus" } else { "arrivals/s" }.to_string());
            let start = Event::RunStart(RunStart {
                seq: self.seq,
                name: meta.name.clone(),
                target: meta.target.clone(),
                steps: meta.steps.iter().map(|s| s.name.clone()).collect(),
                planned_duration_s: meta.load.planned_duration_s,
                warmup_s: meta.warmup_s,
                slice_s: meta.slice_s,
                planned_unit,
                thresholds: meta.thresholds.clone(),
                start_unix_ms: (meta.start_unix_s * 1000.0).round() as u64,
            });
            self.publish(Kind::RunStart, &start);
            self.meta = Some(meta.clone());
        }
        self.inner
            .shared
            .charge(started.0.elapsed(), thread_cpu() - started.1);
    }

    fn interval(&mut self, record: &IntervalRecord, _summary: &Summarizer) -> LiveControl {
        let started = (Instant::now(), thread_cpu());
        self.on_interval(record);
        self.inner
            .shared
            .charge(started.0.elapsed(), thread_cpu() - started.1);
        LiveControl::Continue
    }

    fn end(&mut self, end: &RecordEnd) {
        let started = (Instant::now(), thread_cpu());
        {
            let event = Event::RunEnd(RunEnd {
                seq: self.seq,
                stop: end.stop,
                aborted_by_threshold: end.aborted_by_threshold.clone(),
                wall_s: end.wall_s,
                total_requests: self.totals.0,
                total_failed: self.totals.1,
            });
            self.publish(Kind::RunEnd, &event);
        }
        self.inner
            .shared
            .charge(started.0.elapsed(), thread_cpu() - started.1);
    }
}
