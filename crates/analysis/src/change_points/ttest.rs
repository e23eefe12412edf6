//! The significance test of a change point: Student's two-sided t-test between the segments on
//! either side, from their means and *population* standard deviations, exactly as Apache
//! Otava's `TTestSignificanceTester` calls `scipy.stats.ttest_ind_from_stats` (pooled variance
//! with `ddof = 0` deviations, so p-values agree with Otava's rather than with a textbook
//! t-test on the same points).

use statrs::function::beta::beta_reg;

/// The two segments either side of a change point and how different they are.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SegmentTest {
    /// Two-sided p-value of equal means; 1.0 when it is undefined (both sides constant and
    /// equal, where Otava's NaN never counts as significant either).
    pub p_value: f64,
    /// Mean of the segment before the change point.
    pub mean_before: f64,
    /// Mean of the segment from the change point on.
    pub mean_after: f64,
    /// Population standard deviation (ddof 0) before.
    pub std_before: f64,
    /// Population standard deviation (ddof 0) after.
    pub std_after: f64,
}

impl SegmentTest {
    /// `mean_after / mean_before − 1`, 0 when the mean before is 0 (Otava's convention).
    pub fn forward_change(&self) -> f64 {
        if self.mean_before == 0.0 {
            return 0.0;
        }
        self.mean_after / self.mean_before - 1.0
    }

    /// `mean_before / mean_after − 1`, 0 when the mean after is 0.
    pub fn backward_change(&self) -> f64 {
        if self.mean_after == 0.0 {
            return 0.0;
        }
        self.mean_before / self.mean_after - 1.0
    }

    /// The larger relative change of the two directions, the quantity `min_magnitude` bounds.
    pub fn magnitude(&self) -> f64 {
        self.forward_change()
            .abs()
            .max(self.backward_change().abs())
    }
}

fn mean_and_population_std(values: &[f64]) -> (f64, f64) {
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    if values.len() < 2 {
        return (mean, 0.0);
    }
    let var = values.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n;
    (mean, var.sqrt())
}

/// Compares two non-empty segments.
pub(super) fn compare_segments(left: &[f64], right: &[f64]) -> SegmentTest {
    let (mean_before, std_before) = mean_and_population_std(left);
    let (mean_after, std_after) = mean_and_population_std(right);
    let p_value = if left.len() + right.len() > 2 {
        student_p(
            left.len(),
            std_before,
            right.len(),
            std_after,
            mean_before - mean_after,
        )
    } else {
        1.0
    };
    SegmentTest {
        p_value,
        mean_before,
        mean_after,
        std_before,
        std_after,
    }
}

/// SciPy's equal-variance `ttest_ind_from_stats`, two-sided: the tail is the regularized
/// incomplete beta `I_{df/(df+t²)}(df/2, 1/2)`, accurate far into the tail (no `1 − cdf`).
fn student_p(n1: usize, std1: f64, n2: usize, std2: f64, difference: f64) -> f64 {
    let (n1, n2) = (n1 as f64, n2 as f64);
    let df = n1 + n2 - 2.0;
    let pooled = ((n1 - 1.0) * std1 * std1 + (n2 - 1.0) * std2 * std2) / df;
    let t = difference / (pooled * (1.0 / n1 + 1.0 / n2)).sqrt();
    if t.is_nan() {
        return 1.0;
    }
    if t.is_infinite() {
        return 0.0;
    }
    let x = df / (df + t * t);
    beta_reg(df / 2.0, 0.5, x).clamp(0.0, 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_scipy_ttest_ind_from_stats() {
        // scipy.stats.ttest_ind_from_stats(2.5, np.std([1,2,3,4]), 4, 6.0, np.std([5,6,7]), 3)
        // -> pvalue 0.006141322461464884
        let t = compare_segments(&[1.0, 2.0, 3.0, 4.0], &[5.0, 6.0, 7.0]);
        assert!(
            (t.p_value - 0.006_141_322_461_464_884).abs() < 1e-12,
            "{t:?}"
        );
        assert!((t.std_before - 1.118_033_988_749_895).abs() < 1e-12);
    }

    #[test]
    fn constant_sides_are_certain_or_undefined() {
        assert_eq!(compare_segments(&[1.0, 1.0], &[2.0, 2.0]).p_value, 0.0);
        assert_eq!(compare_segments(&[1.0, 1.0], &[1.0, 1.0]).p_value, 1.0);
        assert_eq!(compare_segments(&[1.0], &[2.0]).p_value, 1.0);
    }

    #[test]
    fn magnitude_is_the_larger_direction() {
        let t = compare_segments(&[100.0, 100.0], &[50.0, 50.0]);
        assert!((t.forward_change() + 0.5).abs() < 1e-15);
        assert!((t.magnitude() - 1.0).abs() < 1e-15);
    }
}
