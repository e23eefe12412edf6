//! The Wald–Wolfowitz runs test on the signs of a sequence: whether its positive and negative
//! values come in fewer runs than chance would give. A model that fits leaves residuals whose
//! signs alternate at random; one that misses the data's shape leaves long runs (the curve
//! above the points, then below them, then above).

use statrs::function::factorial::ln_binomial;

/// The runs test on a sequence's signs (zeros dropped).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SignRuns {
    /// Runs of equal sign observed.
    pub runs: u64,
    /// Runs expected under random order: `1 + 2·n₊·n₋ / (n₊ + n₋)`.
    pub expected: f64,
    /// One-sided exact p of this few runs or fewer, given the counts of each sign.
    pub p_fewer: f64,
}

/// The test on `values` in their order; `None` when either sign is absent (no arrangement
/// to judge).
pub fn sign_runs(values: &[f64]) -> Option<SignRuns> {
    let signs: Vec<bool> = values
        .iter()
        .filter(|v| **v != 0.0 && v.is_finite())
        .map(|v| *v > 0.0)
        .collect();
    let plus = signs.iter().filter(|s| **s).count() as u64;
    let minus = signs.len() as u64 - plus;
    if plus == 0 || minus == 0 {
        return None;
    }
    let runs = 1 + signs.windows(2).filter(|w| w[0] != w[1]).count() as u64;
    let p_fewer: f64 = (2..=runs)
        .map(|r| probability_of_runs(r, plus, minus))
        .sum();
    Some(SignRuns {
        runs,
        expected: 1.0 + 2.0 * (plus * minus) as f64 / (plus + minus) as f64,
        p_fewer: p_fewer.min(1.0),
    })
}

/// P(R = r) for `n1` and `n2` values of each sign in random order (the exact distribution,
/// in log space so that long sequences do not overflow).
fn probability_of_runs(r: u64, n1: u64, n2: u64) -> f64 {
    let ln_choose = |n: u64, k: u64| {
        if k > n {
            f64::NEG_INFINITY
        } else {
            ln_binomial(n, k)
        }
    };
    let total = ln_choose(n1 + n2, n1);
    let k = r / 2;
    if k == 0 {
        return 0.0;
    }
    let ways = if r.is_multiple_of(2) {
        2.0 * (ln_choose(n1 - 1, k - 1) + ln_choose(n2 - 1, k - 1)).exp()
    } else {
        (ln_choose(n1 - 1, k) + ln_choose(n2 - 1, k - 1)).exp()
            + (ln_choose(n1 - 1, k - 1) + ln_choose(n2 - 1, k)).exp()
    };
    ways / total.exp()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_distribution_sums_to_one() {
        for (n1, n2) in [(1, 1), (3, 4), (10, 10), (30, 7), (200, 180)] {
            let total: f64 = (2..=n1 + n2).map(|r| probability_of_runs(r, n1, n2)).sum();
            assert!((total - 1.0).abs() < 1e-9, "{n1}, {n2}: {total}");
        }
    }

    #[test]
    fn few_runs_are_unlikely_and_alternation_is_not() {
        // + + + + - - - -: two runs of eight, P = 2 / C(8, 4) = 2/70.
        let blocks = sign_runs(&[1.0, 2.0, 1.0, 3.0, -1.0, -2.0, -1.0, -3.0]).unwrap();
        assert_eq!(blocks.runs, 2);
        assert!((blocks.p_fewer - 2.0 / 70.0).abs() < 1e-12, "{blocks:?}");
        assert!((blocks.expected - 5.0).abs() < 1e-12);
        let alternating = sign_runs(&[1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0]).unwrap();
        assert_eq!(alternating.runs, 8);
        assert!((alternating.p_fewer - 1.0).abs() < 1e-9, "{alternating:?}");
        assert!(sign_runs(&[1.0, 2.0, 0.0]).is_none());
    }
}
