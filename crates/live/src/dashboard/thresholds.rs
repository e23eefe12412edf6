//! The thresholds the page shows while a run goes: for now the scenario's thresholds judged
//! on the summary so far. One function, so the windowed evaluator can take its place.

use loadlab_metrics::record::{RecordMeta, Summarizer};
use loadlab_metrics::result::ThresholdResult;

/// Each of the run's thresholds with its current value (empty when it has none).
pub fn current(meta: &RecordMeta, summary: &Summarizer) -> Vec<ThresholdResult> {
    if meta.thresholds.is_empty() {
        return Vec::new();
    }
    let so_far = summary.finish(meta, None);
    loadlab_analysis::thresholds::evaluate_exprs(&meta.thresholds, &so_far)
}
