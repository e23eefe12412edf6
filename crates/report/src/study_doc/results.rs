//! The per-variant results section of a study: metric tables and the table of its runs.

use super::metrics::{metric_row, MAIN_METRICS, METRIC_COLUMNS};
use super::{variant_runs, Runs};
use crate::doc::{Block, Cell, Level, Section, Table};
use crate::format::{format_ms, format_rate};
use crate::words::error_share;
use loadlab_analysis::study::{MetricStats, StudyResult};

pub(super) fn study_results(s: &StudyResult, runs: &Runs) -> Section {
    let mut sec = Section::new("results", "Results per variant");
    for v in &s.variants {
        sec.push(Block::Heading(format!(
            "`{}`{}",
            v.name,
            if v.unstable { " (unstable)" } else { "" }
        )));
        let mut t = Table::new(&METRIC_COLUMNS);
        for m in MAIN_METRICS {
            if let Some(st) = v.metrics.get(m) {
                t.row(metric_row(m, st));
            }
        }
        sec.push(Block::Table(t));
        let scoped: Vec<(&String, &MetricStats)> = v
            .metrics
            .iter()
            .filter(|(k, _)| k.starts_with("groups.") || k.starts_with("steps."))
            .collect();
        if !scoped.is_empty() {
            let mut t = Table::new(&METRIC_COLUMNS);
            for (k, st) in scoped {
                t.row(metric_row(k, st));
            }
            sec.push(Block::Table(t.with_note(
                "Per group and per step: each run's p95, summarised over all the runs of the variant.",
            )));
        }
        let rs = variant_runs(v, runs);
        if !rs.is_empty() {
            let mut t = Table::new(&[
                ">run",
                "started",
                ">requests",
                ">throughput",
                ">failed",
                ">p50",
                ">p95",
                ">p99",
                "valid",
                "thresholds",
            ]);
            for (i, r) in rs.iter().enumerate() {
                let passed = r.thresholds.iter().filter(|t| t.ok).count();
                t.row(vec![
                    (i + 1).to_string().into(),
                    r.started_at.clone().into(),
                    r.requests.total.to_string().into(),
                    format_rate(r.requests.rate).into(),
                    error_share(r.requests.failed, r.requests.total).into(),
                    format_ms(r.latency_ms.p50).into(),
                    format_ms(r.latency_ms.p95).into(),
                    format_ms(r.latency_ms.p99).into(),
                    if r.valid {
                        Cell::level("yes", Level::Pass)
                    } else {
                        Cell::level("no", Level::Fail)
                    },
                    if r.thresholds.is_empty() {
                        "".into()
                    } else {
                        Cell::level(
                            format!("{passed}/{}", r.thresholds.len()),
                            if passed == r.thresholds.len() {
                                Level::Pass
                            } else {
                                Level::Fail
                            },
                        )
                    },
                ]);
            }
            sec.push(Block::Table(t));
        }
    }
    sec
}
