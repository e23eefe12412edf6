//! The method section of a study: the facts of its plan and how its statistics are made.

use super::summary::load_level_words;
use super::Runs;
use crate::doc::{Block, Section};
use crate::format::format_secs;
use crate::run_doc::{measurement_methods, plan_chart, run_measurement_methods, PlannedLoad};
use crate::verdict_words::pct_plain;
use crate::words::{duration_words, run_load_words, scenario_words};
use loadlab_analysis::study::StudyResult;
use loadlab_metrics::{LatencyBasis, LoadModel, RunResult};

/// The statistical methods of a study, in words, each on its own so that a report lists
/// only those it used.
pub(super) struct StatisticsMethods {
    /// A run is one observation.
    observation: String,
    /// How two variants are compared.
    comparisons: String,
    /// What `equivalent` and `~` mean.
    equivalence: String,
    /// How one run is compared with a study.
    one_run: String,
    /// The statistics of each variant (intervals, CV, outliers, drift).
    per_variant: String,
    /// Kneedle and the USL fit.
    sweeps: String,
}

impl StatisticsMethods {
    /// The methods a comparison report uses.
    pub(super) fn for_comparison(self) -> Vec<String> {
        vec![
            self.observation,
            self.comparisons,
            self.equivalence,
            self.one_run,
        ]
    }
}

/// The statistics of a study, in words.
pub(super) fn study_methods(alpha: f64, equivalence: f64, min_runs: usize) -> StatisticsMethods {
    StatisticsMethods {
        observation: "Each run is one observation: a metric (a run's p95, its throughput) is one number per run, and statistics are taken across runs; percentiles are never averaged across requests.".to_string(),
        comparisons: format!("Comparisons: two-sided Mann–Whitney U test per metric on the per-run values, with the exact distribution given the ties up to 25 runs per side (the normal approximation with tie correction beyond); Holm's correction over the whole family of tests (every metric with any variation, over every pair), significance level α = {alpha}; the change is the Hodges–Lehmann estimate of variant/baseline − 1 on log values with Moses' 95% interval (the shift in the metric's unit when a value is 0). A difference is claimed only when Holm's p < α and the interval excludes 0; at least {min_runs} runs per side, fewer is `insufficient`."),
        equivalence: if equivalence > 0.0 {
            format!("Equivalence: `equivalent` when the whole 95% interval of the change lies inside ±{} (two one-sided tests at 2.5% each); `~` means neither a difference nor equivalence was shown.", pct_plain(equivalence))
        } else {
            "Equivalence: no band was set, so no metric is called `equivalent`; `~` means no difference was detected at this number of runs, not that the variants are the same.".to_string()
        },
        one_run: "One run against a study: a Student-t prediction test on log values (the run against the study's runs), Holm over the metrics; its interval is that of the shift of the new run. A regression gate (`--fail-on-regression X%`) fails only when the verdict is a regression and the whole 95% interval lies beyond X%.".to_string(),
        per_variant: "Per variant: median with its distribution-free 95% confidence interval (binomial order statistics; at least 6 runs), mean with its Student-t 95% interval (at least 2 runs), CV = standard deviation / mean; a variant is unstable when the CV of throughput or p50 is 10% or more. Outlier runs (Tukey's fences, 1.5 and 3 IQR) are marked, never dropped; drift is Kendall's τ against run order, Holm over throughput, error rate, p50, p95 and p99.".to_string(),
        sweeps: "Sweeps: the knee is found with Kneedle on the median throughput curve (and the p95 curve) and kept only where the slope at least halves (doubles); the Universal Scalability Law is fitted to every run's (VUs, throughput) by non-linear least squares and checked: R² ≥ 0.9, the fit within 10% of the measured throughput at the smallest level, and a retrograde region (a flat top makes N* not identifiable); N* gets a percentile-bootstrap 95% interval (runs resampled within levels) and is called extrapolated when it or its interval leaves the tested range.".to_string(),
    }
}

pub(super) fn study_method(
    s: &StudyResult,
    runs: &Runs,
    every: &[&RunResult],
    plan: Option<&PlannedLoad>,
) -> Section {
    let mut sec = Section::new("method", "Method");
    sec.push(Block::Facts(method_facts(s, runs, every)));
    if let Some(p) = plan {
        sec.push(Block::chart(plan_chart(
            p,
            every.first().map(|r| r.warmup_s).unwrap_or(0.0),
        )));
    }
    sec.push(Block::Heading("Statistics".into()));
    sec.push(Block::List(statistics_methods(s)));
    sec.push(Block::Heading("Measurement".into()));
    sec.push(Block::List(match every.first() {
        Some(r) => run_measurement_methods(r),
        None => measurement_methods(Default::default()),
    }));
    sec
}

/// The scenario, each variant's load, run length, repetitions, warm-up runs, multiplicity
/// and when the study ran.
fn method_facts(s: &StudyResult, runs: &Runs, every: &[&RunResult]) -> Vec<(String, String)> {
    let mut facts = vec![(
        "Scenario".to_string(),
        scenario_words(&s.name, s.scenario_file.as_deref()),
    )];
    facts.extend(variant_facts(s, runs));
    if let Some(r) = every.first() {
        facts.push(("Run length".to_string(), duration_words(r)));
    }
    facts.push(if s.is_imported() {
        (
            "Runs".to_string(),
            format!(
                "{}, one per result file; {} ran them, so their order and the pauses between them are its own",
                s.runs_per_variant_words(),
                s.imported_from.join(", ")
            ),
        )
    } else {
        (
            "Repetitions".to_string(),
            format!(
                "{} per variant, {} order, {} cool-down between runs",
                s.repeat,
                s.order,
                format_secs(s.cooldown_s)
            ),
        )
    });
    if let Some(words) = compared_latency_words(s, every) {
        facts.push(("Latency compared".to_string(), words));
    }
    if s.warmup_runs > 0 {
        facts.push((
            "Warm-up runs".to_string(),
            format!(
                "{} of each variant before its measured runs (the target warmed up to a steady state), stored but not in the statistics",
                s.warmup_runs
            ),
        ));
    }
    if !s.comparisons.is_empty() && s.family_size == 0 {
        facts.push((
            "Multiplicity".to_string(),
            "no test was made: every compared metric had too few runs or the same value in every run".to_string(),
        ));
    } else if !s.comparisons.is_empty() {
        facts.push((
            "Multiplicity".to_string(),
            format!(
                "Holm's correction over {} test{}: the non-degenerate metrics with enough runs, {}",
                s.family_size,
                if s.family_size == 1 { "" } else { "s" },
                match pair_count(s) {
                    1 => "of the one compared pair".to_string(),
                    n => format!("across all {n} compared pairs (one family, so the false-alarm rate is at most α for the whole study)"),
                }
            ),
        ));
    }
    facts.push((
        "Started".to_string(),
        format!("{} (finished {})", s.started_at, s.finished_at),
    ));
    facts.push((
        "Tool".to_string(),
        if s.is_imported() {
            format!(
                "{} (imported by loadlab {})",
                s.imported_from.join(", "),
                s.tool_version
            )
        } else {
            format!("loadlab {}", s.tool_version)
        },
    ));
    facts
}

/// Which latency the verdicts rest on: said when it was the compensated one, or when a
/// closed model was measured (whose raw latency understates what arriving users would see).
fn compared_latency_words(s: &StudyResult, every: &[&RunResult]) -> Option<String> {
    let closed = every.iter().any(|r| r.load.model == LoadModel::Closed);
    match s.compare_on {
        LatencyBasis::Compensated => Some(format!(
            "compensated for coordinated omission (`study.compare_on: compensated`): the verdicts on latency rest on {}",
            if closed {
                "each closed-model run's latency with the requests its virtual users' schedule would have sent while they waited back-filled (docs/closed-model.md)"
            } else {
                "each run's latency as measured, which an open model takes from each request's intended send time"
            }
        )),
        LatencyBasis::Raw if closed => Some("as measured (raw): a closed model's latency leaves out the users who would have arrived while its virtual users waited; `study.compare_on: compensated` compares on the compensated figure".to_string()),
        LatencyBasis::Raw => None,
    }
}

/// The load of each variant (from its first run, else its load level); variants that differ
/// by target (A/B of two systems) also say which is which.
fn variant_facts(s: &StudyResult, runs: &Runs) -> Vec<(String, String)> {
    let mut facts = Vec::new();
    let targets: Vec<Option<&str>> = s
        .variants
        .iter()
        .map(|v| {
            v.runs
                .first()
                .and_then(|id| runs.get(id))
                .and_then(|r| r.target.as_deref())
        })
        .collect();
    let targets_differ = targets.windows(2).any(|w| w[0] != w[1]);
    for (v, target) in s.variants.iter().zip(&targets) {
        let load = v
            .runs
            .first()
            .and_then(|id| runs.get(id))
            .map(run_load_words)
            .map(|words| match target {
                Some(t) if targets_differ => format!("{words}; target {t}"),
                _ => words,
            });
        facts.push((
            format!("Variant `{}`", v.name),
            load.unwrap_or_else(|| load_level_words(v)),
        ));
    }
    facts
}

/// The statistical methods this study used: the sweep's only for a sweep, the comparisons'
/// only with two variants or more.
fn statistics_methods(s: &StudyResult) -> Vec<String> {
    let all = study_methods(s.alpha, s.equivalence, s.min_runs);
    let mut methods = vec![all.observation];
    // A single variant is compared with nothing: no comparison or equivalence methods.
    if s.variants.len() >= 2 {
        methods.push(all.comparisons);
        methods.push(all.equivalence);
    }
    methods.push(all.one_run);
    methods.push(all.per_variant);
    if s.sweep.is_some() {
        methods.push(all.sweeps);
    }
    methods
}

fn pair_count(s: &StudyResult) -> usize {
    loadlab_analysis::compare::pairs_of(&s.comparisons).len()
}
