//! Studies: many runs of one scenario (repetitions × variants, or a sweep), summarised per
//! variant and compared between variants. The serde types here are the `study.json` format
//! (schema `loadlab.study.v1`, `docs/schema/study.v1.json`); the functions are pure.
//!
//! A run is one observation: every metric is one number per run (its p95, its throughput...),
//! and statistics are taken across runs. Percentiles are never averaged as if they were one.

mod metrics;
mod rounds;
mod summarize;
mod sweep;
mod usl_check;
mod valid_runs;

pub use metrics::{
    available_metrics, default_compare_metrics, default_metrics_for, load_level, metric_stats,
    parse_metrics, run_metrics, UnknownMetric,
};
pub use rounds::{
    analyze_rounds, LevelVariance, NextRepetition, RoundRow, RoundsComparison, RoundsStudy,
    SegmentRow, VariantRounds, VariantRuns, ROUND_BOOTSTRAP_RESAMPLES, ROUND_STATS,
};
pub use summarize::{
    compare_study, compare_variant_pairs, degradation, is_unstable, samples_of, summarize_variant,
    RunSample, DRIFT_METRICS,
};
pub use sweep::{analyze_sweep, USL_BOOTSTRAP_REPLICATES};
pub use usl_check::{FLAT_TOP_GROWTH, FLAT_TOP_UNKNOWN_NOISE, LAMBDA_TOLERANCE};
pub use valid_runs::{MissingRun, ValidRuns};

use crate::compare::Comparison;
use crate::stats::{OutlierKind, OutlierSide, Trend};
use loadlab_metrics::{LatencyBasis, LatencyStat, MetricId, Quantity};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

pub use crate::compare::MIN_RUNS_FOR_COMPARISON;

pub const STUDY_SCHEMA: &str = "loadlab.study.v1";

/// Default number of repetitions of each variant.
pub const DEFAULT_REPEAT: usize = 10;

/// The metrics whose CV decides `unstable`.
pub const STABILITY_METRICS: [MetricId; 2] = [
    MetricId {
        scope: loadlab_metrics::Scope::Run,
        quantity: Quantity::Throughput,
    },
    MetricId {
        scope: loadlab_metrics::Scope::Run,
        quantity: Quantity::Latency(LatencyStat::P50),
    },
];

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
    /// Practical-equivalence band: a change whose whole CI lies within ±band is `equivalent`.
    pub equivalence: f64,
    /// The latency the latency metrics are compared on (`study.compare_on`): `raw` (absent) or
    /// `compensated`.
    #[serde(default, skip_serializing_if = "LatencyBasis::is_raw")]
    pub compare_on: LatencyBasis,
    /// Significance level of the comparisons (after Holm's correction).
    pub alpha: f64,
    /// Fewest runs per side for a verdict (fewer: `insufficient`).
    #[serde(default = "crate::compare::default_min_runs")]
    pub min_runs: usize,
    /// Tests in Holm's family: the non-degenerate (pair, metric) comparisons with enough
    /// runs, over all the pairs of the study.
    #[serde(default)]
    pub family_size: usize,
    /// The study was stopped (Ctrl-C) before all runs were made.
    pub interrupted: bool,
    /// Things the reader must know (too few runs, excluded runs...).
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
    /// Unmeasured warm-up runs of each variant made before its measured runs (not in
    /// `run_log`, never in the statistics).
    #[serde(default)]
    pub warmup_runs: usize,
    /// Runs planned (variants × repetitions), re-runs not counted.
    #[serde(default)]
    pub planned_runs: usize,
    /// Every run made, in the order it was made, re-runs and interrupted runs included.
    #[serde(default)]
    pub run_log: Vec<RunEntry>,
    /// Its runs were rounds of segments (`study --segments N`): per-round and per-segment
    /// figures, the two-level bootstrap and the variance per level.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rounds: Option<RoundsStudy>,
    /// Its runs were imported from other tools' result files (`import-results --study`): the
    /// tools that made them (`jmeter`, `k6 0.50.0`). Their validity was not judged, and no
    /// order, cool-down or plan was loadlab's. Empty for a study loadlab ran.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub imported_from: Vec<String>,
}

impl StudyResult {
    /// Made of runs imported from other tools' files, not run by loadlab.
    pub fn is_imported(&self) -> bool {
        !self.imported_from.is_empty()
    }

    /// `A 3, B 2`: how many runs each variant has.
    pub fn runs_per_variant_words(&self) -> String {
        self.variants
            .iter()
            .map(|v| format!("{} {}", v.name, v.runs.len()))
            .collect::<Vec<_>>()
            .join(", ")
    }
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
    pub metrics: BTreeMap<MetricId, MetricStats>,
    /// Metrics that trend over run order (Kendall's τ, Holm over [`DRIFT_METRICS`]).
    #[serde(default)]
    pub drift: Vec<Drift>,
}

/// What a load level counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LoadKind {
    /// Virtual users of a closed model.
    Vus,
    /// Arrivals per second of an open model.
    Rate,
}

impl From<loadlab_scenario::study::SweepParameter> for LoadKind {
    fn from(p: loadlab_scenario::study::SweepParameter) -> Self {
        match p {
            loadlab_scenario::study::SweepParameter::Vus => LoadKind::Vus,
            loadlab_scenario::study::SweepParameter::Rate => LoadKind::Rate,
        }
    }
}

impl LoadKind {
    pub fn as_str(self) -> &'static str {
        match self {
            LoadKind::Vus => "vus",
            LoadKind::Rate => "rate",
        }
    }
}

/// The load a variant offered.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct LoadLevel {
    pub kind: LoadKind,
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
    /// Student-t 95% CI of the mean; `null` when n < 2 (no spread can be estimated).
    pub mean_ci: Option<[f64; 2]>,
    /// Sample standard deviation; `null` when n < 2.
    pub sd: Option<f64>,
    /// Coefficient of variation sd/mean; `null` when n < 2 or the mean is 0.
    pub cv: Option<f64>,
    pub min: f64,
    pub max: f64,
    /// Runs outside Tukey's fences (marked, never dropped); empty when n < 5.
    #[serde(default)]
    pub outliers: Vec<OutlierRun>,
    /// Kendall's τ of the values against run order; `null` when n < 5 or all values equal.
    #[serde(default)]
    pub trend: Option<Trend>,
}

/// A run whose value lies outside Tukey's fences.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct OutlierRun {
    /// Position in `values`.
    pub index: usize,
    /// Store id of the run, when known.
    pub run: Option<String>,
    pub value: f64,
    pub kind: OutlierKind,
    pub side: OutlierSide,
}

/// Which way a drifting metric moved over the runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TrendDirection {
    Rising,
    Falling,
}

/// A metric of a variant that trends over run order.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Drift {
    pub metric: MetricId,
    pub direction: TrendDirection,
    pub tau: f64,
    pub p_value: f64,
    /// Holm-adjusted over the drift metrics of the variant.
    pub p_adjusted: f64,
}

/// `variant / baseline` of medians, e.g. 2.14× load → 3.99× p95.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Degradation {
    pub baseline: String,
    pub variant: String,
    /// Ratio of offered load (vus or rate), when both variants state one of the same kind.
    pub load_factor: Option<f64>,
    /// Metric → ratio of medians.
    pub factors: BTreeMap<MetricId, f64>,
}

/// A sweep over concurrency (`vus`) or arrival rate (`rate`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SweepResult {
    pub parameter: LoadKind,
    pub points: Vec<SweepPoint>,
    /// Parameter value where throughput stops growing in proportion (Kneedle on the median
    /// throughput curve, kept only when the slope after it is less than half the slope
    /// before); `null` when the curve has no knee.
    pub knee: Option<f64>,
    /// Parameter value where p95 latency starts to shoot up (Kneedle elbow, kept only when
    /// the slope after it is more than twice the slope before); `null` when none.
    pub latency_knee: Option<f64>,
    /// Universal Scalability Law fit on every run's (vus, throughput); `null` when not made
    /// (see `usl_skipped`).
    pub usl: Option<UslResult>,
    /// Why there is no USL fit.
    #[serde(default)]
    pub usl_skipped: Option<UslSkipped>,
    /// Throughput flattens over the last levels without falling: where, and at what level
    /// it plateaus. This is what the data show whether or not a model fits them.
    #[serde(default)]
    pub saturation: Option<Saturation>,
}

/// A plateau of throughput: every level from `from` on is within the noise of `throughput`.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct Saturation {
    /// Median throughput over the plateau's levels (req/s).
    pub throughput: f64,
    /// The first level of the plateau (VUs or req/s offered).
    pub from: f64,
}

/// Why a sweep has no USL fit.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum UslSkipped {
    /// The USL models concurrency, not arrival rate.
    RateSweep,
    /// Fewer runs or levels than a fit needs.
    TooFewRuns { runs: usize, needed: usize },
    /// The least-squares fit failed.
    FitFailed { error: String },
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
    /// Concurrency of peak throughput √((1−σ)/κ); `null` when κ = 0 or when the sweep
    /// cannot identify it (see `issues`).
    pub n_star: Option<f64>,
    /// Predicted peak throughput; `null` with `n_star`.
    pub peak: Option<f64>,
    /// Percentile-bootstrap 95% CI of N* (runs resampled within levels); `null` with `n_star`.
    #[serde(default)]
    pub n_star_ci: Option<NStarInterval>,
    pub r2: f64,
    /// The model does not describe the data: R² < 0.9, the fit more than 10% from the
    /// measured throughput at the smallest level, or residuals with a shape of their own
    /// (too few runs of equal sign). Then σ, κ, λ and N* are not to be read.
    pub poor_fit: bool,
    /// Everything that makes the fit untrustworthy; empty for a fit to rely on.
    #[serde(default)]
    pub issues: Vec<UslIssue>,
}

impl UslIssue {
    /// An issue that says the model does not describe the data (see `UslResult::poor_fit`).
    pub fn is_misfit(&self) -> bool {
        matches!(
            self,
            UslIssue::PoorFit { .. }
                | UslIssue::SmallestLevelMisfit { .. }
                | UslIssue::SystematicResiduals { .. }
        )
    }
}

impl UslResult {
    /// No issue other than extrapolation: σ, κ and N* can be relied on.
    pub fn reliable(&self) -> bool {
        self.issues
            .iter()
            .all(|i| matches!(i, UslIssue::Extrapolated { .. }))
    }
}

/// Bootstrap interval of N*.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct NStarInterval {
    pub low: f64,
    /// `null`: unbounded (more than 2.5% of the resamples fit no peak at all).
    pub high: Option<f64>,
    pub replicates: usize,
}

/// Why a USL fit should not be trusted, or how far it reaches.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum UslIssue {
    /// R² below 0.9.
    PoorFit { r2: f64 },
    /// The model misses the measured throughput at the smallest level by more than 10%
    /// (λ is then not the throughput of one unit of concurrency).
    SmallestLevelMisfit {
        level: f64,
        measured: f64,
        predicted: f64,
    },
    /// The residuals' signs, in the order of the levels, come in fewer runs than chance would
    /// give (one-sided runs test, p < 0.05): the curve is above the points over some levels
    /// and below them over others, so the model misses the data's shape.
    SystematicResiduals { runs: u64, expected: f64, p: f64 },
    /// Throughput flattens at the last levels without falling: saturation, no retrograde
    /// region, so N* is not identifiable from this sweep.
    NotIdentifiable,
    /// N* or its CI lies outside the tested range `[low, high]`.
    Extrapolated { low: f64, high: f64 },
}
