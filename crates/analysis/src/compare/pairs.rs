//! Tests every (pair, metric) of a study or a `loadlab compare`, then applies Holm's
//! correction over the family of non-degenerate tests with enough runs, then decides.

use super::decide::{decide, Evidence};
use super::{CompareOptions, Comparison, OneRun, TestKind};
use crate::stats::{self, Method};
use loadlab_metrics::{MetricId, Quantity};
use std::collections::BTreeMap;

/// The per-run values of one metric on both sides.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricSamples {
    pub metric: MetricId,
    pub baseline: Vec<f64>,
    pub variant: Vec<f64>,
}

/// One pair of variants and the metrics compared between them.
#[derive(Debug, Clone, PartialEq)]
pub struct PairSamples {
    pub baseline: String,
    pub variant: String,
    pub metrics: Vec<MetricSamples>,
    /// The two sides were offered different loads (VUs or rate): throughput then differs
    /// `higher`/`lower`, never `better`/`worse`.
    pub offered_differs: bool,
}

/// What the test of one metric found, before Holm's correction.
struct Tested {
    test: TestKind,
    p_value: Option<f64>,
    change: Option<(f64, Option<[f64; 2]>)>,
    difference: Option<(f64, Option<[f64; 2]>)>,
    sufficient: bool,
    degenerate: bool,
}

/// Compares every pair metric by metric. Holm's family is every test actually made: metrics
/// with the same value in every run on both sides, and pairs with too few runs, spend no α.
/// A side with a single run against at least `min_runs` runs is tested with the one-run
/// prediction test.
pub fn compare_pairs(pairs: &[PairSamples], options: &CompareOptions) -> Vec<Comparison> {
    let mut tested: Vec<(&PairSamples, &MetricSamples, Tested)> = Vec::new();
    for pair in pairs {
        for m in &pair.metrics {
            if m.baseline.is_empty() || m.variant.is_empty() {
                continue;
            }
            tested.push((pair, m, test_one(&m.baseline, &m.variant, options.min_runs)));
        }
    }
    let in_family: Vec<usize> = tested
        .iter()
        .enumerate()
        .filter(|(_, (_, _, t))| t.sufficient && !t.degenerate && t.p_value.is_some())
        .map(|(i, _)| i)
        .collect();
    let raw: Vec<f64> = in_family
        .iter()
        .map(|&i| tested[i].2.p_value.unwrap_or(1.0))
        .collect();
    let adjusted = stats::holm(&raw).unwrap_or(raw);
    let mut p_adjusted = vec![None; tested.len()];
    for (&i, p) in in_family.iter().zip(adjusted) {
        p_adjusted[i] = Some(p);
    }
    tested
        .into_iter()
        .zip(p_adjusted)
        .map(|((pair, m, t), p_adj)| {
            let evidence = Evidence {
                sufficient: t.sufficient,
                degenerate: t.degenerate,
                p_adjusted: p_adj,
                change_ci: t.change.and_then(|c| c.1),
                difference_ci: t.difference.and_then(|d| d.1),
            };
            Comparison {
                baseline: pair.baseline.clone(),
                variant: pair.variant.clone(),
                metric: m.metric.clone(),
                n: [m.baseline.len(), m.variant.len()],
                baseline_median: stats::median(&m.baseline),
                variant_median: stats::median(&m.variant),
                test: t.test,
                p_value: t.p_value,
                p_adjusted: p_adj,
                change: t.change.map(|c| c.0),
                change_ci: t.change.and_then(|c| c.1),
                difference: t.difference.map(|d| d.0),
                difference_ci: t.difference.and_then(|d| d.1),
                verdict: match decide(&m.metric, &evidence, options) {
                    v if pair.offered_differs && m.metric.quantity == Quantity::Throughput => {
                        v.without_direction()
                    }
                    v => v,
                },
                thin_runs: None,
            }
        })
        .collect()
}

/// Number of tests in Holm's family of a set of comparisons.
pub fn family_size(comparisons: &[Comparison]) -> usize {
    comparisons
        .iter()
        .filter(|c| c.p_adjusted.is_some())
        .count()
}

fn test_one(a: &[f64], b: &[f64], min_runs: usize) -> Tested {
    let first = a[0];
    let degenerate = a.iter().chain(b).all(|&v| v == first);
    let one_run = (b.len() == 1 && a.len() >= min_runs) || (a.len() == 1 && b.len() >= min_runs);
    let sufficient = (a.len() >= min_runs && b.len() >= min_runs) || one_run;
    if degenerate {
        let same = (first > 0.0).then_some((0.0, Some([0.0, 0.0])));
        return Tested {
            test: TestKind::NotTested,
            p_value: None,
            change: same,
            difference: Some((0.0, Some([0.0, 0.0]))),
            sufficient,
            degenerate,
        };
    }
    if one_run {
        return if b.len() == 1 {
            predict(a, b[0])
        } else {
            invert(predict(b, a[0]))
        };
    }
    let (test, p_value) = match stats::rank_sum_test(a, b) {
        Ok(r) if r.p_value.is_finite() => (
            match r.method {
                Method::Asymptotic => TestKind::MannWhitneyNormal,
                _ => TestKind::MannWhitneyExact,
            },
            Some(r.p_value),
        ),
        _ => (TestKind::NotTested, None),
    };
    let change = stats::hodges_lehmann_ratio(a, b)
        .ok()
        .map(|r| (r.change, Some([r.ci.0, r.ci.1])))
        .or_else(|| ratio_of_medians(a, b).map(|c| (c, None)));
    let difference = match stats::hodges_lehmann_shift(a, b) {
        Ok(r) => Some((r.change, Some([r.ci.0, r.ci.1]))),
        Err(_) => Some((stats::median(b) - stats::median(a), None)),
    };
    Tested {
        test,
        p_value,
        change,
        difference,
        sufficient,
        degenerate,
    }
}

/// One run `run` against `baseline`'s runs.
fn predict(baseline: &[f64], run: f64) -> Tested {
    let difference = Some((run - stats::median(baseline), None));
    if let Ok(p) = stats::log_prediction(baseline, run) {
        return Tested {
            test: TestKind::PredictionLogT,
            p_value: Some(p.p_value),
            change: Some((p.change.change, Some([p.change.ci.0, p.change.ci.1]))),
            difference,
            sufficient: true,
            degenerate: false,
        };
    }
    Tested {
        test: TestKind::PredictionRank,
        p_value: stats::rank_prediction_p(baseline, run).ok(),
        change: ratio_of_medians(baseline, &[run]).map(|c| (c, None)),
        difference,
        sufficient: true,
        degenerate: false,
    }
}

/// A prediction made with the sides swapped (the baseline is the single run), turned round.
fn invert(t: Tested) -> Tested {
    let flip = |c: f64| 1.0 / (1.0 + c) - 1.0;
    Tested {
        change: t
            .change
            .map(|(c, ci)| (flip(c), ci.map(|[lo, hi]| [flip(hi), flip(lo)]))),
        difference: t
            .difference
            .map(|(d, ci)| (-d, ci.map(|[lo, hi]| [-hi, -lo]))),
        ..t
    }
}

fn ratio_of_medians(a: &[f64], b: &[f64]) -> Option<f64> {
    let (ma, mb) = (stats::median(a), stats::median(b));
    (ma > 0.0 && mb.is_finite()).then(|| mb / ma - 1.0)
}

impl OneRun {
    /// For a comparison of one run against `pair`'s baseline runs: per metric tested on logs,
    /// the smallest change one run must show to be flagged (Holm's first step, α / family).
    pub fn of(pair: &PairSamples, comparisons: &[Comparison], alpha: f64) -> Option<OneRun> {
        let family = super::family_size(comparisons).max(1);
        let mut detectable = BTreeMap::new();
        let mut baseline_runs = 0;
        for m in &pair.metrics {
            let (many, one) = match (m.baseline.len(), m.variant.len()) {
                (n, 1) if n > 1 => (&m.baseline, true),
                (1, n) if n > 1 => (&m.variant, true),
                _ => (&m.baseline, false),
            };
            if !one || many.iter().any(|&v| v <= 0.0) {
                continue;
            }
            baseline_runs = baseline_runs.max(many.len());
            let logs: Vec<f64> = many.iter().map(|v| v.ln()).collect();
            let Ok(s) = stats::describe(&logs) else {
                continue;
            };
            if s.sd > 0.0 {
                if let Ok((lo, hi)) =
                    stats::detectable_change(many.len(), s.sd, alpha / family as f64)
                {
                    detectable.insert(m.metric.clone(), [lo, hi]);
                }
            }
        }
        (baseline_runs > 0).then_some(OneRun {
            baseline_runs,
            detectable,
        })
    }
}
