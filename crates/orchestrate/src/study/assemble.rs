//! From the runs a study has made so far to its `study.json`: statistics per variant,
//! comparisons, degradation factors, the sweep analysis and the warnings a reader needs.
//! Called after every run (the journal of a study that may be interrupted) and at the end.

use super::plan::StudyPlan;
use loadlab_analysis::compare::{family_size, power_warnings, CompareOptions, Comparison, ALPHA};
use loadlab_analysis::study::{
    self as st, Degradation, RunEntry, RunSample, StudyResult, VariantStats,
    MIN_RUNS_FOR_COMPARISON, STUDY_SCHEMA,
};
use loadlab_metrics::{MetricId, RunResult};

/// A run the study made, with its result.
#[derive(Debug, Clone)]
pub struct MadeRun {
    pub entry: RunEntry,
    pub result: RunResult,
}

/// Identity of the study in the store.
#[derive(Debug, Clone)]
pub struct StudyIds {
    pub id: String,
    pub started_at: String,
}

/// The study as it stands after `runs`; `complete` when every planned run was made.
pub fn assemble(plan: &StudyPlan, ids: &StudyIds, runs: &[MadeRun], complete: bool) -> StudyResult {
    let mut warnings: Vec<String> = Vec::new();
    let comparing = plan.variants.len() > 1 && plan.sweep.is_none();
    if comparing && plan.repeat < MIN_RUNS_FOR_COMPARISON {
        warnings.push(format!(
            "{} runs per variant: a verdict needs at least {MIN_RUNS_FOR_COMPARISON} per side (10 recommended), so comparisons read `insufficient`",
            plan.repeat
        ));
    }
    let stats = variant_stats(plan, runs);
    // Unstable variants, drift, outlier and excluded runs are typed in `stats` and said by
    // the summary and the report.
    let retried = runs.iter().filter(|r| r.entry.attempt > 0).count();
    if retried > 0 {
        warnings.push(format!(
            "{retried} run(s) were re-runs of invalid runs (study.retry_invalid: {}); the run log lists each and why",
            plan.retry_invalid
        ));
    }
    let metrics = compared_metrics(plan, &stats, complete, &mut warnings);
    let pairs = if comparing {
        compared_pairs(plan, &stats)
    } else {
        Vec::new()
    };
    let (comparisons, degradation) = compare_variants(plan, &stats, &metrics, &pairs);
    let rounds = rounds_of_segments(plan, runs, &pairs);
    warnings.extend(power_warnings(&comparisons, ALPHA));
    let sweep = plan.sweep.as_ref().map(|s| {
        let points: Vec<(f64, &VariantStats)> = plan
            .variants
            .iter()
            .zip(&stats)
            .filter(|(_, vs)| !vs.runs.is_empty())
            .filter_map(|(v, vs)| v.sweep_value.map(|x| (x, vs)))
            .collect();
        st::analyze_sweep(s.parameter.into(), &points)
    });
    let planned_runs = plan.repeat * plan.variants.len();
    if !complete {
        let done = runs.iter().filter(|r| r.entry.used).count();
        warnings.push(format!(
            "the study was stopped after {done} of {planned_runs} planned runs: this is a partial result (resume it with `loadlab study {} --resume {}`)",
            plan.scenario_file.as_deref().unwrap_or("FILE"),
            ids.id
        ));
    }
    StudyResult {
        schema: STUDY_SCHEMA.to_string(),
        tool_version: env!("CARGO_PKG_VERSION").to_string(),
        id: ids.id.clone(),
        name: plan.name.clone(),
        scenario_file: plan.scenario_file.clone(),
        started_at: ids.started_at.clone(),
        finished_at: loadlab_metrics::result::rfc3339(std::time::SystemTime::now()),
        repeat: plan.repeat,
        order: plan.order.as_str().to_string(),
        cooldown_s: plan.cooldown.as_secs_f64(),
        equivalence: plan.equivalence,
        compare_on: plan.compare_on,
        alpha: ALPHA,
        min_runs: MIN_RUNS_FOR_COMPARISON,
        family_size: family_size(&comparisons),
        interrupted: !complete,
        warnings,
        variants: stats,
        comparisons,
        degradation,
        sweep,
        plan_hash: Some(plan.fingerprint()),
        retry_invalid: plan.retry_invalid,
        warmup_runs: plan.warmup_runs,
        planned_runs,
        run_log: runs.iter().map(|r| r.entry.clone()).collect(),
        rounds,
        imported_from: Vec::new(),
    }
}

/// The rounds analysis of a study whose runs were rounds of segments, over each variant's
/// valid rounds.
fn rounds_of_segments(
    plan: &StudyPlan,
    runs: &[MadeRun],
    pairs: &[(usize, usize)],
) -> Option<st::RoundsStudy> {
    let variants: Vec<st::VariantRuns<'_>> = plan
        .variants
        .iter()
        .map(|v| st::VariantRuns {
            name: &v.name,
            runs: runs
                .iter()
                .filter(|r| r.entry.variant == v.name && r.entry.used)
                .map(|r| (r.entry.run.as_str(), &r.result))
                .collect(),
        })
        .collect();
    st::analyze_rounds(&variants, pairs)
}

/// The statistics of each planned variant over its runs so far (excluded runs kept apart).
fn variant_stats(plan: &StudyPlan, runs: &[MadeRun]) -> Vec<VariantStats> {
    plan.variants
        .iter()
        .map(|v| {
            let samples: Vec<RunSample<'_>> = runs
                .iter()
                .filter(|r| r.entry.variant == v.name)
                .map(|r| RunSample {
                    id: r.entry.run.clone(),
                    result: &r.result,
                    excluded: !r.entry.used,
                })
                .collect();
            st::summarize_variant(&v.name, &samples)
        })
        .collect()
}

/// The metrics the study compares, each latency one on the plan's `compare_on`: the plan's
/// that the runs measured (once complete, a warning for each that they did not), or the
/// default ones.
fn compared_metrics(
    plan: &StudyPlan,
    stats: &[VariantStats],
    complete: bool,
    warnings: &mut Vec<String>,
) -> Vec<MetricId> {
    let on_basis = |ids: Vec<MetricId>| -> Vec<MetricId> {
        let mut out: Vec<MetricId> = Vec::new();
        for id in ids.into_iter().map(|id| plan.compare_on.metric(id)) {
            if !out.contains(&id) {
                out.push(id);
            }
        }
        out
    };
    let Some(ids) = &plan.metrics else {
        return on_basis(st::default_metrics_for(&stats.iter().collect::<Vec<_>>()));
    };
    let ids = on_basis(ids.clone());
    let measured = st::available_metrics(&stats.iter().collect::<Vec<_>>());
    if complete {
        for m in ids.iter().filter(|m| !measured.contains(m)) {
            warnings.push(format!(
                "study.metrics: `{m}` was not measured by the runs, so it is not compared"
            ));
        }
    }
    ids.iter()
        .filter(|m| measured.contains(m))
        .cloned()
        .collect()
}

/// The pairs a study compares: the plan's, by default each variant against the first.
fn compared_pairs(plan: &StudyPlan, stats: &[VariantStats]) -> Vec<(usize, usize)> {
    if plan.compare.is_empty() {
        (1..stats.len()).map(|i| (0, i)).collect()
    } else {
        plan.compare
            .iter()
            .filter_map(|(a, b)| {
                let ia = stats.iter().position(|v| &v.name == a)?;
                let ib = stats.iter().position(|v| &v.name == b)?;
                Some((ia, ib))
            })
            .collect()
    }
}

/// The pairs compared on `metrics`, and the degradation factors of the pairs where both
/// sides have runs.
fn compare_variants(
    plan: &StudyPlan,
    stats: &[VariantStats],
    metrics: &[MetricId],
    pairs: &[(usize, usize)],
) -> (Vec<Comparison>, Vec<Degradation>) {
    if pairs.is_empty() {
        return (Vec::new(), Vec::new());
    }
    let options = CompareOptions::with_equivalence(plan.equivalence);
    // One Holm family over every pair; pairs with too few valid runs read `insufficient`.
    let comparisons = st::compare_study(stats, pairs, metrics, &options);
    let degradation = pairs
        .iter()
        .filter(|&&(a, b)| !stats[a].runs.is_empty() && !stats[b].runs.is_empty())
        .map(|&(a, b)| st::degradation(&stats[a], &stats[b]))
        .collect();
    (comparisons, degradation)
}
