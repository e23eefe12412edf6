//! Hodges–Lehmann estimate of the relative change between two sets of runs, with Moses'
//! distribution-free 95% confidence interval: robust to an outlier run, no normality assumed.
//!
//! Works on logs, so the shift is multiplicative: with `d_ij = ln v_j − ln b_i` over all
//! `m·n` pairs, `change = exp(median d) − 1`, CI `= [exp(d_(k)) − 1, exp(d_(mn−k+1)) − 1]`
//! (order statistics of the sorted differences). `k − 1` is the lower 2.5% critical value
//! of the Mann–Whitney U null distribution:
//! * exact (default when `m·n ≤ 2500`): the largest `k ≥ 1` with `P(U ≤ k − 1) ≤ 0.025`,
//!   so coverage is at least 95%;
//! * normal approximation (larger samples): `k = ⌊m·n/2 − z_{0.975}·√(m·n·(m+n+1)/12)⌋`
//!   (no tie or continuity correction, Hollander & Wolfe).

use super::mann_whitney::{Method, MwuMethod};
use super::ratio::Ratio;
use super::tdist::normal_quantile;
use super::u_dist::UDistribution;
use super::validate;
use super::StatsError;

/// Largest `m·n` for which the automatic choice uses the exact U distribution.
pub const HL_EXACT_MAX_PAIRS: usize = 2500;

/// Hodges–Lehmann relative change `variant / baseline − 1` with Moses' 95% CI
/// (automatic exact/normal choice, see module docs). Values must be positive.
pub fn hodges_lehmann_ratio(baseline: &[f64], variant: &[f64]) -> Result<Ratio, StatsError> {
    hodges_lehmann_ratio_with(baseline, variant, MwuMethod::Auto)
}

/// [`hodges_lehmann_ratio`] with the rank `k` of the interval taken from an explicit method.
pub fn hodges_lehmann_ratio_with(
    baseline: &[f64],
    variant: &[f64],
    method: MwuMethod,
) -> Result<Ratio, StatsError> {
    validate::positive(baseline, 1)?;
    validate::positive(variant, 1)?;
    let log_b: Vec<f64> = baseline.iter().map(|v| v.ln()).collect();
    let log_v: Vec<f64> = variant.iter().map(|v| v.ln()).collect();
    let (shift, lo, hi) = shift_with_interval(&log_b, &log_v, method)?;
    Ok(Ratio {
        change: shift.exp_m1(),
        ci: (lo.exp_m1(), hi.exp_m1()),
    })
}

/// Hodges–Lehmann shift `variant − baseline` on the raw values (the median of all pairwise
/// differences) with Moses' 95% CI: the effect of a metric that can be 0 (an error rate of 0
/// has no logarithm). Ties are fine: the interval's ends are order statistics of the
/// differences, equal differences included.
pub fn hodges_lehmann_shift(baseline: &[f64], variant: &[f64]) -> Result<Ratio, StatsError> {
    validate::finite(baseline, 1)?;
    validate::finite(variant, 1)?;
    let (shift, lo, hi) = shift_with_interval(baseline, variant, MwuMethod::Auto)?;
    Ok(Ratio {
        change: shift,
        ci: (lo, hi),
    })
}

/// Median of the pairwise differences `v_j − b_i` and Moses' interval `[d_(k), d_(mn−k+1)]`.
fn shift_with_interval(
    baseline: &[f64],
    variant: &[f64],
    method: MwuMethod,
) -> Result<(f64, f64, f64), StatsError> {
    let (m, n) = (baseline.len(), variant.len());
    let method = match method {
        MwuMethod::Exact => Method::Exact,
        MwuMethod::Asymptotic => Method::Asymptotic,
        MwuMethod::Auto | MwuMethod::Conditional | MwuMethod::ExactIfSmall
            if m * n <= HL_EXACT_MAX_PAIRS =>
        {
            Method::Exact
        }
        _ => Method::Asymptotic,
    };
    let k = moses_rank(m, n, method)?.ok_or(StatsError::TooSmallForInterval { m, n })?;
    let mut diffs = Vec::with_capacity(m * n);
    for b in baseline {
        for v in variant {
            diffs.push(v - b);
        }
    }
    diffs.sort_by(f64::total_cmp);
    let total = diffs.len();
    Ok((
        validate::median_sorted(&diffs),
        diffs[k - 1],
        diffs[total - k],
    ))
}

/// 1-based rank `k` of Moses' interval for sample sizes `m`, `n`; `None` when even the
/// extreme differences cannot reach 95% coverage.
pub fn moses_rank(m: usize, n: usize, method: Method) -> Result<Option<usize>, StatsError> {
    let pairs = m * n;
    match method {
        Method::Exact => {
            let dist = UDistribution::new(m, n, pairs / 2);
            let mut best = None;
            let mut cdf = 0.0;
            for u in 0..=pairs / 2 {
                cdf += dist.pmf(u);
                if cdf <= 0.025 {
                    best = Some(u + 1);
                } else {
                    break;
                }
            }
            Ok(best)
        }
        Method::Asymptotic | Method::Conditional => {
            let z = normal_quantile(0.975)?;
            let (mf, nf) = (m as f64, n as f64);
            let k = (mf * nf / 2.0 - z * (mf * nf * (mf + nf + 1.0) / 12.0).sqrt()).floor();
            Ok(if k >= 1.0 { Some(k as usize) } else { None })
        }
    }
}
