//! A variant's runs summarised (statistics, outlier runs, drift, stability), and the
//! comparisons and degradation factors between variants.

use super::metrics::{load_level, metric_stats, run_metrics};
use super::{
    Degradation, Drift, LoadLevel, MetricStats, TrendDirection, VariantStats, STABILITY_METRICS,
};
use crate::compare::{compare_pairs, CompareOptions, Comparison, MetricSamples, PairSamples};
use crate::stats;
use loadlab_metrics::{LatencyStat, MetricId, Quantity, RunResult};
use std::collections::BTreeMap;

/// Metrics checked for drift over run order (Holm's correction over these, per variant).
pub const DRIFT_METRICS: [MetricId; 5] = [
    MetricId {
        scope: loadlab_metrics::Scope::Run,
        quantity: Quantity::Throughput,
    },
    MetricId {
        scope: loadlab_metrics::Scope::Run,
        quantity: Quantity::ErrorRate,
    },
    MetricId {
        scope: loadlab_metrics::Scope::Run,
        quantity: Quantity::Latency(LatencyStat::P50),
    },
    MetricId {
        scope: loadlab_metrics::Scope::Run,
        quantity: Quantity::Latency(LatencyStat::P95),
    },
    MetricId {
        scope: loadlab_metrics::Scope::Run,
        quantity: Quantity::Latency(LatencyStat::P99),
    },
];

/// One run as the study sees it.
pub struct RunSample<'a> {
    pub id: String,
    pub result: &'a RunResult,
    /// Excluded from the statistics (invalid run).
    pub excluded: bool,
}

/// Summarises the runs of one variant. A metric is described over the runs that have it;
/// its outlier runs carry their store ids.
pub fn summarize_variant(name: &str, runs: &[RunSample<'_>]) -> VariantStats {
    let used: Vec<&RunSample<'_>> = runs.iter().filter(|r| !r.excluded).collect();
    let per_run: Vec<BTreeMap<MetricId, f64>> =
        used.iter().map(|r| run_metrics(r.result)).collect();
    let mut names: Vec<&MetricId> = per_run.iter().flat_map(|m| m.keys()).collect();
    names.sort();
    names.dedup();
    let mut metrics = BTreeMap::new();
    for name in names {
        let (ids, values): (Vec<&str>, Vec<f64>) = used
            .iter()
            .zip(&per_run)
            .filter_map(|(r, m)| m.get(name).map(|v| (r.id.as_str(), *v)))
            .unzip();
        if let Some(mut s) = metric_stats(&values) {
            for o in &mut s.outliers {
                o.run = ids.get(o.index).map(|id| id.to_string());
            }
            metrics.insert(name.clone(), s);
        }
    }
    let unstable = is_unstable(&metrics);
    VariantStats {
        name: name.to_string(),
        runs: used.iter().map(|r| r.id.clone()).collect(),
        excluded_runs: runs
            .iter()
            .filter(|r| r.excluded)
            .map(|r| r.id.clone())
            .collect(),
        unstable,
        thresholds_failed: used
            .iter()
            .filter(|r| r.result.thresholds.iter().any(|t| !t.ok))
            .count(),
        load: runs.first().and_then(|r| load_level(r.result)),
        drift: drift(&metrics),
        metrics,
    }
}

/// Drift: Kendall's τ against run order for each of [`DRIFT_METRICS`] that has a trend
/// test, Holm's correction over them, flagged when the adjusted p < 0.05.
fn drift(metrics: &BTreeMap<MetricId, MetricStats>) -> Vec<Drift> {
    let tested: Vec<(&MetricId, stats::Trend)> = DRIFT_METRICS
        .iter()
        .filter_map(|m| Some((m, metrics.get(m)?.trend?)))
        .collect();
    let raw: Vec<f64> = tested.iter().map(|(_, t)| t.p_value).collect();
    let adjusted = stats::holm(&raw).unwrap_or(raw);
    tested
        .into_iter()
        .zip(adjusted)
        .filter(|(_, p)| *p < crate::compare::ALPHA)
        .map(|((m, t), p_adjusted)| Drift {
            metric: m.clone(),
            direction: if t.tau > 0.0 {
                TrendDirection::Rising
            } else {
                TrendDirection::Falling
            },
            tau: t.tau,
            p_value: t.p_value,
            p_adjusted,
        })
        .collect()
}

/// CV ≥ 10% on throughput or p50 (with at least two runs).
pub fn is_unstable(metrics: &BTreeMap<MetricId, MetricStats>) -> bool {
    STABILITY_METRICS.iter().any(|m| {
        metrics
            .get(m)
            .and_then(|s| s.cv)
            .is_some_and(|cv| cv >= stats::UNSTABLE_CV)
    })
}

/// Compares the given pairs `(baseline index, variant index)` of a study on `metrics`,
/// with one Holm family over all of them.
pub fn compare_study(
    variants: &[VariantStats],
    pairs: &[(usize, usize)],
    metrics: &[MetricId],
    options: &CompareOptions,
) -> Vec<Comparison> {
    let pairs: Vec<(&VariantStats, &VariantStats)> = pairs
        .iter()
        .map(|&(a, b)| (&variants[a], &variants[b]))
        .collect();
    compare_variant_pairs(&pairs, metrics, options).1
}

/// Compares pairs of variants (baseline, variant) on `metrics` with one Holm family: the
/// samples compared and the comparisons, latency percentiles of runs too small to hold them
/// marked (`thin_runs`, no verdict).
pub fn compare_variant_pairs(
    pairs: &[(&VariantStats, &VariantStats)],
    metrics: &[MetricId],
    options: &CompareOptions,
) -> (Vec<PairSamples>, Vec<Comparison>) {
    let samples: Vec<PairSamples> = pairs
        .iter()
        .map(|(a, b)| samples_of(a, b, metrics))
        .collect();
    let mut comparisons = compare_pairs(&samples, options);
    for c in &mut comparisons {
        let pair = pairs
            .iter()
            .find(|(a, b)| a.name == c.baseline && b.name == c.variant);
        if let Some((a, b)) = pair {
            mark_thin(c, a, b);
        }
    }
    (samples, comparisons)
}

/// A latency percentile whose runs are too small to hold it gets no verdict: with fewer than
/// 10 requests beyond it in a typical run (the side with fewer), each run's figure is nearly
/// its maximum.
fn mark_thin(c: &mut Comparison, a: &VariantStats, b: &VariantStats) {
    let (Quantity::Latency(stat) | Quantity::CompensatedLatency(stat)) = c.metric.quantity else {
        return;
    };
    let Some(q) = stat.quantile() else {
        return;
    };
    let requests = MetricId {
        scope: c.metric.scope.clone(),
        quantity: Quantity::Requests,
    };
    let typical = |v: &VariantStats| v.metrics.get(&requests).map(|s| s.median as u64);
    let Some(fewest) = typical(a).into_iter().chain(typical(b)).min() else {
        return;
    };
    if loadlab_metrics::thin_percentile(fewest, q) {
        c.thin_runs = Some(fewest);
        c.verdict = loadlab_metrics::Verdict::Insufficient;
    }
}

/// The per-run values of `metrics` on both sides (metrics one side lacks are left out).
pub fn samples_of(a: &VariantStats, b: &VariantStats, metrics: &[MetricId]) -> PairSamples {
    PairSamples {
        baseline: a.name.clone(),
        variant: b.name.clone(),
        metrics: metrics
            .iter()
            .filter_map(|m| {
                Some(MetricSamples {
                    metric: m.clone(),
                    baseline: a.metrics.get(m)?.values.clone(),
                    variant: b.metrics.get(m)?.values.clone(),
                })
            })
            .collect(),
        offered_differs: offered_differs(a.load.as_ref(), b.load.as_ref()),
    }
}

/// The two variants were offered different loads: of different kinds, or values more than
/// 1% apart (when either is unknown, nothing is assumed).
pub fn offered_differs(a: Option<&LoadLevel>, b: Option<&LoadLevel>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => {
            a.kind != b.kind || (a.value - b.value).abs() > 0.01 * a.value.abs().max(b.value.abs())
        }
        _ => false,
    }
}

/// Ratios of medians of `variant` over `baseline` for throughput and latency figures.
pub fn degradation(baseline: &VariantStats, variant: &VariantStats) -> Degradation {
    let mut factors = BTreeMap::new();
    let mut ms = vec![MetricId::run(Quantity::Throughput)];
    ms.extend(
        [
            LatencyStat::Mean,
            LatencyStat::P50,
            LatencyStat::P95,
            LatencyStat::P99,
        ]
        .map(MetricId::latency),
    );
    for m in ms {
        if let (Some(a), Some(b)) = (baseline.metrics.get(&m), variant.metrics.get(&m)) {
            if let Ok(f) = stats::degradation_factor(a.median, b.median) {
                factors.insert(m, f);
            }
        }
    }
    let load_factor = match (&baseline.load, &variant.load) {
        (Some(a), Some(b)) if a.kind == b.kind && a.value > 0.0 => Some(b.value / a.value),
        _ => None,
    };
    Degradation {
        baseline: baseline.name.clone(),
        variant: variant.name.clone(),
        load_factor,
        factors,
    }
}
