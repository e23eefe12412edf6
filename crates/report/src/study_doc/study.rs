//! The report of a study (variants × repetitions, or a sweep): verdicts and sections assembled.

use super::charts::study_charts;
use super::comparison::comparison_section;
use super::environment::multi_environment;
use super::errors::multi_errors;
use super::method::study_method;
use super::reruns::reruns_section;
use super::results::study_results;
use super::summary::study_summary;
use super::sweep::sweep_section;
use super::thresholds::study_thresholds;
use super::verdicts::study_verdicts;
use super::{all_runs, Runs};
use crate::doc::{DocKind, ReportDoc};
use crate::run_doc::PlannedLoad;
use loadlab_analysis::study::StudyResult;

/// Builds the report of a study (variants × repetitions, or a sweep).
pub fn study_report(s: &StudyResult, runs: &Runs, plan: Option<&PlannedLoad>) -> ReportDoc {
    let every = all_runs(s, runs);
    let verdicts = study_verdicts(s, runs, &every);

    let kind = if s.sweep.is_some() {
        DocKind::Sweep
    } else {
        DocKind::Study
    };
    let mut sections = vec![
        study_summary(s),
        study_method(s, runs, &every, plan),
        multi_environment(&every),
        study_results(s, runs),
    ];
    sections.push(study_charts(s, runs));
    if let Some(sec) = super::resources::study_resources(s, runs) {
        sections.push(sec);
    }
    if let Some(sec) = sweep_section(s, runs) {
        sections.push(sec);
    }
    if let Some(sec) = super::streaming::study_streaming(s, runs) {
        sections.push(sec);
    }
    if let Some(sec) = comparison_section(s) {
        sections.push(sec);
    }
    if let Some(sec) = super::segments::segments_section(s) {
        sections.push(sec);
    }
    if let Some(sec) = reruns_section(s) {
        sections.push(sec);
    }
    if let Some(sec) = multi_errors(s, runs) {
        sections.push(sec);
    }
    if let Some(sec) = study_thresholds(s, runs) {
        sections.push(sec);
    }
    ReportDoc {
        kind,
        title: format!(
            "{}: {} report",
            s.name,
            if kind == DocKind::Sweep {
                "sweep"
            } else {
                "study"
            }
        ),
        subtitle: if s.is_imported() {
            format!(
                "{} variant{} · runs imported from {} ({}) · {} · started {} · loadlab {}",
                s.variants.len(),
                if s.variants.len() == 1 { "" } else { "s" },
                s.imported_from.join(", "),
                s.runs_per_variant_words(),
                s.id,
                s.started_at,
                s.tool_version
            )
        } else {
            format!(
                "{} variant{} × {} runs · {} · started {} · loadlab {}",
                s.variants.len(),
                if s.variants.len() == 1 { "" } else { "s" },
                s.repeat,
                s.id,
                s.started_at,
                s.tool_version
            )
        },
        verdicts,
        sections,
        tool_version: s.tool_version.clone(),
    }
}
