//! The summary section of a study: what was tested and one row of medians per variant.

use super::metrics::{cv_words, fmt, median_ci_words, thin, too_few_for_ci, THIN_NOTE};
use crate::doc::{Block, Cell, Level, Section, Table};
use crate::format::format_rate;
use loadlab_analysis::study::{LoadKind, StudyResult, VariantStats};
use loadlab_metrics::{LatencyStat, MetricId, Quantity};

pub(super) fn load_level_words(v: &VariantStats) -> String {
    match &v.load {
        Some(l) if l.kind == LoadKind::Vus && l.value == 1.0 => "1 VU".to_string(),
        Some(l) if l.kind == LoadKind::Vus => format!("{:.0} VUs", l.value),
        Some(l) => format_rate(l.value),
        None => String::new(),
    }
}

/// The study's one-sentence description: its scenario, variants, and the runs behind them
/// (planned repetitions, or the files another tool's runs came from).
fn what_was_tested(s: &StudyResult) -> String {
    let runs = if s.is_imported() {
        format!(
            "with runs imported from {} result files ({})",
            s.imported_from.join(", "),
            s.runs_per_variant_words()
        )
    } else {
        format!("× {} repetitions in {} order", s.repeat, s.order)
    };
    format!(
        "**What was tested:** scenario `{}`{}, {} variant{} ({}) {runs}. Each run is one observation; the table shows the median across runs with its 95% confidence interval.",
        s.name,
        s.scenario_file.as_deref().map(|f| format!(" (`{f}`)")).unwrap_or_default(),
        s.variants.len(),
        if s.variants.len() == 1 { "" } else { "s" },
        s.variants.iter().map(|v| format!("`{}`", v.name)).collect::<Vec<_>>().join(", "),
    )
}

pub(super) fn study_summary(s: &StudyResult) -> Section {
    let mut sec = Section::new("summary", "Summary");
    sec.push(Block::Text(what_was_tested(s)));
    let mut t = Table::new(&[
        "variant",
        "load",
        ">runs",
        ">throughput",
        ">error rate",
        ">mean",
        ">p50",
        ">p95 [95% CI]",
        ">p99",
        ">max",
        ">CV of p95",
        "stable",
    ]);
    let tput = MetricId::run(Quantity::Throughput);
    let errors = MetricId::run(Quantity::ErrorRate);
    let p95 = MetricId::latency(LatencyStat::P95);
    let mut any_thin = false;
    for v in &s.variants {
        // Percentiles beyond what a typical run can hold are marked †.
        let thin = |k: &MetricId| thin(v, k);
        let med = |k: &MetricId| {
            v.metrics
                .get(k)
                .map(|x| fmt(k, x.median) + if thin(k) { "†" } else { "" })
                .unwrap_or_default()
        };
        any_thin |= thin(&MetricId::latency(LatencyStat::P99));
        t.row(vec![
            format!("`{}`", v.name).into(),
            load_level_words(v).into(),
            format!(
                "{}{}",
                v.runs.len(),
                if v.excluded_runs.is_empty() {
                    String::new()
                } else {
                    format!(" (+{} excluded)", v.excluded_runs.len())
                }
            )
            .into(),
            med(&tput).into(),
            med(&errors).into(),
            med(&MetricId::latency(LatencyStat::Mean)).into(),
            med(&MetricId::latency(LatencyStat::P50)).into(),
            v.metrics
                .get(&p95)
                .map(|x| median_ci_words(&p95, x) + if thin(&p95) { "†" } else { "" })
                .unwrap_or_default()
                .into(),
            med(&MetricId::latency(LatencyStat::P99)).into(),
            med(&MetricId::latency(LatencyStat::Max)).into(),
            v.metrics.get(&p95).map(cv_words).unwrap_or_default().into(),
            if v.runs.len() < 2 {
                // Stability is a spread across runs: one run has none to show.
                Cell::level(
                    if v.runs.is_empty() {
                        "n/a (no run)"
                    } else {
                        "n/a (1 run)"
                    },
                    Level::Info,
                )
            } else if v.unstable {
                Cell::level("unstable", Level::Warn)
            } else if !v.drift.is_empty() {
                Cell::level("drift", Level::Warn)
            } else {
                Cell::level("yes", Level::Pass)
            },
        ]);
    }
    let short = s
        .variants
        .iter()
        .filter_map(|v| v.metrics.get(&p95))
        .any(too_few_for_ci);
    let mut note =
        "Medians across runs of each run's figure (mean, p50 … max of its own latency histogram); "
            .to_string();
    if short {
        note.push_str("[n<6]: fewer than 6 runs, too few for a distribution-free 95% interval; ");
    }
    note.push_str("CV = standard deviation / mean across runs (spread, not a confidence margin).");
    if any_thin {
        note.push(' ');
        note.push_str(THIN_NOTE);
    }
    sec.push(Block::Table(t.with_note(note)));
    sec
}
