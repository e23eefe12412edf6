//! The method section of a study: the facts of its plan and how its statistics are made.

use super::summary::load_level_words;
use super::Runs;
use crate::doc::{Block, Section};
use crate::format::format_secs;
use crate::run_doc::{measurement_methods, plan_chart, PlannedLoad};
use crate::words::{duration_words, load_words, scenario_words};
use loadlab_analysis::study::StudyResult;
use loadlab_metrics::RunResult;

/// The statistics of a study, in words (the first three serve a comparison too).
pub(super) fn study_methods(s_alpha: f64, equivalence: f64) -> Vec<String> {
    vec![
        "Each run is one observation: a metric (a run's p95, its throughput) is one number per run, and statistics are taken across runs; percentiles are never averaged across requests.".to_string(),
        "Median with its distribution-free 95% confidence interval (binomial order statistics; needs at least 6 runs); mean with its Student-t 95% interval; CV = standard deviation / mean, a variant is unstable when the CV of throughput or p50 is 10% or more.".to_string(),
        format!("Comparisons: two-sided Mann–Whitney U test per metric, Holm's correction across the metrics of each pair, significance level α = {s_alpha}; the change is the Hodges–Lehmann estimate of variant/baseline − 1 on log values with Moses' 95% interval; equivalence band ±{:.0}%.", equivalence * 100.0),
        "Sweeps: the knee is found with Kneedle on the median throughput curve (and the p95 curve); the Universal Scalability Law is fitted to every run's (VUs, throughput) by non-linear least squares.".to_string(),
    ]
}

pub(super) fn study_method(
    s: &StudyResult,
    runs: &Runs,
    every: &[&RunResult],
    plan: Option<&PlannedLoad>,
) -> Section {
    let mut sec = Section::new("method", "Method");
    let mut facts = vec![(
        "Scenario".to_string(),
        scenario_words(&s.name, s.scenario_file.as_deref()),
    )];
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
            .map(|r| load_words(&r.load))
            .map(|words| match target {
                // Variants that differ by target (A/B of two systems) say which is which.
                Some(t) if targets_differ => format!("{words}; target {t}"),
                _ => words,
            });
        facts.push((
            format!("Variant `{}`", v.name),
            load.unwrap_or_else(|| load_level_words(v)),
        ));
    }
    if let Some(r) = every.first() {
        facts.push(("Run length".to_string(), duration_words(r)));
    }
    facts.push((
        "Repetitions".to_string(),
        format!(
            "{} per variant, {} order, {} cool-down between runs",
            s.repeat,
            s.order,
            format_secs(s.cooldown_s)
        ),
    ));
    facts.push((
        "Started".to_string(),
        format!("{} (finished {})", s.started_at, s.finished_at),
    ));
    facts.push(("Tool".to_string(), format!("loadlab {}", s.tool_version)));
    sec.push(Block::Facts(facts));
    if let Some(p) = plan {
        sec.push(Block::Chart(plan_chart(
            p,
            every.first().map(|r| r.warmup_s).unwrap_or(0.0),
        )));
    }
    sec.push(Block::Heading("Statistics".into()));
    sec.push(Block::List(study_methods(s.alpha, s.equivalence)));
    sec.push(Block::Heading("Measurement".into()));
    sec.push(Block::List(measurement_methods(
        every
            .first()
            .map(|r| r.load.model.as_str())
            .unwrap_or("closed"),
    )));
    sec
}
