//! A tap watches every run of one command (a study makes many): the dashboard's server or an
//! output's sender lives as long as the command and gives each run its own observer.

use loadlab_analysis::thresholds::ThresholdWatch;
use loadlab_record::LiveObserver;

/// Lives for the whole command; one observer per run.
pub trait LiveTap: Send + Sync {
    /// An observer for the next run, whose thresholds `thresholds` judges (its observer runs
    /// before this one, so its `states()` are current in each interval).
    fn observer(&self, thresholds: &ThresholdWatch) -> Box<dyn LiveObserver>;
}
