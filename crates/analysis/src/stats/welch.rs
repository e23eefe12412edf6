//! Welch's t interval on log values: the parametric alternative to Hodges–Lehmann for the
//! relative change between two sets of runs (assumes roughly log-normal per-run values).
//!
//! `change = exp(mean ln v − mean ln b) − 1`; the CI is `exp(Δ ± t_{0.975, df}·se) − 1` with
//! `se² = s_b²/m + s_v²/n` and Welch–Satterthwaite `df`, as
//! `scipy.stats.ttest_ind(ln v, ln b, equal_var=False).confidence_interval()`.

use super::ratio::Ratio;
use super::tdist::t_quantile;
use super::validate;
use super::StatsError;

/// Welch relative change `variant / baseline − 1` with a 95% CI. Each sample needs ≥ 2
/// positive values. When both samples have zero spread the CI collapses to the estimate.
pub fn welch_log_ratio(baseline: &[f64], variant: &[f64]) -> Result<Ratio, StatsError> {
    validate::positive(baseline, 2)?;
    validate::positive(variant, 2)?;
    let log_b: Vec<f64> = baseline.iter().map(|v| v.ln()).collect();
    let log_v: Vec<f64> = variant.iter().map(|v| v.ln()).collect();
    let (m, n) = (log_b.len() as f64, log_v.len() as f64);
    let delta = validate::mean(&log_v) - validate::mean(&log_b);
    let vb = validate::sample_variance(&log_b) / m;
    let vv = validate::sample_variance(&log_v) / n;
    let se2 = vb + vv;
    if se2 == 0.0 {
        let change = delta.exp_m1();
        return Ok(Ratio {
            change,
            ci: (change, change),
        });
    }
    let df = se2 * se2 / (vb * vb / (m - 1.0) + vv * vv / (n - 1.0));
    let half = t_quantile(0.975, df)? * se2.sqrt();
    Ok(Ratio {
        change: delta.exp_m1(),
        ci: ((delta - half).exp_m1(), (delta + half).exp_m1()),
    })
}
