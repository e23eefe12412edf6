//! Resources in a study report: per variant, the resource means and maxima across its runs
//! (the cost side of "with vs without observability"), the resource charts of each
//! variant's median run, client against server latency per step, and the bottleneck
//! verdicts (how many runs found the target CPU-bound, overloaded, growing in memory).

use super::charts::representative;
use super::metrics::fmt;
use super::{variant_runs, Runs};
use crate::doc::{Block, Level, Section, Table, Verdict};
use crate::format::format_ms;
use crate::run_doc::{resource_charts, CLIENT_SERVER_COLUMNS};
use loadlab_analysis::study::StudyResult;
use loadlab_metrics::result::{LatencySummary, StepResult};
use loadlab_metrics::{MetricId, TargetVerdictKind};
use std::collections::BTreeSet;

fn kind_words(kind: TargetVerdictKind) -> &'static str {
    match kind {
        TargetVerdictKind::TargetOverloaded => "the target did not keep up with the offered rate",
        TargetVerdictKind::TargetCpuBound => "a monitored process was CPU-bound",
        TargetVerdictKind::MemoryGrowth => "a monitored process's memory grew",
        TargetVerdictKind::SharesHostWithTarget => "the target ran on the generator's host",
    }
}

/// Per variant and kind of target verdict: in how many runs, with one example.
pub(super) fn bottleneck_verdicts(s: &StudyResult, runs: &Runs) -> Vec<Verdict> {
    let mut out = Vec::new();
    // Contended runs kept by --allow-saturated (the others were re-run and excluded).
    let made: Vec<_> = s
        .variants
        .iter()
        .flat_map(|v| v.runs.iter())
        .filter_map(|id| runs.get(id))
        .collect();
    let contended: Vec<_> = made
        .iter()
        .filter_map(|r| {
            r.validity.reasons.iter().find(|x| {
                matches!(
                    x.kind,
                    loadlab_metrics::InvalidKind::HostContended
                        | loadlab_metrics::InvalidKind::CpuStolen
                        | loadlab_metrics::InvalidKind::HostDisturbed
                )
            })
        })
        .collect();
    if let Some(example) = contended.first() {
        out.push(Verdict::new(
            Level::Fail,
            format!(
                "Other processes or the host disturbed the generator's timing in {} of the {} runs kept (with --allow-saturated): their latencies include time the generator could not run (e.g. {}).",
                contended.len(),
                made.len(),
                example.message.trim_end_matches('.')
            ),
        ));
    }
    for v in &s.variants {
        let rs = variant_runs(v, runs);
        for kind in [
            TargetVerdictKind::TargetCpuBound,
            TargetVerdictKind::TargetOverloaded,
            TargetVerdictKind::MemoryGrowth,
        ] {
            let with: Vec<_> = rs
                .iter()
                .filter_map(|r| r.verdicts.iter().find(|t| t.kind == kind))
                .collect();
            if let Some(example) = with.first() {
                out.push(Verdict::new(
                    Level::Warn,
                    format!(
                        "Variant `{}`: {} in {} of {} runs (e.g. {}).",
                        v.name,
                        kind_words(kind),
                        with.len(),
                        rs.len(),
                        example.message.trim_end_matches('.')
                    ),
                ));
            }
        }
    }
    out
}

/// Resource series measured by any variant, in name order.
fn resource_series(s: &StudyResult) -> Vec<String> {
    let set: BTreeSet<String> = s
        .variants
        .iter()
        .flat_map(|v| v.metrics.keys())
        .filter_map(|m| m.resource_series().map(str::to_string))
        .collect();
    set.into_iter().collect()
}

/// Median across runs of each run's mean, and the largest maximum of any run.
fn means_and_maxima(s: &StudyResult, series: &[String]) -> Table {
    let mut cols = vec!["series".to_string()];
    for v in &s.variants {
        cols.push(format!(">{} mean", v.name));
        cols.push(format!(">{} max", v.name));
    }
    let cols: Vec<&str> = cols.iter().map(String::as_str).collect();
    let mut t = Table::new(&cols);
    for name in series {
        let mut row = cells![format!("`{name}`")];
        for v in &s.variants {
            let mean = MetricId::resource(name, false);
            let max = MetricId::resource(name, true);
            row.push(
                v.metrics
                    .get(&mean)
                    .map(|m| fmt(&mean, m.median))
                    .unwrap_or_default()
                    .into(),
            );
            row.push(
                v.metrics
                    .get(&max)
                    .map(|m| fmt(&max, m.max))
                    .unwrap_or_default()
                    .into(),
            );
        }
        t.row(row);
    }
    t.with_note("mean: the median across the variant's runs of each run's mean over its steady window; max: the largest sample of any run. Compare them between variants with `study.metrics: [process.NAME.cpu_percent]` or `loadlab compare --metric process.NAME.cpu_percent`.")
}

/// Client and server latency per variant and step (medians across runs).
fn server_split(s: &StudyResult, runs: &Runs) -> Option<Table> {
    let mut t = Table::new(&[&["variant", "step"][..], &CLIENT_SERVER_COLUMNS].concat());
    for v in &s.variants {
        let rs = variant_runs(v, runs);
        let Some(first) = rs.first() else { continue };
        for (k, step) in first.steps.iter().enumerate() {
            let pick = |f: &dyn Fn(&StepResult) -> Option<f64>| {
                let values: Vec<f64> = rs
                    .iter()
                    .filter_map(|r| r.steps.get(k).and_then(f))
                    .collect();
                (!values.is_empty()).then(|| super::median(&values))
            };
            let client = |q: fn(&LatencySummary) -> f64| pick(&|st| Some(q(&st.latency_ms)));
            let server = |q: fn(&LatencySummary) -> f64| {
                pick(&|st| st.server_latency_ms.filter(|l| l.count > 0).map(|l| q(&l)))
            };
            let Some(sp50) = server(|l| l.p50) else {
                continue;
            };
            let ms = |v: Option<f64>| format_ms(v.unwrap_or(0.0));
            t.row(cells![
                v.name.as_str(),
                format!("`{}`", step.name),
                ms(client(|l| l.p50)),
                format_ms(sp50),
                ms(client(|l| l.p95)),
                ms(server(|l| l.p95)),
                ms(client(|l| l.p99)),
                ms(server(|l| l.p99)),
            ]);
        }
    }
    (!t.rows.is_empty()).then(|| t.with_note("Medians across each variant's runs. Client latency is what loadlab measured; server latency is what the responses reported (`Server-Timing` or the configured header): the difference is the network and the queueing in front of the application."))
}

/// The Resources section of a study (`None`: nothing was monitored, no server timing).
pub(super) fn study_resources(s: &StudyResult, runs: &Runs) -> Option<Section> {
    let series = resource_series(s);
    let split = server_split(s, runs);
    if series.is_empty() && split.is_none() {
        return None;
    }
    let mut sec = Section::new("resources", "Resources");
    if !series.is_empty() {
        sec.push(Block::Table(means_and_maxima(s, &series)));
        for v in &s.variants {
            let Some(run) = representative(v, runs) else {
                continue;
            };
            let Some(res) = run.resources.as_ref().filter(|r| r.segments.is_empty()) else {
                continue;
            };
            let charts = resource_charts(res, run.warmup_s);
            if charts.is_empty() {
                continue;
            }
            sec.push(Block::Heading(format!("`{}` (its median run)", v.name)));
            for mut c in charts {
                c.x = crate::chart::Axis::time(crate::run_doc::run_end_s(run));
                c.id = format!(
                    "{}-{}",
                    v.name.replace(|ch: char| !ch.is_ascii_alphanumeric(), "-"),
                    c.id
                );
                c.title = format!("{} — {}", v.name, c.title);
                sec.push(Block::chart(c));
            }
        }
    }
    if let Some(t) = split {
        sec.push(Block::Heading("Client and server latency".to_string()));
        sec.push(Block::Table(t));
        if let Some(per_run) = super::rounds::client_server_per_run(s, runs) {
            sec.push(Block::Table(per_run));
        }
    }
    Some(sec)
}
