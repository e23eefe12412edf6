//! Two-sided Mann–Whitney U test between two sets of per-run values, matching
//! `scipy.stats.mannwhitneyu(a, b)` (SciPy 1.17, `use_continuity=True`, `alternative='two-sided'`).
//!
//! SciPy's `method='auto'` (read from `scipy/stats/_mannwhitneyu.py::_mwu_choose_method`):
//! asymptotic when *both* samples have more than 8 values, otherwise asymptotic when there
//! are ties, otherwise exact. So exact is used when at least one sample has ≤ 8 values and
//! there are no ties. Reproduced exactly, including SciPy's behaviour when exact is forced
//! on tied data (the half-integer U is truncated before the exact tail is taken).

use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, Normal};

use super::rank_sum_exact::ConditionalRankSum;
use super::ranks::average_ranks;
use super::u_dist::UDistribution;
use super::validate;
use super::StatsError;

/// How a p-value (or a rank-based interval) was computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Method {
    /// Exact null distribution of U (no ties).
    Exact,
    /// Normal approximation.
    Asymptotic,
    /// Exact null distribution conditional on the observed ties (a permutation test).
    Conditional,
}

/// Largest sample size per side for which [`rank_sum_test`] enumerates the exact conditional
/// distribution when there are ties (benchstat's `MannWhitneyTiesExactLimit`).
pub const EXACT_MAX_PER_SIDE_TIES: usize = 25;

/// Largest sample size per side for the exact distribution without ties (benchstat's
/// `MannWhitneyExactLimit`).
pub const EXACT_MAX_PER_SIDE: usize = 50;

/// Requested method, like SciPy's `method=` argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MwuMethod {
    /// SciPy's `'auto'` rule (see module docs).
    Auto,
    /// Force the exact distribution.
    Exact,
    /// Force the normal approximation (with tie and continuity correction).
    Asymptotic,
    /// Force the exact conditional distribution given the ties.
    Conditional,
    /// Exact conditional up to [`EXACT_MAX_PER_SIDE_TIES`] values per side when there are
    /// ties (up to [`EXACT_MAX_PER_SIDE`] without), normal approximation beyond.
    ExactIfSmall,
}

/// Result of a two-sided Mann–Whitney U test.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct MannWhitney {
    /// U statistic of sample `a` (SciPy's `statistic`): `R_a − n_a(n_a+1)/2`.
    pub u: f64,
    /// Two-sided p-value, clipped to `[0, 1]`.
    pub p_value: f64,
    /// Method actually used.
    pub method: Method,
}

/// Two-sided Mann–Whitney U test as comparisons of runs use it ([`MwuMethod::ExactIfSmall`]).
pub fn rank_sum_test(a: &[f64], b: &[f64]) -> Result<MannWhitney, StatsError> {
    mann_whitney_u_with(a, b, MwuMethod::ExactIfSmall)
}

/// Two-sided Mann–Whitney U test with SciPy's `'auto'` method choice.
pub fn mann_whitney_u(a: &[f64], b: &[f64]) -> Result<MannWhitney, StatsError> {
    mann_whitney_u_with(a, b, MwuMethod::Auto)
}

/// Two-sided Mann–Whitney U test with an explicit method (SciPy's `method=`).
pub fn mann_whitney_u_with(
    a: &[f64],
    b: &[f64],
    method: MwuMethod,
) -> Result<MannWhitney, StatsError> {
    validate::finite(a, 1)?;
    validate::finite(b, 1)?;
    let (n1, n2) = (a.len(), b.len());
    let mut pooled = a.to_vec();
    pooled.extend_from_slice(b);
    let (ranks, ties) = average_ranks(&pooled);
    let r1: f64 = ranks[..n1].iter().sum();
    let n1f = n1 as f64;
    let n2f = n2 as f64;
    let u1 = r1 - n1f * (n1f + 1.0) / 2.0;
    let u2 = n1f * n2f - u1;
    let u = u1.max(u2);
    let has_ties = ties.iter().any(|&t| t > 1);
    let method = match method {
        MwuMethod::Exact => Method::Exact,
        MwuMethod::Asymptotic => Method::Asymptotic,
        MwuMethod::Conditional => Method::Conditional,
        MwuMethod::ExactIfSmall => {
            let limit = if has_ties {
                EXACT_MAX_PER_SIDE_TIES
            } else {
                EXACT_MAX_PER_SIDE
            };
            if n1 <= limit && n2 <= limit {
                Method::Conditional
            } else {
                Method::Asymptotic
            }
        }
        MwuMethod::Auto => {
            if (n1 > 8 && n2 > 8) || has_ties {
                Method::Asymptotic
            } else {
                Method::Exact
            }
        }
    };
    let p = match method {
        Method::Exact => 2.0 * exact_sf(u, n1, n2),
        Method::Asymptotic => 2.0 * asymptotic_sf(u, n1, n2, &ties),
        Method::Conditional => conditional_p(&pooled, &ranks, n1),
    };
    Ok(MannWhitney {
        u: u1,
        p_value: p.clamp(0.0, 1.0),
        method,
    })
}

/// `P(U ≥ u)` under the exact null, as SciPy's `_MWU.sf` (u truncated to an integer).
fn exact_sf(u: f64, n1: usize, n2: usize) -> f64 {
    let total = n1 * n2;
    let k = (u.trunc() as usize).min(total);
    let kc = total - k;
    if k < kc {
        let dist = UDistribution::new(n1, n2, k);
        1.0 - dist.cdf(k) + dist.pmf(k)
    } else {
        UDistribution::new(n1, n2, kc).cdf(kc)
    }
}

/// Two-sided p of the rank sum of the first `n1` pooled values under the exact conditional
/// distribution given the ties.
fn conditional_p(pooled: &[f64], ranks: &[f64], n1: usize) -> f64 {
    let mut groups: Vec<(f64, usize, usize)> = Vec::new(); // (value, size, doubled midrank)
    let mut order: Vec<usize> = (0..pooled.len()).collect();
    order.sort_by(|&i, &j| pooled[i].total_cmp(&pooled[j]));
    for &i in &order {
        match groups.last_mut() {
            Some(g) if g.0 == pooled[i] => g.1 += 1,
            _ => groups.push((pooled[i], 1, (2.0 * ranks[i]).round() as usize)),
        }
    }
    let sizes: Vec<(usize, usize)> = groups.iter().map(|g| (g.1, g.2)).collect();
    let observed: f64 = ranks[..n1].iter().map(|r| 2.0 * r).sum();
    ConditionalRankSum::new(&sizes, n1).two_sided(observed.round() as usize)
}

/// `P(Z ≥ z)` for the tie-corrected, continuity-corrected z of SciPy's `_get_mwu_z`.
fn asymptotic_sf(u: f64, n1: usize, n2: usize, ties: &[usize]) -> f64 {
    let n1f = n1 as f64;
    let n2f = n2 as f64;
    let n = n1f + n2f;
    let mu = n1f * n2f / 2.0;
    let tie_term: f64 = ties
        .iter()
        .map(|&t| {
            let t = t as f64;
            t * t * t - t
        })
        .sum();
    let var = n1f * n2f / 12.0 * ((n + 1.0) - tie_term / (n * (n - 1.0)));
    let numerator = u - mu - 0.5;
    if var <= 0.0 || var.is_nan() {
        // All values tied (or n == 1): z = ±inf or undefined; SciPy ends at p = 1 here.
        return if numerator > 0.0 { 0.0 } else { 1.0 };
    }
    let z = numerator / var.sqrt();
    Normal::standard().cdf(-z)
}
