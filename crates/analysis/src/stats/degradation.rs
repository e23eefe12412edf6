//! Degradation factor between two single numbers (e.g. 2.14× load → 3.99× latency).

use super::StatsError;

/// `variant / baseline`: how many times larger the variant is (1.0 = unchanged). Both must be
/// finite and the baseline strictly positive; the variant may be zero or negative.
pub fn degradation_factor(baseline: f64, variant: f64) -> Result<f64, StatsError> {
    if !baseline.is_finite() {
        return Err(StatsError::NotFinite {
            index: 0,
            value: baseline,
        });
    }
    if !variant.is_finite() {
        return Err(StatsError::NotFinite {
            index: 1,
            value: variant,
        });
    }
    if baseline <= 0.0 {
        return Err(StatsError::NonPositive {
            index: 0,
            value: baseline,
        });
    }
    Ok(variant / baseline)
}
