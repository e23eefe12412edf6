//! Studies: many runs of one scenario (repetitions × variants, or a sweep), summarised per
//! variant and compared between variants. The serde types here are the `study.json` format
//! (schema `loadlab.study.v1`, `docs/schema/study.v1.json`); the functions are pure.
//!
//! A run is one observation: every metric is one number per run (its p95, its throughput...),
//! and statistics are taken across runs. Percentiles are never averaged as if they were one.

use crate::compare::{compare_samples, CompareOptions, Comparison};
use crate::stats;
use loadlab_metrics::RunResult;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

pub const STUDY_SCHEMA: &str = "loadlab.study.v1";

/// Fewest runs per side for which a comparison is made.
pub const MIN_RUNS_FOR_COMPARISON: usize = 5;

/// Default number of repetitions of each variant.
pub const DEFAULT_REPEAT: usize = 10;

/// Metrics compared by default (Holm's correction is taken across these).
pub const DEFAULT_COMPARE_METRICS: &[&str] = &[
    "requests.rate",
    "errors.rate",
    "latency_ms.p50",
    "latency_ms.p95",
    "latency_ms.p99",
];

/// The metrics whose CV decides `unstable`.
pub const STABILITY_METRICS: &[&str] = &["requests.rate", "latency_ms.p50"];

/// `study.json`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct StudyResult {
    /// Always `loadlab.study.v1`.
    pub schema: String,
    pub tool_version: String,
    /// Identifier in the run store.
    pub id: String,
    pub name: String,
    pub scenario_file: Option<String>,
    pub started_at: String,
    pub finished_at: String,
    /// Runs per variant that were planned.
    pub repeat: usize,
    /// `interleaved` or `sequential`.
    pub order: String,
    pub cooldown_s: f64,
    /// Practical-equivalence band: a significant change smaller than this is reported `~`.
    pub equivalence: f64,
    /// Significance level of the comparisons (after Holm's correction).
    pub alpha: f64,
    /// The study was stopped (Ctrl-C) before all runs were made.
    pub interrupted: bool,
    /// Things the reader must know (too few runs, unstable variants, poor USL fit...).
    pub warnings: Vec<String>,
    pub variants: Vec<VariantStats>,
    pub comparisons: Vec<Comparison>,
    /// How many times larger each variant's figures are than the first variant's (medians).
    pub degradation: Vec<Degradation>,
    pub sweep: Option<SweepResult>,
    /// Fingerprint of the resolved study (variants, repetitions, order): `--resume` checks
    /// that the scenario file did not change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan_hash: Option<String>,
    /// Re-runs allowed per invalid run.
    #[serde(default)]
    pub retry_invalid: usize,
    /// Runs planned (variants × repetitions), retries not counted.
    #[serde(default)]
    pub planned_runs: usize,
    /// Every run made, in the order it was made, retries and interrupted runs included.
    #[serde(default)]
    pub run_log: Vec<RunEntry>,
}

/// One run a study made.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RunEntry {
    pub variant: String,
    /// Which repetition of the variant (0-based).
    pub rep: usize,
    /// 0 for the first attempt, 1.. for re-runs of an invalid run.
    pub attempt: usize,
    /// Store id of the run.
    pub run: String,
    /// In the statistics (a valid run).
    pub used: bool,
    /// Why not, when not.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub invalid: Vec<loadlab_metrics::InvalidKind>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reasons: Vec<String>,
}

/// One variant: its runs and, per metric, the statistics across them.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct VariantStats {
    pub name: String,
    /// Store ids of the runs used for the statistics, in run order.
    pub runs: Vec<String>,
    /// Store ids of runs that were made but excluded (invalid: generator saturated, interrupted...).
    pub excluded_runs: Vec<String>,
    /// CV ≥ 10% on throughput or p50: a single number does not describe this variant.
    pub unstable: bool,
    /// Runs whose thresholds failed (they are still in the statistics).
    pub thresholds_failed: usize,
    /// Offered load of the variant (`vus` of a closed model, peak `rate` of an open one).
    pub load: Option<LoadLevel>,
    pub metrics: BTreeMap<String, MetricStats>,
}

/// The load a variant offered.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct LoadLevel {
    /// `vus` or `rate`.
    pub kind: String,
    pub value: f64,
}

/// Statistics of one metric across the runs of one variant.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct MetricStats {
    pub n: usize,
    /// One value per run, in run order.
    pub values: Vec<f64>,
    pub median: f64,
    /// Distribution-free 95% CI of the median; `null` when n < 6.
    pub median_ci: Option<[f64; 2]>,
    pub mean: f64,
    /// Student-t 95% CI of the mean.
    pub mean_ci: [f64; 2],
    pub sd: f64,
    /// Coefficient of variation sd/mean (0 when all values are equal).
    pub cv: f64,
    pub min: f64,
    pub max: f64,
}

/// `variant / baseline` of medians, e.g. 2.14× load → 3.99× p95.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Degradation {
    pub baseline: String,
    pub variant: String,
    /// Ratio of offered load (vus or rate), when both variants state one of the same kind.
    pub load_factor: Option<f64>,
    /// Metric name → ratio of medians.
    pub factors: BTreeMap<String, f64>,
}

/// A sweep over concurrency (`vus`) or arrival rate (`rate`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SweepResult {
    /// `vus` or `rate`.
    pub parameter: String,
    pub points: Vec<SweepPoint>,
    /// Parameter value where throughput stops growing in proportion (Kneedle on the
    /// median throughput curve); `null` when there is none.
    pub knee: Option<f64>,
    /// Parameter value where p95 latency starts to shoot up (Kneedle elbow); `null` when none.
    pub latency_knee: Option<f64>,
    /// Universal Scalability Law fit on every run's (vus, throughput); `null` for rate
    /// sweeps, fewer than 6 runs or 3 levels, or when the fit fails.
    pub usl: Option<UslResult>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SweepPoint {
    pub value: f64,
    pub variant: String,
    /// Median throughput (req/s) across the runs of this point.
    pub throughput: f64,
    /// Median p50 / p95 / p99 latency (ms).
    pub p50: f64,
    pub p95: f64,
    pub p99: f64,
    /// Median error rate (fraction).
    pub error_rate: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct UslResult {
    pub sigma: f64,
    pub kappa: f64,
    pub lambda: f64,
    /// Concurrency of peak throughput √((1−σ)/κ); `null` when κ = 0.
    pub n_star: Option<f64>,
    /// Predicted peak throughput; `null` with `n_star`.
    pub peak: Option<f64>,
    pub r2: f64,
    /// R² < 0.9: do not trust n_star.
    pub poor_fit: bool,
}

/// One value per metric for a run, named as in the run JSON: `requests.rate`,
/// `errors.rate` (failed / total), `latency_ms.{mean,p50,p90,p95,p99,p999,max}`,
/// `groups.<g>.latency_ms.p95`, `steps.<s>.latency_ms.p95`.
pub fn run_metrics(run: &RunResult) -> BTreeMap<String, f64> {
    let mut m = BTreeMap::new();
    m.insert("requests.rate".to_string(), run.requests.rate);
    let error_rate = if run.requests.total > 0 {
        run.requests.failed as f64 / run.requests.total as f64
    } else {
        0.0
    };
    m.insert("errors.rate".to_string(), error_rate);
    let l = &run.latency_ms;
    if l.count > 0 {
        for (k, v) in [
            ("mean", l.mean),
            ("p50", l.p50),
            ("p90", l.p90),
            ("p95", l.p95),
            ("p99", l.p99),
            ("p999", l.p999),
            ("max", l.max),
        ] {
            m.insert(format!("latency_ms.{k}"), v);
        }
    }
    for g in &run.groups {
        if g.latency_ms.count > 0 {
            m.insert(
                format!("groups.{}.latency_ms.p95", g.name),
                g.latency_ms.p95,
            );
        }
    }
    for s in &run.steps {
        if s.latency_ms.count > 0 {
            m.insert(format!("steps.{}.latency_ms.p95", s.name), s.latency_ms.p95);
        }
    }
    m
}

/// Offered load of a run: `vus` (closed model) or peak `rate` (open model).
pub fn load_level(run: &RunResult) -> Option<LoadLevel> {
    if let Some(v) = run.load.max_vus {
        return Some(LoadLevel {
            kind: "vus".into(),
            value: f64::from(v),
        });
    }
    run.load.peak_rate.map(|r| LoadLevel {
        kind: "rate".into(),
        value: r,
    })
}

/// Statistics of one metric across runs.
pub fn metric_stats(values: &[f64]) -> Option<MetricStats> {
    let s = stats::describe(values).ok()?;
    Some(MetricStats {
        n: s.n,
        values: s.values.clone(),
        median: s.median,
        median_ci: s.median_ci.map(|(a, b)| [a, b]),
        mean: s.mean,
        mean_ci: [s.mean_ci.0, s.mean_ci.1],
        sd: s.sd,
        cv: if s.cv.is_finite() { s.cv } else { 0.0 },
        min: s.min,
        max: s.max,
    })
}

/// One run as the study sees it.
pub struct RunSample<'a> {
    pub id: String,
    pub result: &'a RunResult,
    /// Excluded from the statistics (invalid run).
    pub excluded: bool,
}

/// Summarises the runs of one variant. A metric is described over the runs that have it.
pub fn summarize_variant(name: &str, runs: &[RunSample<'_>]) -> VariantStats {
    let used: Vec<&RunSample<'_>> = runs.iter().filter(|r| !r.excluded).collect();
    let per_run: Vec<BTreeMap<String, f64>> = used.iter().map(|r| run_metrics(r.result)).collect();
    let mut names: Vec<String> = per_run.iter().flat_map(|m| m.keys().cloned()).collect();
    names.sort();
    names.dedup();
    let mut metrics = BTreeMap::new();
    for name in names {
        let values: Vec<f64> = per_run
            .iter()
            .filter_map(|m| m.get(&name).copied())
            .collect();
        if let Some(s) = metric_stats(&values) {
            metrics.insert(name, s);
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
        metrics,
    }
}

/// CV ≥ 10% on throughput or p50 (with at least two runs).
pub fn is_unstable(metrics: &BTreeMap<String, MetricStats>) -> bool {
    STABILITY_METRICS.iter().any(|m| {
        metrics
            .get(*m)
            .is_some_and(|s| s.n >= 2 && s.cv >= stats::UNSTABLE_CV)
    })
}

/// Compares `variant` against `baseline` on the given metrics (Holm across them).
pub fn compare_variants(
    baseline: &VariantStats,
    variant: &VariantStats,
    metrics: &[String],
    options: &CompareOptions,
) -> Vec<Comparison> {
    let pairs: Vec<(String, Vec<f64>, Vec<f64>)> = metrics
        .iter()
        .filter_map(|m| {
            let a = baseline.metrics.get(m)?;
            let b = variant.metrics.get(m)?;
            Some((m.clone(), a.values.clone(), b.values.clone()))
        })
        .collect();
    compare_samples(&baseline.name, &variant.name, &pairs, options)
}

/// Ratios of medians of `variant` over `baseline` for throughput, error-free latency figures.
pub fn degradation(baseline: &VariantStats, variant: &VariantStats) -> Degradation {
    let mut factors = BTreeMap::new();
    for m in [
        "requests.rate",
        "latency_ms.mean",
        "latency_ms.p50",
        "latency_ms.p95",
        "latency_ms.p99",
    ] {
        if let (Some(a), Some(b)) = (baseline.metrics.get(m), variant.metrics.get(m)) {
            if let Ok(f) = stats::degradation_factor(a.median, b.median) {
                factors.insert(m.to_string(), f);
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

/// Sweep analysis: `points` are (parameter value, variant) in increasing value order.
/// Returns the result and warnings (poor USL fit...).
pub fn analyze_sweep(
    parameter: &str,
    points: &[(f64, &VariantStats)],
) -> (SweepResult, Vec<String>) {
    let mut warnings = Vec::new();
    let median = |v: &VariantStats, m: &str| v.metrics.get(m).map(|s| s.median).unwrap_or(f64::NAN);
    let out_points: Vec<SweepPoint> = points
        .iter()
        .map(|(value, v)| SweepPoint {
            value: *value,
            variant: v.name.clone(),
            throughput: median(v, "requests.rate"),
            p50: median(v, "latency_ms.p50"),
            p95: median(v, "latency_ms.p95"),
            p99: median(v, "latency_ms.p99"),
            error_rate: median(v, "errors.rate"),
        })
        .collect();
    let xs: Vec<f64> = out_points.iter().map(|p| p.value).collect();
    let finite = |ys: &[f64]| ys.iter().all(|y| y.is_finite());
    let tput: Vec<f64> = out_points.iter().map(|p| p.throughput).collect();
    let p95: Vec<f64> = out_points.iter().map(|p| p.p95).collect();
    let knee = if xs.len() >= 3 && finite(&tput) {
        stats::kneedle(
            &xs,
            &tput,
            stats::Curve::Concave,
            stats::Direction::Increasing,
            1.0,
        )
        .ok()
        .flatten()
        .map(|k| k.x)
    } else {
        None
    };
    let latency_knee = if xs.len() >= 3 && finite(&p95) {
        stats::kneedle(
            &xs,
            &p95,
            stats::Curve::Convex,
            stats::Direction::Increasing,
            1.0,
        )
        .ok()
        .flatten()
        .map(|k| k.x)
    } else {
        None
    };
    let mut usl = None;
    if parameter == "vus" {
        let mut n = Vec::new();
        let mut x = Vec::new();
        for (value, v) in points {
            if let Some(s) = v.metrics.get("requests.rate") {
                for val in &s.values {
                    n.push(*value);
                    x.push(*val);
                }
            }
        }
        if n.len() >= stats::USL_MIN_POINTS {
            match stats::fit_usl(&n, &x) {
                Ok(fit) => {
                    let poor = stats::poor_fit(&fit);
                    if poor {
                        warnings.push(format!(
                            "the Universal Scalability Law fits poorly (R² = {:.2} < {}): do not trust N* and the predicted peak",
                            fit.r2,
                            stats::POOR_FIT_R2
                        ));
                    }
                    usl = Some(UslResult {
                        sigma: fit.sigma,
                        kappa: fit.kappa,
                        lambda: fit.lambda,
                        n_star: fit.n_star,
                        peak: fit.peak,
                        r2: fit.r2,
                        poor_fit: poor,
                    });
                }
                Err(e) => warnings.push(format!("no Universal Scalability Law fit: {e}")),
            }
        } else {
            warnings.push(format!(
                "no Universal Scalability Law fit: it needs at least {} runs over 3 concurrency levels",
                stats::USL_MIN_POINTS
            ));
        }
    }
    (
        SweepResult {
            parameter: parameter.to_string(),
            points: out_points,
            knee,
            latency_knee,
            usl,
        },
        warnings,
    )
}
