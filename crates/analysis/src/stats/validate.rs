//! Shared input checks (non-empty, finite, positive) so every public function rejects bad input the same way.

use super::StatsError;

/// Checks that `values` has at least `needed` entries (`Empty` when there are none) and all are finite.
pub(crate) fn finite(values: &[f64], needed: usize) -> Result<(), StatsError> {
    if values.is_empty() {
        return Err(StatsError::Empty);
    }
    if values.len() < needed {
        return Err(StatsError::TooFew {
            needed,
            got: values.len(),
        });
    }
    match values.iter().position(|v| !v.is_finite()) {
        Some(index) => Err(StatsError::NotFinite {
            index,
            value: values[index],
        }),
        None => Ok(()),
    }
}

/// Like [`finite`], and additionally every value must be strictly positive (for logs and ratios).
pub(crate) fn positive(values: &[f64], needed: usize) -> Result<(), StatsError> {
    finite(values, needed)?;
    match values.iter().position(|&v| v <= 0.0) {
        Some(index) => Err(StatsError::NonPositive {
            index,
            value: values[index],
        }),
        None => Ok(()),
    }
}

/// Sorted copy of finite values (total order, so never panics).
pub(crate) fn sorted(values: &[f64]) -> Vec<f64> {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    v
}

/// Median of an already sorted, non-empty slice (mean of the two middle values when the length is even).
pub(crate) fn median_sorted(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    if n % 2 == 1 {
        sorted[n / 2]
    } else {
        0.5 * (sorted[n / 2 - 1] + sorted[n / 2])
    }
}

/// Arithmetic mean of a non-empty slice.
pub(crate) fn mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len() as f64
}

/// Sample variance (divisor n − 1) of a slice with at least two values; 0 for a single value.
pub(crate) fn sample_variance(values: &[f64]) -> f64 {
    let n = values.len();
    if n < 2 {
        return 0.0;
    }
    let m = mean(values);
    values.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / (n - 1) as f64
}
