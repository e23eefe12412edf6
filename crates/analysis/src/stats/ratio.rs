//! The relative-change result shared by the two-sample effect-size estimators.

use serde::{Deserialize, Serialize};

/// Relative change of a variant against a baseline, `variant / baseline − 1`
/// (e.g. `0.25` = 25% slower when the values are latencies), with a 95% CI.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Ratio {
    /// Point estimate of `variant / baseline − 1`.
    pub change: f64,
    /// 95% confidence interval of `change` (`[lo, hi]`).
    pub ci: (f64, f64),
}
