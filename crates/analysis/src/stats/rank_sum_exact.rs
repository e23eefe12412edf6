//! Exact conditional null distribution of the Mann–Whitney rank sum given the observed ties.
//!
//! Per-run percentiles come out of HDR histograms with 3 significant digits, so equal values
//! across runs are the norm, and the normal approximation is poor for 5–10 runs per side.
//! Under the null hypothesis every way of splitting the pooled (tied) values into the two
//! samples is equally likely; the rank sum of sample `a` is then a sum over tie groups of
//! `j · midrank` where `j` of the group's `t` members fall into `a` (C(t, j) ways). Counting
//! those splits group by group gives the distribution exactly (benchstat does the same for
//! up to 25 values per side). Midranks are halves, so sums are kept doubled, as integers.

use super::u_dist::binomial;

/// `P(S ≤ s_obs)` and `P(S ≥ s_obs)` of the rank sum `S` of a sample of `n1` values drawn
/// without replacement from the pooled tie groups `(size, doubled midrank)`.
pub(crate) struct ConditionalRankSum {
    /// `counts[s]`: number of splits whose doubled rank sum is `s`, divided by C(N, n1).
    probabilities: Vec<f64>,
}

impl ConditionalRankSum {
    /// `groups`: each tie group's size and doubled midrank (`2·mean rank`, an integer).
    pub(crate) fn new(groups: &[(usize, usize)], n1: usize) -> Self {
        let max_sum: usize = {
            let mut doubled: Vec<usize> = groups
                .iter()
                .flat_map(|&(t, r2)| std::iter::repeat_n(r2, t))
                .collect();
            doubled.sort_unstable_by(|a, b| b.cmp(a));
            doubled.iter().take(n1).sum()
        };
        // ways[k][s]: splits of the groups seen so far with k values in `a`, doubled sum s.
        let width = max_sum + 1;
        let mut ways = vec![vec![0.0f64; width]; n1 + 1];
        ways[0][0] = 1.0;
        let mut seen = 0usize;
        for &(t, r2) in groups {
            seen += t;
            for k in (1..=n1.min(seen)).rev() {
                for j in 1..=t.min(k) {
                    let c = binomial(t, j);
                    let shift = j * r2;
                    let (lower, upper) = ways.split_at_mut(k);
                    let from = &lower[k - j];
                    let to = &mut upper[0];
                    for s in shift..width {
                        let w = from[s - shift];
                        if w != 0.0 {
                            to[s] += c * w;
                        }
                    }
                }
            }
        }
        let total: usize = groups.iter().map(|g| g.0).sum();
        let splits = binomial(total, n1);
        let probabilities = ways[n1].iter().map(|w| w / splits).collect();
        ConditionalRankSum { probabilities }
    }

    /// `P(S ≤ s)` for a doubled rank sum `s`.
    pub(crate) fn cdf(&self, doubled_sum: usize) -> f64 {
        let end = (doubled_sum + 1).min(self.probabilities.len());
        self.probabilities[..end].iter().sum()
    }

    /// `P(S ≥ s)` for a doubled rank sum `s`.
    pub(crate) fn sf(&self, doubled_sum: usize) -> f64 {
        self.probabilities
            .get(doubled_sum..)
            .map(|tail| tail.iter().sum())
            .unwrap_or(0.0)
    }

    /// Two-sided p-value `min(1, 2·min(P(S ≤ s), P(S ≥ s)))`, as an exact permutation test
    /// (`scipy.stats.permutation_test(..., alternative='two-sided')`) gives it.
    pub(crate) fn two_sided(&self, doubled_sum: usize) -> f64 {
        (2.0 * self.cdf(doubled_sum).min(self.sf(doubled_sum))).min(1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_ties_it_is_the_classic_distribution() {
        // 3 vs 4, no ties: ranks 1..7 (doubled 2..14); P(S = 6) = 1/35 (a takes 1, 2, 3).
        let groups: Vec<(usize, usize)> = (1..=7).map(|r| (1, 2 * r)).collect();
        let d = ConditionalRankSum::new(&groups, 3);
        assert!((d.cdf(12) - 1.0 / 35.0).abs() < 1e-15);
        assert!((d.two_sided(12) - 2.0 / 35.0).abs() < 1e-15);
        assert!((d.cdf(usize::MAX / 2) - 1.0).abs() < 1e-12);
    }

    #[test]
    fn ties_are_counted_as_splits() {
        // Values 1, 2, 2, 3 with n1 = 2: midranks 1, 2.5, 2.5, 4 (doubled 2, 5, 5, 8).
        // Splits of 2 out of 4 (6): {1,2}x2 → 7, {1,3} → 10, {2,2} → 10, {2,3}x2 → 13.
        let d = ConditionalRankSum::new(&[(1, 2), (2, 5), (1, 8)], 2);
        assert!((d.cdf(7) - 2.0 / 6.0).abs() < 1e-15);
        assert!((d.cdf(10) - 4.0 / 6.0).abs() < 1e-15);
        assert!((d.sf(13) - 2.0 / 6.0).abs() < 1e-15);
        assert_eq!(d.two_sided(10), 1.0);
    }
}
