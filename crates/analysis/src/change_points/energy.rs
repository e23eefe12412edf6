//! The E-divisive means statistic of Matteson & James: for a segment of the series, the split
//! point τ (and end κ) that maximises the energy distance q̂ between `x[start..τ]` and
//! `x[τ..κ]`. Computed as Apache Otava's `PairDistanceCalculator` does (power 1, the candidate
//! taken at the first maximum of its τ×κ matrix, whose lower triangle holds zeros), so the same
//! candidates come out, including on degenerate segments where every q̂ is ≤ 0.

/// The best split of one segment: its first index after the split and its q̂.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Candidate {
    pub index: usize,
    pub qhat: f64,
}

/// Sums of pairwise distances `Σ_{a ≤ i < k < b} |x_i − x_k|` for every `start ≤ a ≤ b ≤ end`,
/// stored flat; O(n²) time and memory for a segment of n points (n ≤ the window, 50 by default).
struct PairSums {
    start: usize,
    side: usize,
    sums: Vec<f64>,
}

impl PairSums {
    fn new(series: &[f64], start: usize, end: usize) -> PairSums {
        let side = end - start + 1;
        let mut sums = vec![0.0; side * side];
        // W(a, b) = W(a + 1, b) + Σ_{k = a+1}^{b-1} |x_a − x_k|, filled from the last a upwards.
        for a in (start..end).rev() {
            let mut row = 0.0;
            for b in a + 1..=end {
                if b >= a + 2 {
                    row += (series[a] - series[b - 1]).abs();
                }
                let below = sums[(a + 1 - start) * side + (b - start)];
                sums[(a - start) * side + (b - start)] = below + row;
            }
        }
        PairSums { start, side, sums }
    }

    fn get(&self, a: usize, b: usize) -> f64 {
        if b <= a {
            return 0.0;
        }
        self.sums[(a - self.start) * self.side + (b - self.start)]
    }
}

/// q̂ of splitting `x[start..kappa]` at `tau` (both sides non-empty).
fn qhat(sums: &PairSums, start: usize, tau: usize, kappa: usize) -> f64 {
    let n = (tau - start) as f64;
    let m = (kappa - tau) as f64;
    let within_left = sums.get(start, tau);
    let within_right = sums.get(tau, kappa);
    let between = sums.get(start, kappa) - within_left - within_right;
    let total = n + m;
    // A side of one point has no pairs: its term is zero (Otava masks the division by zero).
    let left_term = if tau - start > 1 {
        2.0 * m / total / (n - 1.0) * within_left
    } else {
        0.0
    };
    let right_term = if kappa - tau > 1 {
        2.0 * n / total / (m - 1.0) * within_right
    } else {
        0.0
    };
    2.0 / total * between - left_term - right_term
}

/// The best split of `series[start..end]` (at least two points).
pub(super) fn best_split(series: &[f64], start: usize, end: usize) -> Candidate {
    debug_assert!(end - start > 1, "a segment to split needs two points");
    let sums = PairSums::new(series, start, end);
    let size = end - 1 - start;
    let mut best = Candidate {
        index: start + 1,
        qhat: f64::NEG_INFINITY,
    };
    // Row i is τ = start + 1 + i, column j is κ = start + 2 + j; below the diagonal Otava's
    // matrix holds 0.0, which wins the argmax when every real q̂ is negative.
    for i in 0..size {
        for j in 0..size {
            let value = if j >= i {
                qhat(&sums, start, start + 1 + i, start + 2 + j)
            } else {
                0.0
            };
            if value > best.qhat {
                best = Candidate {
                    index: start + 1 + i,
                    qhat: value,
                };
            }
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    /// q̂ straight from its definition, to check the pair-sum bookkeeping.
    fn qhat_naive(x: &[f64], tau: usize, kappa: usize) -> f64 {
        let (left, right) = (&x[..tau], &x[tau..kappa]);
        let (n, m) = (left.len() as f64, right.len() as f64);
        let pairs = |v: &[f64]| -> f64 {
            let mut s = 0.0;
            for i in 0..v.len() {
                for k in i + 1..v.len() {
                    s += (v[i] - v[k]).abs();
                }
            }
            s
        };
        let between: f64 = left
            .iter()
            .map(|a| right.iter().map(|b| (a - b).abs()).sum::<f64>())
            .sum();
        let l = if left.len() > 1 {
            2.0 * m / (n + m) / (n - 1.0) * pairs(left)
        } else {
            0.0
        };
        let r = if right.len() > 1 {
            2.0 * n / (n + m) / (m - 1.0) * pairs(right)
        } else {
            0.0
        };
        2.0 / (n + m) * between - l - r
    }

    #[test]
    fn pair_sums_match_the_definition() {
        let x = [3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0];
        let sums = PairSums::new(&x, 0, x.len());
        for tau in 1..x.len() {
            for kappa in tau + 1..=x.len() {
                let got = qhat(&sums, 0, tau, kappa);
                let want = qhat_naive(&x, tau, kappa);
                assert!(
                    (got - want).abs() < 1e-12,
                    "tau {tau} kappa {kappa}: {got} vs {want}"
                );
            }
        }
    }

    #[test]
    fn a_step_is_split_at_its_first_new_point() {
        let x = [1.0, 1.1, 0.9, 1.0, 5.0, 5.1, 4.9, 5.0];
        assert_eq!(best_split(&x, 0, x.len()).index, 4);
        // The same inside a sub-segment.
        let y = [9.0, 9.0, 1.0, 1.1, 0.9, 5.0, 5.1, 4.9];
        assert_eq!(best_split(&y, 2, y.len()).index, 5);
    }

    #[test]
    fn a_constant_segment_takes_the_first_split() {
        assert_eq!(
            best_split(&[2.0; 6], 0, 6),
            Candidate {
                index: 1,
                qhat: 0.0
            }
        );
    }
}
