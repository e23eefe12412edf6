//! What stopped a run early: the windowed threshold that failed (`run.json`:
//! `aborted_by_threshold`), as the live observers (`loadlab_record::live`) report it.

use serde::{Deserialize, Serialize};

/// What a windowed threshold saw when it stopped the run (`run.json`: `aborted_by_threshold`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThresholdBreach {
    /// The threshold as the scenario wrote it (`latency.p95 < 500ms over 30s`).
    pub threshold: String,
    /// The window it was judged over, in seconds (`None`: everything so far).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_s: Option<f64>,
    /// The metric's value over that window, in the metric's unit (ms, ratio, /s).
    pub value: f64,
    /// When it failed, in seconds since the plan's start (t = 0 of the intervals).
    pub at_s: f64,
}
