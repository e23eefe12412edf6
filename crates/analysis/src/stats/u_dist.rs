//! Exact null distribution of the Mann–Whitney U statistic (no ties), by counting.
//!
//! The number of arrangements of two samples of sizes `m` and `n` with `U = u` is the
//! coefficient of `q^u` in the Gaussian binomial `[m+n choose m]_q`, built with the
//! q-Pascal recurrence `[N, k] = [N−1, k−1] + q^k [N−1, k]` (additions only, so the counts
//! keep full relative precision, also far in the tails).

/// Null distribution of U for sample sizes `m`, `n`, truncated at `max_u`.
pub(crate) struct UDistribution {
    /// Probability of `U = u` for `u = 0..=max_u`.
    pmf: Vec<f64>,
}

impl UDistribution {
    /// Builds `P(U = u)` for `u ≤ max_u` (values above `m·n/2` are not needed thanks to symmetry).
    pub(crate) fn new(m: usize, n: usize, max_u: usize) -> Self {
        let (small, large) = if m <= n { (m, n) } else { (n, m) };
        let max_u = max_u.min(small * large);
        let len = max_u + 1;
        // rows[k] = [N, k]_q truncated to degree max_u; start with N = 0: [0,0] = 1.
        let mut rows: Vec<Vec<f64>> = vec![vec![0.0; len]; small + 1];
        rows[0][0] = 1.0;
        for big_n in 1..=(small + large) {
            let top = small.min(big_n);
            for k in (1..=top).rev() {
                // new[k] = old[k-1] + q^k old[k]
                let (lower, upper) = rows.split_at_mut(k);
                let prev = &lower[k - 1];
                let cur = &mut upper[0];
                for u in (0..len).rev() {
                    let shifted = if u >= k { cur[u - k] } else { 0.0 };
                    cur[u] = prev[u] + shifted;
                }
            }
        }
        let total = binomial(small + large, small);
        let pmf = rows[small].iter().map(|c| c / total).collect();
        UDistribution { pmf }
    }

    /// `P(U = u)` (0 beyond the truncation point).
    pub(crate) fn pmf(&self, u: usize) -> f64 {
        self.pmf.get(u).copied().unwrap_or(0.0)
    }

    /// `P(U ≤ u)` for `u` within the truncation.
    pub(crate) fn cdf(&self, u: usize) -> f64 {
        let end = (u + 1).min(self.pmf.len());
        self.pmf[..end].iter().sum()
    }
}

/// `C(n, k)` as a float (exact while it fits in 53 bits).
pub(crate) fn binomial(n: usize, k: usize) -> f64 {
    let k = k.min(n - k);
    let mut acc = 1.0f64;
    for i in 0..k {
        acc = acc * (n - i) as f64 / (i + 1) as f64;
    }
    acc.round()
}
