//! 95% confidence intervals for one sample of per-run values: t-interval for the mean and the
//! distribution-free (binomial order-statistic) interval for the median.

use super::tdist::t_quantile;
use super::validate;
use super::StatsError;

/// Two-sided confidence level used throughout this module.
pub const CONFIDENCE: f64 = 0.95;

/// Smallest sample size for which a 95% distribution-free median CI exists.
pub const MEDIAN_CI_MIN_N: usize = 6;

/// Student-t 95% interval for the mean: `mean ± t_{0.975, n−1} · sd / √n`.
///
/// For a single value the interval degenerates to `(mean, mean)` (no spread can be estimated).
pub fn mean_ci(values: &[f64]) -> Result<(f64, f64), StatsError> {
    validate::finite(values, 1)?;
    let n = values.len();
    let mean = validate::mean(values);
    if n == 1 {
        return Ok((mean, mean));
    }
    let sd = validate::sample_variance(values).sqrt();
    let t = t_quantile(0.5 + CONFIDENCE / 2.0, (n - 1) as f64)?;
    let half = t * sd / (n as f64).sqrt();
    Ok((mean - half, mean + half))
}

/// `P(Bin(n, 1/2) ≤ k)`, summed in log space so it works for any `n`.
pub fn binom_half_cdf(k: usize, n: usize) -> f64 {
    if k >= n {
        return 1.0;
    }
    let ln_half_n = -(n as f64) * std::f64::consts::LN_2;
    let mut ln_choose = 0.0f64; // ln C(n, 0)
    let mut total = 0.0;
    for i in 0..=k {
        if i > 0 {
            ln_choose += ((n - i + 1) as f64).ln() - (i as f64).ln();
        }
        total += (ln_choose + ln_half_n).exp();
    }
    total.min(1.0)
}

/// Rank `k` (1-based) of the distribution-free 95% median interval `[x_(k), x_(n−k+1)]`:
/// the largest `k` with `2 · P(Bin(n, 1/2) ≤ k − 1) ≤ 0.05`, so the achieved coverage
/// `1 − 2 · P(Bin(n, 1/2) ≤ k − 1)` is at least 95%. `None` when no such `k` exists (n < 6).
pub fn median_ci_rank(n: usize) -> Option<usize> {
    let alpha = 1.0 - CONFIDENCE;
    let mut best = None;
    // k - 1 ranges over 0..n/2; the CDF is increasing, so stop at the first failure.
    for k in 1..=n.div_ceil(2) {
        if 2.0 * binom_half_cdf(k - 1, n) <= alpha {
            best = Some(k);
        } else {
            break;
        }
    }
    best
}

/// Achieved coverage `1 − 2 · P(Bin(n, 1/2) ≤ k − 1)` of the interval chosen by [`median_ci_rank`].
pub fn median_ci_coverage(n: usize) -> Option<f64> {
    median_ci_rank(n).map(|k| 1.0 - 2.0 * binom_half_cdf(k - 1, n))
}

/// Distribution-free 95% interval for the median, `[x_(k), x_(n−k+1)]` (see [`median_ci_rank`]).
/// `Ok(None)` when `n < 6`.
pub fn median_ci(values: &[f64]) -> Result<Option<(f64, f64)>, StatsError> {
    validate::finite(values, 1)?;
    let sorted = validate::sorted(values);
    let n = sorted.len();
    Ok(median_ci_rank(n).map(|k| (sorted[k - 1], sorted[n - k])))
}
