//! A against B on per-run values, and the `loadlab compare` record (`loadlab.compare.v1`).
//!
//! * Two sets of runs ([`compare_pairs`]): two-sided Mann–Whitney U, exact given the ties up
//!   to 25 runs per side; the change `B/A − 1` with a 95% CI (Hodges–Lehmann on logs, Moses'
//!   interval), or the shift `B − A` when a side has zeros; Holm's correction over the whole
//!   family of non-degenerate (pair, metric) tests made by one study or one `compare`.
//! * One run against a set of runs ([`compare_pairs`] picks it when a side has one run): a
//!   prediction test on logs (see `stats::log_prediction`), Holm over the metrics.
//! * The verdict ([`decide`]) and the regression gate ([`regressions`]) read CIs, never
//!   point estimates.

mod decide;
mod gate;
mod pairs;

pub use decide::decide;
pub use gate::{regressions, Regression};
pub use pairs::{compare_pairs, family_size, MetricSamples, PairSamples};

use loadlab_metrics::{MetricId, Verdict};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

pub const COMPARE_SCHEMA: &str = "loadlab.compare.v1";

/// Significance level of the comparisons (applied to Holm-adjusted p-values).
pub const ALPHA: f64 = 0.05;

/// Fewest runs per side for a verdict: with 5 + 5 runs the smallest two-sided p of the
/// exact test is 2/252 = 0.008, which survives Holm over the five default metrics
/// (5 × 0.008 = 0.04); with 4 + 4 it is 0.029, which does not.
pub const MIN_RUNS_FOR_COMPARISON: usize = 5;

/// How the p-value of a comparison was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum TestKind {
    /// Mann–Whitney U with the exact distribution given the ties (≤ 25 runs per side).
    MannWhitneyExact,
    /// Mann–Whitney U, normal approximation with tie correction (larger samples).
    MannWhitneyNormal,
    /// One run against the runs of a study: Student-t prediction test on logs.
    PredictionLogT,
    /// One run against the runs of a study: its rank among them (zeros, or no spread).
    PredictionRank,
    /// Not tested: every run on both sides has the same value (spends no α).
    #[default]
    NotTested,
}

/// One metric, one pair of variants.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Comparison {
    pub baseline: String,
    pub variant: String,
    pub metric: MetricId,
    /// Runs on each side.
    pub n: [usize; 2],
    /// Medians of the per-run values on each side.
    pub baseline_median: f64,
    pub variant_median: f64,
    #[serde(default)]
    pub test: TestKind,
    /// Raw two-sided p-value; `null` when not tested.
    pub p_value: Option<f64>,
    /// Holm-adjusted over the comparison's family; `null` when the metric is not in the
    /// family (degenerate, or too few runs).
    pub p_adjusted: Option<f64>,
    /// `variant / baseline − 1` (Hodges–Lehmann on logs; for one run, against the baseline's
    /// geometric mean); `null` when a side has a zero value.
    pub change: Option<f64>,
    /// 95% CI of `change`; `null` when not available.
    pub change_ci: Option<[f64; 2]>,
    /// `variant − baseline` in the metric's unit (Hodges–Lehmann shift), for metrics that
    /// can be 0 (an error rate of 0 has no ratio).
    #[serde(default)]
    pub difference: Option<f64>,
    /// 95% CI of `difference`.
    #[serde(default)]
    pub difference_ci: Option<[f64; 2]>,
    pub verdict: Verdict,
    /// A latency percentile of runs too small to hold it (fewer than 10 requests beyond it in
    /// a typical run, e.g. p99 of 33 requests): each run's figure is nearly its maximum, so no
    /// verdict is drawn (`insufficient`). Holds the typical run's request count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thin_runs: Option<u64>,
}

impl Comparison {
    /// The metric has the same value in every run on both sides: nothing to test.
    pub fn is_degenerate(&self) -> bool {
        self.test == TestKind::NotTested && self.verdict != Verdict::Insufficient
    }

    /// The CI the verdict was read from: the relative change's, else the shift's.
    pub fn effect_ci(&self) -> Option<[f64; 2]> {
        self.change_ci.or(self.difference_ci)
    }
}

/// Settings of a comparison.
#[derive(Debug, Clone)]
pub struct CompareOptions {
    pub alpha: f64,
    /// Practical-equivalence band (fraction): a change whose whole 95% CI lies within ±band
    /// is `equivalent`. 0: equivalence is never claimed.
    pub equivalence: f64,
    /// Fewest runs per side (one side may have a single run against a study).
    pub min_runs: usize,
}

impl Default for CompareOptions {
    fn default() -> Self {
        Self {
            alpha: ALPHA,
            equivalence: 0.0,
            min_runs: MIN_RUNS_FOR_COMPARISON,
        }
    }
}

impl CompareOptions {
    /// The project's α and fewest runs, with this equivalence band (0: none).
    pub fn with_equivalence(equivalence: f64) -> Self {
        Self {
            equivalence,
            ..Self::default()
        }
    }
}

/// One side of a `loadlab compare`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CompareSide {
    /// `run` or `study`.
    pub kind: String,
    pub id: String,
    /// The variant of a study, or the run's scenario name.
    pub label: String,
    pub runs: usize,
    /// The tool that measured a run side: `loadlab 0.1.0`, or `vegeta 12.13.0 (imported)`
    /// (absent for a study, and in comparisons written before it existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub made_by: Option<String>,
}

/// How weak one run against a study is: per metric, the smallest changes (down, up) that
/// one run must show to be flagged at the family's level.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct OneRun {
    pub baseline_runs: usize,
    pub detectable: BTreeMap<MetricId, [f64; 2]>,
}

/// `loadlab compare --json`: schema `loadlab.compare.v1`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CompareResult {
    pub schema: String,
    pub tool_version: String,
    pub baseline: CompareSide,
    pub variant: CompareSide,
    pub equivalence: f64,
    pub alpha: f64,
    #[serde(default = "default_min_runs")]
    pub min_runs: usize,
    /// Tests in Holm's family (non-degenerate metrics with enough runs, over all pairs).
    #[serde(default)]
    pub family_size: usize,
    /// `--fail-on-regression` bound (fraction), when given.
    pub fail_on_regression: Option<f64>,
    pub comparisons: Vec<Comparison>,
    /// Metrics whose whole CI lies beyond the bound in the bad direction.
    pub regressions: Vec<Regression>,
    /// Set when one side is a single run.
    #[serde(default)]
    pub one_run: Option<OneRun>,
    pub warnings: Vec<String>,
}

pub(crate) fn default_min_runs() -> usize {
    MIN_RUNS_FOR_COMPARISON
}

/// Smallest two-sided p-value the exact rank test can give with `n1` and `n2` runs
/// (complete separation, no ties): `2 / C(n1 + n2, n1)`.
pub fn smallest_attainable_p(n1: usize, n2: usize) -> f64 {
    let k = n1.min(n2);
    let mut c = 1.0f64;
    for i in 0..k {
        c = c * (n1 + n2 - i) as f64 / (i + 1) as f64;
    }
    (2.0 / c).min(1.0)
}

/// Warnings for pairs whose runs are too few for any difference to survive Holm's
/// correction over the family (every comparison then reads `~` whatever the data).
pub fn power_warnings(comparisons: &[Comparison], alpha: f64) -> Vec<String> {
    let family = family_size(comparisons);
    let mut seen: Vec<(&str, &str)> = Vec::new();
    let mut out = Vec::new();
    for c in comparisons.iter().filter(|c| {
        c.p_adjusted.is_some()
            && matches!(
                c.test,
                TestKind::MannWhitneyExact | TestKind::MannWhitneyNormal
            )
    }) {
        if seen.contains(&(c.baseline.as_str(), c.variant.as_str())) {
            continue;
        }
        seen.push((&c.baseline, &c.variant));
        let best = smallest_attainable_p(c.n[0], c.n[1]);
        if best * family as f64 >= alpha {
            out.push(format!(
                "`{}` vs `{}`: with {}+{} runs the smallest possible p is {best:.4}, and Holm over {family} tests needs less than {:.4} for the first: no difference can be shown; use more runs or compare fewer metrics",
                c.baseline,
                c.variant,
                c.n[0],
                c.n[1],
                alpha / family as f64
            ));
        }
    }
    out
}

/// The (baseline, variant) pairs of a set of comparisons, in order of first appearance.
pub fn pairs_of(comparisons: &[Comparison]) -> Vec<(&str, &str)> {
    let mut pairs: Vec<(&str, &str)> = Vec::new();
    for c in comparisons {
        if !pairs.contains(&(c.baseline.as_str(), c.variant.as_str())) {
            pairs.push((&c.baseline, &c.variant));
        }
    }
    pairs
}
