//! Kendall's τ of per-run values against run order: a trend over the runs of a variant
//! (warm-up not long enough, a leak, a machine that heats up) shows as drift.
//!
//! Matches `scipy.stats.kendalltau(range(n), values)` (τ-b, `method='auto'`): the exact
//! null distribution of the number of concordant pairs (Mahonian numbers) when the values
//! have no ties and n ≤ 33, otherwise the normal approximation of `S = concordant −
//! discordant` with the tie-corrected variance, no continuity correction.

use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, Normal};

use super::mann_whitney::Method;
use super::validate;
use super::StatsError;

/// Kendall's τ between run order and values, with its two-sided p-value.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Trend {
    /// τ-b in [−1, 1]: +1 when every run is above all earlier ones.
    pub tau: f64,
    /// Two-sided p-value of "no monotonic trend".
    pub p_value: f64,
    /// `exact` or `asymptotic`.
    pub method: Method,
}

/// Largest n for which the exact distribution is used (SciPy's rule).
const EXACT_MAX_N: usize = 33;

/// Kendall's trend test of `values` (in run order). Needs ≥ 2 values, not all equal.
pub fn kendall_trend(values: &[f64]) -> Result<Trend, StatsError> {
    validate::finite(values, 2)?;
    let n = values.len();
    let (mut concordant, mut discordant) = (0usize, 0usize);
    for i in 0..n {
        for j in i + 1..n {
            if values[j] > values[i] {
                concordant += 1;
            } else if values[j] < values[i] {
                discordant += 1;
            }
        }
    }
    let total = n * (n - 1) / 2;
    let sorted = validate::sorted(values);
    let mut tie_sizes = Vec::new();
    let mut i = 0;
    while i < n {
        let mut j = i + 1;
        while j < n && sorted[j] == sorted[i] {
            j += 1;
        }
        if j - i > 1 {
            tie_sizes.push((j - i) as f64);
        }
        i = j;
    }
    let tied_pairs: f64 = tie_sizes.iter().map(|t| t * (t - 1.0) / 2.0).sum();
    if tied_pairs as usize == total {
        return Err(StatsError::Degenerate("all values are equal"));
    }
    let s = concordant as f64 - discordant as f64;
    let tau = (s / (total as f64).sqrt() / (total as f64 - tied_pairs).sqrt()).clamp(-1.0, 1.0);
    let exact =
        tie_sizes.is_empty() && (n <= EXACT_MAX_N || discordant.min(total - discordant) <= 1);
    let (p_value, method) = if exact {
        (exact_p(n, concordant), Method::Exact)
    } else {
        let nf = n as f64;
        let m = nf * (nf - 1.0);
        let y1: f64 = tie_sizes
            .iter()
            .map(|t| t * (t - 1.0) * (2.0 * t + 5.0))
            .sum();
        let var = (m * (2.0 * nf + 5.0) - y1) / 18.0;
        let z = s / var.sqrt();
        (2.0 * Normal::standard().sf(z.abs()), Method::Asymptotic)
    };
    Ok(Trend {
        tau,
        p_value: p_value.clamp(0.0, 1.0),
        method,
    })
}

/// Two-sided exact p of `c` concordant pairs among n untied values (SciPy's
/// `_kendall_p_exact`): twice the lower tail of the Mahonian distribution at `min(c, total − c)`.
fn exact_p(n: usize, c: usize) -> f64 {
    let total = n * (n - 1) / 2;
    let c = c.min(total - c);
    let factorial = |k: usize| (1..=k).map(|i| i as f64).product::<f64>();
    if n <= 2 {
        return 1.0;
    }
    if c == 0 {
        return 2.0 / factorial(n);
    }
    if c == 1 {
        return 2.0 / factorial(n - 1);
    }
    if 4 * c == n * (n - 1) {
        return 1.0;
    }
    // counts[k]: permutations of j items with k inversions, for k ≤ c (built for j = 2..n).
    let mut counts = vec![0.0f64; c + 1];
    counts[0] = 1.0;
    counts[1] = 1.0;
    for j in 3..=n {
        let mut running = 0.0;
        for v in counts.iter_mut() {
            running += *v;
            *v = running;
        }
        if j <= c {
            let before = counts.clone();
            for k in j..=c {
                counts[k] -= before[k - j];
            }
        }
    }
    2.0 * counts.iter().sum::<f64>() / factorial(n)
}
