//! One-sample summary of per-run values (one value per run, e.g. each run's p95): centre, spread, CIs.

use serde::{Deserialize, Serialize};

use super::ci::{mean_ci, median_ci};
use super::validate;
use super::StatsError;

/// Coefficient of variation at or above which a set of runs is called unstable.
pub const UNSTABLE_CV: f64 = 0.10;

/// Summary of one value per run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Number of runs.
    pub n: usize,
    /// The per-run values, in the order given.
    pub values: Vec<f64>,
    /// Median (mean of the two middle values for even `n`).
    pub median: f64,
    /// Distribution-free 95% CI of the median (`[lo, hi]`), `None`/`null` when `n < 6`.
    pub median_ci: Option<(f64, f64)>,
    /// Arithmetic mean.
    pub mean: f64,
    /// Student-t 95% CI of the mean; `(mean, mean)` when `n == 1`.
    pub mean_ci: (f64, f64),
    /// Sample standard deviation (divisor `n − 1`); 0 when `n == 1`.
    pub sd: f64,
    /// Coefficient of variation `sd / |mean|`; 0 when `n == 1` or when all values are equal;
    /// `+inf` when the mean is 0 but the values vary (serializes as `null`, never occurs for
    /// positive measurements).
    pub cv: f64,
    /// Smallest value.
    pub min: f64,
    /// Largest value.
    pub max: f64,
}

/// Summarizes one value per run. Errors on empty input or non-finite values.
/// The median of finite values (NaN when there are none): what `describe` reports, without
/// the rest of the summary (a bootstrap takes thousands of them).
pub fn median(values: &[f64]) -> f64 {
    describe(values).map(|s| s.median).unwrap_or(f64::NAN)
}

pub fn describe(values: &[f64]) -> Result<Summary, StatsError> {
    validate::finite(values, 1)?;
    let sorted = validate::sorted(values);
    let n = values.len();
    let mean = validate::mean(values);
    let sd = validate::sample_variance(values).sqrt();
    let cv = if sd == 0.0 {
        0.0
    } else if mean == 0.0 {
        f64::INFINITY
    } else {
        sd / mean.abs()
    };
    Ok(Summary {
        n,
        values: values.to_vec(),
        median: validate::median_sorted(&sorted),
        median_ci: median_ci(values)?,
        mean,
        mean_ci: mean_ci(values)?,
        sd,
        cv,
        min: sorted[0],
        max: sorted[n - 1],
    })
}

/// Whether the runs disagree too much to trust a single number: `cv ≥ 0.10`.
pub fn unstable(summary: &Summary) -> bool {
    summary.cv >= UNSTABLE_CV
}
