//! From the runs a study has made so far to its `study.json`: statistics per variant,
//! comparisons, degradation factors, the sweep analysis and the warnings a reader needs.
//! Called after every run (the journal of a study that may be interrupted) and at the end.

use super::plan::StudyPlan;
use loadlab_analysis::compare::{CompareOptions, ALPHA};
use loadlab_analysis::study::{
    self as st, RunEntry, RunSample, StudyResult, VariantStats, DEFAULT_COMPARE_METRICS,
    MIN_RUNS_FOR_COMPARISON, STUDY_SCHEMA,
};
use loadlab_metrics::RunResult;

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
    let comparing = plan.variants.len() > 1;
    if comparing && plan.repeat < MIN_RUNS_FOR_COMPARISON {
        warnings.push(format!(
            "{} runs per variant: comparisons need at least {MIN_RUNS_FOR_COMPARISON} (10 recommended), so none is made",
            plan.repeat
        ));
    }
    let stats: Vec<VariantStats> = plan
        .variants
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
        .collect();
    for v in &stats {
        if v.unstable {
            warnings.push(format!(
                "variant `{}` is unstable (CV ≥ 10% on throughput or p50 across runs): trust ranges, not single numbers",
                v.name
            ));
        }
        if !v.excluded_runs.is_empty() {
            warnings.push(format!(
                "variant `{}`: {} invalid run(s) not in the statistics ({})",
                v.name,
                v.excluded_runs.len(),
                v.excluded_runs.join(", ")
            ));
        }
    }
    let retried = runs.iter().filter(|r| r.entry.attempt > 0).count();
    if retried > 0 {
        warnings.push(format!(
            "{retried} run(s) were re-runs of invalid runs (study.retry_invalid: {}); the run log lists each and why",
            plan.retry_invalid
        ));
    }
    let metrics: Vec<String> = plan.metrics.clone().unwrap_or_else(|| {
        DEFAULT_COMPARE_METRICS
            .iter()
            .map(|s| s.to_string())
            .collect()
    });
    let options = CompareOptions {
        alpha: ALPHA,
        equivalence: plan.equivalence,
    };
    let mut comparisons = Vec::new();
    let mut degradation = Vec::new();
    if comparing && plan.sweep.is_none() {
        let pairs: Vec<(usize, usize)> = if plan.compare.is_empty() {
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
        };
        for (a, b) in pairs {
            let (na, nb) = (stats[a].runs.len(), stats[b].runs.len());
            if na >= MIN_RUNS_FOR_COMPARISON && nb >= MIN_RUNS_FOR_COMPARISON {
                comparisons.extend(st::compare_variants(
                    &stats[a], &stats[b], &metrics, &options,
                ));
            } else if plan.repeat >= MIN_RUNS_FOR_COMPARISON && complete {
                warnings.push(format!(
                    "`{}` vs `{}` not compared: {na}+{nb} valid runs, at least {MIN_RUNS_FOR_COMPARISON} per side needed",
                    stats[a].name, stats[b].name
                ));
            }
            if na > 0 && nb > 0 {
                degradation.push(st::degradation(&stats[a], &stats[b]));
            }
        }
    }
    let sweep = plan.sweep.as_ref().map(|s| {
        let points: Vec<(f64, &VariantStats)> = plan
            .variants
            .iter()
            .zip(&stats)
            .filter(|(_, vs)| !vs.runs.is_empty())
            .filter_map(|(v, vs)| v.sweep_value.map(|x| (x, vs)))
            .collect();
        let (result, w) = st::analyze_sweep(s.parameter.as_str(), &points);
        warnings.extend(w);
        result
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
        alpha: ALPHA,
        interrupted: !complete,
        warnings,
        variants: stats,
        comparisons,
        degradation,
        sweep,
        plan_hash: Some(plan.fingerprint()),
        retry_invalid: plan.retry_invalid,
        planned_runs,
        run_log: runs.iter().map(|r| r.entry.clone()).collect(),
    }
}
