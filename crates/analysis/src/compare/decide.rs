//! The verdict of one comparison from its evidence: enough runs, Holm-adjusted p, and the
//! CI of the change. Pure, so every case of the taxonomy is a row of a table test.

use super::CompareOptions;
use loadlab_metrics::{MetricId, Verdict};

/// The evidence about one metric of one pair.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Evidence {
    /// Both sides have enough runs for a verdict.
    pub sufficient: bool,
    /// Every run on both sides has the same value.
    pub degenerate: bool,
    /// Holm-adjusted p-value (`None`: not in the family).
    pub p_adjusted: Option<f64>,
    /// 95% CI of the relative change `variant / baseline − 1`.
    pub change_ci: Option<[f64; 2]>,
    /// 95% CI of the shift `variant − baseline` (used when there is no relative change).
    pub difference_ci: Option<[f64; 2]>,
}

/// * `insufficient` — too few runs on a side;
/// * `equivalent` — the whole 95% CI of the relative change lies inside ±band (two one-sided
///   tests at 2.5% each), or every run on both sides is identical and a band is set;
/// * `slower`/`faster`/`worse`/`better` — Holm-adjusted p < α **and** the CI excludes 0,
///   the word from the metric's good direction;
/// * `~` — anything else: no difference detected at this n.
pub fn decide(metric: &MetricId, e: &Evidence, options: &CompareOptions) -> Verdict {
    if !e.sufficient {
        return Verdict::Insufficient;
    }
    let band = options.equivalence;
    if e.degenerate {
        return if band > 0.0 {
            Verdict::Equivalent
        } else {
            Verdict::Inconclusive
        };
    }
    if let Some([lo, hi]) = e.change_ci {
        if band > 0.0 && lo >= -band && hi <= band {
            return Verdict::Equivalent;
        }
    }
    let significant = e.p_adjusted.is_some_and(|p| p < options.alpha);
    match e.change_ci.or(e.difference_ci) {
        Some([lo, _]) if significant && lo > 0.0 => metric.verdict_for(true),
        Some([_, hi]) if significant && hi < 0.0 => metric.verdict_for(false),
        _ => Verdict::Inconclusive,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use loadlab_metrics::{LatencyStat, Quantity};

    fn ids() -> (MetricId, MetricId, MetricId) {
        (
            MetricId::latency(LatencyStat::P95),
            MetricId::run(Quantity::Throughput),
            MetricId::run(Quantity::ErrorRate),
        )
    }

    /// With the equivalence band of 2%, and without.
    fn options() -> (CompareOptions, CompareOptions) {
        let banded = CompareOptions {
            equivalence: 0.02,
            ..CompareOptions::default()
        };
        (banded, CompareOptions::default())
    }

    /// Significant, slower by 2–10%.
    fn base() -> Evidence {
        Evidence {
            sufficient: true,
            degenerate: false,
            p_adjusted: Some(0.01),
            change_ci: Some([0.02, 0.10]),
            difference_ci: None,
        }
    }

    fn with(f: &dyn Fn(&mut Evidence)) -> Evidence {
        let mut e = base();
        f(&mut e);
        e
    }

    type Case<'a> = (&'a str, &'a MetricId, Evidence, &'a CompareOptions, Verdict);

    fn check(table: Vec<Case<'_>>) {
        for (name, metric, evidence, options, want) in table {
            assert_eq!(decide(metric, &evidence, options), want, "{name}");
        }
    }

    /// The direction words per metric, and no direction without significance.
    #[test]
    fn directions_and_significance() {
        let (p95, tput, errors) = ids();
        let (_, plain) = options();
        let base = base();
        check(vec![
            ("latency up", &p95, base, &plain, Verdict::Slower),
            (
                "latency down",
                &p95,
                with(&|e| e.change_ci = Some([-0.1, -0.02])),
                &plain,
                Verdict::Faster,
            ),
            (
                "throughput down",
                &tput,
                with(&|e| e.change_ci = Some([-0.1, -0.02])),
                &plain,
                Verdict::Worse,
            ),
            ("throughput up", &tput, base, &plain, Verdict::Better),
            ("errors up", &errors, base, &plain, Verdict::Worse),
            // Significant but the CI touches 0: no direction shown.
            (
                "ci crosses 0",
                &p95,
                with(&|e| e.change_ci = Some([-0.01, 0.10])),
                &plain,
                Verdict::Inconclusive,
            ),
            (
                "not significant",
                &p95,
                with(&|e| e.p_adjusted = Some(0.2)),
                &plain,
                Verdict::Inconclusive,
            ),
            (
                "not in family",
                &p95,
                with(&|e| e.p_adjusted = None),
                &plain,
                Verdict::Inconclusive,
            ),
        ]);
    }

    /// The equivalence band: beyond it a direction, inside it `=` (TOST).
    #[test]
    fn the_equivalence_band() {
        let (p95, _, _) = ids();
        let (banded, plain) = options();
        check(vec![
            // The case: p = 0.03, CI [+0.2%, +3.9%] with a 2% band is slower, not `~`.
            (
                "beyond the band",
                &p95,
                with(&|e| e.change_ci = Some([0.002, 0.039])),
                &banded,
                Verdict::Slower,
            ),
            // TOST: the whole CI inside ±2% is equivalent, significant or not.
            (
                "inside the band",
                &p95,
                with(&|e| e.change_ci = Some([-0.015, 0.018])),
                &banded,
                Verdict::Equivalent,
            ),
            (
                "inside, significant",
                &p95,
                with(&|e| e.change_ci = Some([0.003, 0.015])),
                &banded,
                Verdict::Equivalent,
            ),
            (
                "no band, no equivalence",
                &p95,
                with(&|e| {
                    e.change_ci = Some([-0.015, 0.018]);
                    e.p_adjusted = Some(0.5)
                }),
                &plain,
                Verdict::Inconclusive,
            ),
            (
                "half outside the band",
                &p95,
                with(&|e| {
                    e.change_ci = Some([-0.015, 0.025]);
                    e.p_adjusted = Some(0.5)
                }),
                &banded,
                Verdict::Inconclusive,
            ),
        ]);
    }

    /// Too few runs, identical runs, and baselines of zero errors.
    #[test]
    fn too_few_identical_and_zero_baselines() {
        let (p95, _, errors) = ids();
        let (banded, plain) = options();
        check(vec![
            (
                "too few runs",
                &p95,
                with(&|e| e.sufficient = false),
                &plain,
                Verdict::Insufficient,
            ),
            (
                "identical runs",
                &errors,
                with(&|e| {
                    e.degenerate = true;
                    e.p_adjusted = None;
                    e.change_ci = None
                }),
                &plain,
                Verdict::Inconclusive,
            ),
            (
                "identical runs, band",
                &errors,
                with(&|e| {
                    e.degenerate = true;
                    e.p_adjusted = None;
                    e.change_ci = None
                }),
                &banded,
                Verdict::Equivalent,
            ),
            // 0 errors in every baseline run: no ratio; the shift's CI decides the direction.
            (
                "errors from zero",
                &errors,
                with(&|e| {
                    e.change_ci = None;
                    e.difference_ci = Some([0.004, 0.012])
                }),
                &plain,
                Verdict::Worse,
            ),
            (
                "errors from zero, ci at 0",
                &errors,
                with(&|e| {
                    e.change_ci = None;
                    e.difference_ci = Some([0.0, 0.012])
                }),
                &plain,
                Verdict::Inconclusive,
            ),
        ]);
    }
}
