//! What an output sends for one interval: the interval's frame plus the run's cumulative
//! counts (counters must never lose what a dropped interval held), built on the coordinator's
//! thread so that the sender threads only encode.

use crate::frame::{FrameBuilder, LiveFrame};
use loadlab_record::{IntervalRecord, RecordMeta};
use std::collections::BTreeMap;
use std::time::{Duration, SystemTime};

/// The `status` label of requests that got no response (connection refused, timeout…).
pub const NO_STATUS: &str = "none";

/// One step's counts since the run's start (warm-up included).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StepTotals {
    pub name: String,
    /// Requests by status code, and `none` for those without a response.
    pub statuses: BTreeMap<String, u64>,
    /// Failures by error kind.
    pub errors: BTreeMap<String, u64>,
    /// Latency: how many, and their sum in seconds.
    pub latency_count: u64,
    pub latency_sum_s: f64,
}

/// One interval as the outputs see it.
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    /// Tells runs apart in the receiver (`testid` label / attribute).
    pub testid: String,
    /// The run's start, milliseconds since the Unix epoch.
    pub start_unix_ms: u64,
    pub frame: LiveFrame,
    /// Per step, in the frame's step order.
    pub totals: Vec<StepTotals>,
}

/// Builds the snapshots of one run.
pub struct SnapshotBuilder {
    testid: String,
    start_unix_ms: u64,
    frames: FrameBuilder,
    totals: Vec<StepTotals>,
}

impl SnapshotBuilder {
    /// `testid`: given (the `testid` label), else the scenario's name and start time.
    pub fn new(meta: &RecordMeta, testid: Option<&str>) -> Self {
        let start = SystemTime::UNIX_EPOCH + Duration::from_secs_f64(meta.start_unix_s.max(0.0));
        let testid = match testid {
            Some(t) => t.to_string(),
            None => format!("{}-{}", meta.name, loadlab_metrics::result::rfc3339(start)),
        };
        let totals = meta
            .steps
            .iter()
            .map(|s| StepTotals {
                name: s.name.clone(),
                ..StepTotals::default()
            })
            .collect();
        Self {
            testid,
            start_unix_ms: (meta.start_unix_s * 1000.0).round() as u64,
            frames: FrameBuilder::new(meta),
            totals,
        }
    }

    /// A builder from its parts (tests, benches): frames, `testid`, start, step names.
    pub fn from_parts(
        frames: FrameBuilder,
        testid: &str,
        start_unix_ms: u64,
        steps: &[String],
    ) -> Self {
        Self {
            testid: testid.to_string(),
            start_unix_ms,
            frames,
            totals: steps
                .iter()
                .map(|name| StepTotals {
                    name: name.clone(),
                    ..StepTotals::default()
                })
                .collect(),
        }
    }

    pub fn testid(&self) -> &str {
        &self.testid
    }

    /// The next interval's snapshot (intervals in order, each once).
    pub fn snapshot(&mut self, record: &IntervalRecord) -> Snapshot {
        let frame = self.frames.frame(record);
        for (i, step) in frame.steps.iter().enumerate() {
            if self.totals.len() <= i {
                self.totals.push(StepTotals {
                    name: step.name.clone(),
                    ..StepTotals::default()
                });
            }
            let t = &mut self.totals[i];
            let mut answered = 0;
            for (status, n) in &step.statuses {
                *t.statuses.entry(status.clone()).or_insert(0) += n;
                answered += n;
            }
            let unanswered = step.requests.saturating_sub(answered);
            if unanswered > 0 {
                *t.statuses.entry(NO_STATUS.to_string()).or_insert(0) += unanswered;
            }
            for (kind, n) in &step.errors {
                *t.errors.entry(kind.clone()).or_insert(0) += n;
            }
            if let Some(h) = record.delta.steps.get(i).and_then(|s| s.latency.get()) {
                t.latency_count += h.len();
                t.latency_sum_s += h.mean() * h.len() as f64 / 1e6;
            }
        }
        Snapshot {
            testid: self.testid.clone(),
            start_unix_ms: self.start_unix_ms,
            frame,
            totals: self.totals.clone(),
        }
    }
}
