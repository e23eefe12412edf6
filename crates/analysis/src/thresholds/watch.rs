//! The live observer that judges a run's thresholds (`record::LiveObserver`), and the handle
//! its owner keeps: the dashboard reads every threshold's current value from it while the run
//! goes, and the pipeline takes the end-of-run results from it when the run is over.

use super::window::{ThresholdState, WindowJudge};
use loadlab_metrics::result::ThresholdResult;
use loadlab_metrics::RunResult;
use loadlab_record::{IntervalRecord, LiveControl, LiveObserver, RecordMeta, Summarizer};
use loadlab_scenario::Threshold;
use std::sync::{Arc, Mutex, PoisonError};

/// A shared handle on the judge of one run's thresholds (cheap to clone).
#[derive(Clone)]
pub struct ThresholdWatch {
    judge: Arc<Mutex<WindowJudge>>,
}

impl ThresholdWatch {
    pub fn new(thresholds: &[Threshold]) -> Self {
        ThresholdWatch {
            judge: Arc::new(Mutex::new(WindowJudge::new(thresholds.to_vec()))),
        }
    }

    /// True when some threshold is judged while the run goes (a window, or `abort`).
    pub fn has_live(&self) -> bool {
        self.lock().has_live()
    }

    /// The observer to give the engine: it judges each interval on the coordinator's thread
    /// (the cost is measured in docs/live.md) and asks for an abort when due.
    pub fn observer(&self) -> Box<dyn LiveObserver> {
        Box::new(WatchObserver {
            judge: Arc::clone(&self.judge),
        })
    }

    /// Every threshold's current value (windowed and plain), in scenario order.
    pub fn states(&self) -> Vec<ThresholdState> {
        self.lock().states()
    }

    /// The end-of-run results, on the whole run's summary (see `WindowJudge::results`).
    pub fn results(&self, run: &RunResult) -> Vec<ThresholdResult> {
        self.lock().results(run)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, WindowJudge> {
        // A panic while judging leaves the judge as it was: its figures are still whole.
        self.judge.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

struct WatchObserver {
    judge: Arc<Mutex<WindowJudge>>,
}

impl LiveObserver for WatchObserver {
    fn begin(&mut self, meta: &RecordMeta) {
        self.judge
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .begin(meta);
    }

    fn interval(&mut self, record: &IntervalRecord, _summary: &Summarizer) -> LiveControl {
        // The judge keeps running windows of what its thresholds read: it never needs the
        // whole run's summary (finishing it per interval is what judging cost before).
        let breach = self
            .judge
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .interval(record);
        match breach {
            Some(b) => LiveControl::Abort(b),
            None => LiveControl::Continue,
        }
    }
}
