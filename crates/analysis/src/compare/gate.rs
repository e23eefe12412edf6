//! `--fail-on-regression X%`: a metric fails the gate only when its verdict is a regression
//! (significant after Holm, CI excluding 0) **and** the whole 95% CI of the change lies beyond
//! X% in the bad direction — evidence of an X% regression, not a point estimate above X%.
//! Under no change the gate can fire only where Holm already found significance, so its
//! family-wise false-alarm rate stays ≤ α over the gated metrics.

use super::Comparison;
use loadlab_metrics::{GoodDirection, MetricId, Verdict};
use serde::{Deserialize, Serialize};

/// A metric that failed the regression gate.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Regression {
    pub baseline: String,
    pub variant: String,
    pub metric: MetricId,
    pub verdict: Verdict,
    /// The change is at least this large in the bad direction (the CI's near end, signed
    /// like the change: +0.061 for latency, −0.061 for throughput); `null` when the
    /// baseline's median is 0, so any increase is unbounded relative to it.
    pub at_least: Option<f64>,
    pub change_ci: Option<[f64; 2]>,
    pub difference_ci: Option<[f64; 2]>,
    /// The bound (fraction) it was held against.
    pub bound: f64,
}

/// The comparisons that fail a `bound` (fraction, ≥ 0) regression gate.
pub fn regressions(comparisons: &[Comparison], bound: f64) -> Vec<Regression> {
    comparisons
        .iter()
        .filter(|c| c.verdict.is_regression())
        .filter_map(|c| {
            let higher_is_good = c.metric.good_direction() == GoodDirection::Higher;
            // The near end of the CI in the bad direction, as a relative change.
            let at_least = match (c.change_ci, c.difference_ci) {
                (Some([lo, hi]), _) => Some(if higher_is_good { hi } else { lo }),
                (None, Some([lo, hi])) if c.baseline_median > 0.0 => {
                    let near = if higher_is_good { hi } else { lo };
                    Some(near / c.baseline_median)
                }
                (None, Some(_)) => None,
                (None, None) => return None,
            };
            let beyond = match at_least {
                Some(a) if higher_is_good => a < -bound,
                Some(a) => a > bound,
                None => true,
            };
            beyond.then(|| Regression {
                baseline: c.baseline.clone(),
                variant: c.variant.clone(),
                metric: c.metric.clone(),
                verdict: c.verdict,
                at_least,
                change_ci: c.change_ci,
                difference_ci: c.difference_ci,
                bound,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::TestKind;
    use loadlab_metrics::{LatencyStat, Quantity};

    fn comparison(metric: MetricId, verdict: Verdict, ci: Option<[f64; 2]>) -> Comparison {
        Comparison {
            baseline: "a".into(),
            variant: "b".into(),
            metric,
            n: [10, 10],
            baseline_median: 0.0,
            variant_median: 0.0,
            test: TestKind::MannWhitneyExact,
            p_value: Some(0.001),
            p_adjusted: Some(0.005),
            change: None,
            change_ci: ci,
            difference: None,
            difference_ci: None,
            verdict,
            thin_runs: None,
        }
    }

    #[test]
    fn the_gate_reads_the_whole_ci() {
        let p95 = MetricId::latency(LatencyStat::P95);
        let tput = MetricId::run(Quantity::Throughput);
        // The case: estimate +5.2% but CI [+0.3%, +11.4%]: no evidence of 5%.
        let c = comparison(p95.clone(), Verdict::Slower, Some([0.003, 0.114]));
        assert!(regressions(&[c], 0.05).is_empty());
        let c = comparison(p95.clone(), Verdict::Slower, Some([0.061, 0.14]));
        let r = regressions(&[c], 0.05);
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].at_least, Some(0.061));
        // Throughput: the CI's upper end must be below −bound.
        let c = comparison(tput.clone(), Verdict::Worse, Some([-0.14, -0.061]));
        assert_eq!(regressions(&[c], 0.05)[0].at_least, Some(-0.061));
        let c = comparison(tput, Verdict::Worse, Some([-0.14, -0.03]));
        assert!(regressions(&[c], 0.05).is_empty());
        // Not a regression verdict (insufficient, ~, faster): never fails the gate.
        for v in [
            Verdict::Insufficient,
            Verdict::Inconclusive,
            Verdict::Faster,
        ] {
            let c = comparison(p95.clone(), v, Some([0.2, 0.4]));
            assert!(regressions(&[c], 0.05).is_empty(), "{v}");
        }
        // Errors from 0: unbounded relative change, fails any bound.
        let mut c = comparison(MetricId::run(Quantity::ErrorRate), Verdict::Worse, None);
        c.difference_ci = Some([0.004, 0.012]);
        let r = regressions(&[c], 0.05);
        assert_eq!((r.len(), r[0].at_least), (1, None));
    }
}
