//! The verdicts at the top of a study report: validity, thresholds, comparisons, sweep
//! findings, unstable variants, warnings and caveats.

use super::comparison::{comparison_verdicts, ComparisonSettings};
use super::metrics::outlier_words;
use super::sweep::sweep_verdicts;
use super::thresholds::threshold_counts;
use super::{warning_verdicts, Runs};
use crate::doc::{Level, Verdict};
use crate::run_doc::caveats;
use crate::verdict_words::drift_sentence;
use crate::words::threshold_sentence;
use loadlab_analysis::study::StudyResult;
use loadlab_metrics::RunResult;
use loadlab_metrics::{LatencyStat, MetricId, Quantity};

/// Runs too short for their tail percentiles, said once at the top: the tables mark each
/// such figure `†` and the comparisons draw no verdict from them.
fn small_sample_verdict(s: &StudyResult) -> Option<Verdict> {
    let thin_stats = |v: &loadlab_analysis::study::VariantStats| -> Vec<&'static str> {
        [LatencyStat::P95, LatencyStat::P99]
            .into_iter()
            .filter(|stat| super::metrics::thin(v, &MetricId::latency(*stat)))
            .map(|stat| stat.label())
            .collect()
    };
    let short: Vec<String> = s
        .variants
        .iter()
        .filter(|v| !thin_stats(v).is_empty())
        .map(|v| {
            let requests = v
                .metrics
                .get(&MetricId::run(Quantity::Requests))
                .map_or(0.0, |m| m.median);
            let stats = thin_stats(v);
            format!(
                "`{}` about {} requests a run (its {} {} on fewer than 10 requests beyond {})",
                v.name,
                crate::format::format_number(requests.round()),
                stats.join(" and "),
                if stats.len() == 1 { "rests" } else { "rest" },
                if stats.len() == 1 { "it" } else { "them" }
            )
        })
        .collect();
    (!short.is_empty()).then(|| {
        Verdict::new(
            Level::Warn,
            format!(
                "The runs are too short for their tail percentiles: {}. Such a figure is nearly the run's maximum, so it is marked † and no comparison verdict is drawn from it; p95 needs 200 requests a run and p99 1,000 (run longer or at a higher rate).",
                short.join("; ")
            ),
        )
    })
}

/// Builds the verdicts of a study; `every` holds all its runs that could be read.
pub(super) fn study_verdicts(s: &StudyResult, runs: &Runs, every: &[&RunResult]) -> Vec<Verdict> {
    // Who was the bottleneck opens the report.
    let mut verdicts = super::resources::bottleneck_verdicts(s, runs);
    verdicts.extend(completeness_verdicts(s));
    verdicts.extend(validity_verdict(s, runs, every));
    verdicts.extend(small_sample_verdict(s));
    verdicts.extend(threshold_verdicts(s, runs));
    verdicts.extend(comparison_verdicts(
        &s.comparisons,
        ComparisonSettings {
            alpha: s.alpha,
            equivalence: s.equivalence,
            min_runs: s.min_runs,
        },
    ));
    if let Some(sw) = &s.sweep {
        verdicts.extend(sweep_verdicts(sw));
    }
    verdicts.extend(unstable_verdicts(s));
    verdicts.extend(drift_and_outlier_verdicts(s));
    verdicts.extend(warning_verdicts(&s.warnings));
    if let Some(r) = every.first() {
        verdicts.extend(caveats(r).into_iter().filter(|c| c.level == Level::Info));
    }
    verdicts
}

/// Whether every planned run was made, and variants left with fewer runs than planned.
fn completeness_verdicts(s: &StudyResult) -> Vec<Verdict> {
    let mut verdicts = Vec::new();
    if s.interrupted {
        verdicts.push(Verdict::new(
            Level::Warn,
            "The study was interrupted: not every planned run was made.",
        ));
    }
    // Imported variants may hold different numbers of files: none was planned.
    let planned = !s.is_imported();
    for short in s.valid_runs().iter().filter(|v| planned && v.is_short()) {
        verdicts.push(Verdict::new(
            Level::Warn,
            format!(
                "Variant `{}` has {}.",
                short.variant,
                short.counts_and_why().trim_end_matches('.')
            ),
        ));
    }
    verdicts
}

/// One sentence on the runs' validity: how many were excluded (with the first reason), kept
/// although invalid, or that all are valid.
fn validity_verdict(s: &StudyResult, runs: &Runs, every: &[&RunResult]) -> Option<Verdict> {
    if s.is_imported() {
        // Not judged: the study's warnings say so, and "valid" would claim what is not known.
        return None;
    }
    let excluded: usize = s.variants.iter().map(|v| v.excluded_runs.len()).sum();
    if excluded > 0 {
        let reasons: Vec<String> = s
            .variants
            .iter()
            .flat_map(|v| v.excluded_runs.iter())
            .filter_map(|id| runs.get(id))
            .flat_map(|r| r.invalid_messages().into_iter().map(str::to_string))
            .collect();
        Some(Verdict::new(
            Level::Fail,
            format!(
                "{excluded} run{} excluded from the statistics as invalid measurements{}.",
                if excluded == 1 { " was" } else { "s were" },
                if reasons.is_empty() {
                    String::new()
                } else {
                    format!(": {}", reasons[0])
                }
            ),
        ))
    } else if every.iter().any(|r| !r.usable()) {
        let kept = every.iter().filter(|r| !r.usable()).count();
        Some(Verdict::new(
            Level::Warn,
            format!(
                "{kept} of {} runs were kept although not valid measurements (--allow-saturated: the generator or its host was saturated).",
                every.len()
            ),
        ))
    } else if !every.is_empty() {
        Some(Verdict::new(
            Level::Pass,
            format!(
                "All {} runs are valid measurements (the load generator's own timing was never disturbed enough to change them).",
                every.len()
            ),
        ))
    } else {
        None
    }
}

/// Failures and near misses one by one; thresholds met everywhere with room, in one line.
/// Without the runs themselves, the failed-run counts of each variant stand in.
fn threshold_verdicts(s: &StudyResult, runs: &Runs) -> Vec<Verdict> {
    let mut verdicts = Vec::new();
    let mut comfortable: Vec<String> = Vec::new();
    let mut comfortable_results = 0;
    for v in &s.variants {
        for (expr, met, of, actual) in threshold_counts(v, runs) {
            let t = loadlab_metrics::result::ThresholdResult {
                expr: expr.clone(),
                actual: None,
                ok: met == of,
            };
            let sentence = threshold_sentence(&t);
            let head = sentence.split(':').next().unwrap_or(&sentence);
            let near = met == of && actual.iter().any(|a| crate::words::near_miss(&expr, *a));
            if met == of && !near {
                comfortable_results += 1;
                if !comfortable.contains(&expr) {
                    comfortable.push(expr);
                }
                continue;
            }
            verdicts.push(Verdict::new(
                if met == of { Level::Warn } else { Level::Fail },
                format!(
                    "`{}`: {head} in {met}/{of} runs{}.",
                    v.name,
                    if near {
                        ", but within 10% of its bound in at least one"
                    } else {
                        ""
                    }
                ),
            ));
        }
    }
    if !comfortable.is_empty() {
        verdicts.push(Verdict::new(
            Level::Pass,
            format!(
                "{} threshold result{} met in every run with room to spare: {} (the thresholds section has each).",
                comfortable_results,
                if comfortable_results == 1 { "" } else { "s" },
                comfortable
                    .iter()
                    .map(|e| format!("`{e}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ));
    }
    for v in &s.variants {
        if runs.is_empty() && v.thresholds_failed > 0 {
            verdicts.push(Verdict::new(
                Level::Fail,
                format!(
                    "`{}`: thresholds failed in {}/{} runs.",
                    v.name,
                    v.thresholds_failed,
                    v.runs.len()
                ),
            ));
        }
    }
    verdicts
}

/// Variants whose runs disagree too much for one number to describe them.
fn unstable_verdicts(s: &StudyResult) -> Vec<Verdict> {
    s.variants
        .iter()
        .filter(|v| v.unstable)
        .map(|v| {
            let cv = |m: MetricId| {
                v.metrics
                    .get(&m)
                    .and_then(|s| s.cv)
                    .map(|cv| cv * 100.0)
                    .unwrap_or(0.0)
            };
            Verdict::new(
                Level::Warn,
                format!(
                    "`{}` is unstable: its runs disagree (CV of throughput {:.1}%, of p50 {:.1}%, ≥ 10%), so one number does not describe it; look at the per-run dot plot.",
                    v.name,
                    cv(MetricId::run(Quantity::Throughput)),
                    cv(MetricId::latency(LatencyStat::P50))
                ),
            )
        })
        .collect()
}

/// Per variant: its drift over the runs, then its outlier runs on the key metrics.
fn drift_and_outlier_verdicts(s: &StudyResult) -> Vec<Verdict> {
    let mut verdicts = Vec::new();
    let key = loadlab_analysis::study::default_compare_metrics();
    for v in &s.variants {
        for d in &v.drift {
            verdicts.push(Verdict::new(
                Level::Warn,
                format!("`{}`: {}", v.name, drift_sentence(d)),
            ));
        }
        let outliers: Vec<String> = v
            .metrics
            .iter()
            .filter(|(m, st)| key.contains(m) && !st.outliers.is_empty())
            .map(|(m, st)| format!("{} ({})", m.label(), outlier_words(st)))
            .collect();
        if !outliers.is_empty() {
            verdicts.push(Verdict::new(
                Level::Info,
                format!(
                    "`{}` has outlier runs, kept in every statistic: {}.",
                    v.name,
                    outliers.join("; ")
                ),
            ));
        }
    }
    verdicts
}
