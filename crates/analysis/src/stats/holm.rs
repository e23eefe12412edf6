//! Holm–Bonferroni step-down adjustment for comparing many metrics/variants at once,
//! matching `statsmodels.stats.multitest.multipletests(p, method='holm')[1]`.

use super::StatsError;

/// Holm-adjusted p-values in input order: sort ascending, multiply the i-th smallest
/// (0-based) by `m − i`, take the running maximum, cap at 1. Empty input gives an empty
/// vector; a p-value outside `[0, 1]` or NaN is an error.
pub fn holm(p_values: &[f64]) -> Result<Vec<f64>, StatsError> {
    if let Some(index) = p_values
        .iter()
        .position(|p| !(p.is_finite() && (0.0..=1.0).contains(p)))
    {
        return Err(StatsError::InvalidArgument {
            name: "p-value",
            value: p_values[index],
        });
    }
    let m = p_values.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| p_values[a].total_cmp(&p_values[b]));
    let mut adjusted = vec![0.0; m];
    let mut running = 0.0f64;
    for (i, &idx) in order.iter().enumerate() {
        running = running.max(p_values[idx] * (m - i) as f64);
        adjusted[idx] = running.min(1.0);
    }
    Ok(adjusted)
}
