//! The tables of a run: latency, counts, status codes, groups and steps, errors and thresholds.

use crate::doc::{Block, Cell, Level, Section, Table};
use crate::format::{format_ms, format_rate};
use crate::run_values::each_group_is_one_step;
use crate::words::*;
use loadlab_metrics::result::{LatencySummary, RunResult};

/// A percentile's cell, marked † when it rests on fewer than 10 samples beyond it.
fn pct(l: &LatencySummary, v: f64, q: f64) -> String {
    if loadlab_metrics::thin_percentile(l.count, q) && l.count > 0 {
        format!("{}†", format_ms(v))
    } else {
        format_ms(v)
    }
}

/// The note under a table with † cells.
pub(crate) const THIN_NOTE: &str = "† fewer than 10 requests lie beyond this percentile (p99 needs 1,000 requests, p95 200): it is close to the maximum, and no conclusion should rest on it.";

fn latency_row(name: &str, l: &LatencySummary) -> Vec<Cell> {
    cells![
        name,
        l.count.to_string(),
        format_ms(l.min),
        format_ms(l.mean),
        pct(l, l.p50, 0.5),
        pct(l, l.p90, 0.9),
        pct(l, l.p95, 0.95),
        pct(l, l.p99, 0.99),
        pct(l, l.p999, 0.999),
        format_ms(l.max),
    ]
}

/// Any percentile of `l` shown in a table that rests on too few samples.
fn thin(l: &LatencySummary) -> bool {
    l.count > 0 && loadlab_metrics::thin_percentile(l.count, 0.99)
}

const LATENCY_COLUMNS: [&str; 10] = [
    "", ">count", ">min", ">mean", ">p50", ">p90", ">p95", ">p99", ">p99.9", ">max",
];

/// The columns of [`scoped_cells`], after the group's or step's own.
const SCOPED_COLUMNS: [&str; 6] = [">requests", ">failed", ">p50", ">p95", ">p99", ">max"];

/// Requests, failed share, p50, p95, p99 and max of a group or a step.
fn scoped_cells(requests: u64, failed: u64, l: &LatencySummary) -> Vec<Cell> {
    cells![
        requests.to_string(),
        error_share(failed, requests),
        pct(l, l.p50, 0.5),
        pct(l, l.p95, 0.95),
        pct(l, l.p99, 0.99),
        format_ms(l.max)
    ]
}

pub(super) fn results(r: &RunResult) -> Section {
    let mut s = Section::new("results", "Results");
    s.push(Block::Table(latency_table(r)));
    for block in super::phases::phase_blocks(r) {
        s.push(block);
    }
    s.push(Block::Table(counts_table(r)));
    if !r.status_codes.is_empty() {
        s.push(Block::Heading("Status codes".to_string()));
        s.push(Block::Table(status_codes_table(r)));
    }
    if !r.groups.is_empty() && !each_group_is_one_step(r) {
        s.push(Block::Heading("Per group".to_string()));
        s.push(Block::Table(groups_table(r)));
    }
    if r.steps.len() > 1 || r.steps.iter().any(|s| s.group.is_some()) {
        s.push(Block::Heading("Per step".to_string()));
        s.push(Block::Table(steps_table(r)));
    }
    s
}

/// Latency and service time (with send lag in the open model) and iteration duration.
fn latency_table(r: &RunResult) -> Table {
    let mut t = Table::new(&LATENCY_COLUMNS);
    t.row(latency_row("latency", &r.latency_ms));
    if let Some(c) = &r.latency_compensated_ms {
        t.row(latency_row("latency, compensated", c));
    }
    t.row(latency_row("service time", &r.service_time_ms));
    let compensated = r
        .compensation
        .as_ref()
        .map(|c| {
            format!(
                " Compensated (closed model): {}.",
                crate::terminal_timings::compensation_words(c)
            )
        })
        .unwrap_or_default();
    let mut t = t.with_note(format!(
        "Latency is what a user waits; service time is measured from the actual send (they differ when the generator sends late); iteration duration is one pass through a flow, start to end.{compensated}{}",
        if thin(&r.latency_ms) {
            format!(" {THIN_NOTE}")
        } else {
            String::new()
        }
    ));
    if r.load.model == loadlab_metrics::LoadModel::Open {
        t.row(cells![
            "send lag",
            "",
            "",
            "",
            format_ms(r.lag_ms.p50),
            "",
            "",
            format_ms(r.lag_ms.p99),
            "",
            format_ms(r.lag_ms.max)
        ]);
    }
    if let Some(d) = r.iterations.duration_ms.filter(|d| d.count > 0) {
        t.row(latency_row("iteration duration", &d));
    }
    t
}

/// Requests, throughput, data, iterations and VUs (and dropped arrivals in the open model).
fn counts_table(r: &RunResult) -> Table {
    let mut counts = Table::new(&["", ">value"]);
    counts.row(cells!["requests completed", r.requests.total.to_string()]);
    counts.row(cells!["requests ok", r.requests.ok.to_string()]);
    counts.row(cells![
        "requests failed",
        format!(
            "{} ({})",
            r.requests.failed,
            error_share(r.requests.failed, r.requests.total)
        )
    ]);
    counts.row(cells!["throughput", format_rate(r.requests.rate)]);
    super::phases::data_rows(r, &mut counts);
    counts.row(cells![
        "iterations completed",
        r.iterations.completed.to_string()
    ]);
    if let Some(max) = r.vus_max {
        counts.row(cells!["VUs max (most active at once)", max.to_string()]);
    }
    if r.load.model == loadlab_metrics::LoadModel::Open {
        counts.row(cells!["arrivals dropped", r.iterations.dropped.to_string()]);
        counts.row(cells![
            "arrivals delayed by max_in_flight",
            r.iterations.delayed_by_max_in_flight.to_string()
        ]);
    }
    counts
}

fn status_codes_table(r: &RunResult) -> Table {
    let mut t = Table::new(&["status", ">responses", ">share"]);
    let total: u64 = r.status_codes.values().sum();
    for (code, n) in &r.status_codes {
        t.row(cells![code.as_str(), n.to_string(), error_share(*n, total)]);
    }
    t
}

fn groups_table(r: &RunResult) -> Table {
    let mut t = Table::new(&[&["group"][..], &SCOPED_COLUMNS].concat());
    for g in &r.groups {
        let mut row = cells![format!("`{}`", g.name)];
        row.extend(scoped_cells(g.requests, g.failed, &g.latency_ms));
        t.row(row);
    }
    t
}

/// One row per step, with its group; the note says when the groups were left out.
fn steps_table(r: &RunResult) -> Table {
    let mut t = Table::new(&[&["step", "group"][..], &SCOPED_COLUMNS].concat());
    for st in &r.steps {
        let mut row = cells![
            format!("`{}`", st.name),
            st.group.clone().unwrap_or_default()
        ];
        row.extend(scoped_cells(st.requests, st.failed, &st.latency_ms));
        t.row(row);
    }
    let mut notes = Vec::new();
    if !r.groups.is_empty() && each_group_is_one_step(r) {
        notes.push("Each group holds one step: its figures are that step's.".to_string());
    }
    if r.steps.iter().any(|st| thin(&st.latency_ms)) {
        notes.push(THIN_NOTE.to_string());
    }
    if notes.is_empty() {
        t
    } else {
        t.with_note(notes.join(" "))
    }
}

/// Errors by kind, with what each means and an example message.
pub fn errors_table(r: &RunResult) -> Table {
    let mut t = Table::new(&[
        "kind",
        ">count",
        ">share of requests",
        "what it means",
        "example",
    ]);
    let mut kinds: Vec<(&String, &u64)> = r.errors.iter().collect();
    kinds.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    for (kind, n) in kinds {
        t.row(cells![
            format!("`{kind}`"),
            n.to_string(),
            error_share(*n, r.requests.total),
            r.error_hints.get(kind).cloned().unwrap_or_default(),
            r.error_examples.get(kind).cloned().unwrap_or_default()
        ]);
    }
    t
}

pub(super) fn errors(r: &RunResult) -> Section {
    let mut s = Section::new("errors", "Errors");
    s.push(Block::Text(format!(
        "{} of {} requests failed ({}).",
        r.requests.failed,
        r.requests.total,
        error_share(r.requests.failed, r.requests.total)
    )));
    s.push(Block::Table(errors_table(r)));
    s
}

pub(super) fn thresholds(r: &RunResult) -> Section {
    let mut s = Section::new("thresholds", "Thresholds");
    let mut t = Table::new(&["threshold", ">actual", "result"]);
    for th in &r.thresholds {
        t.row(cells![
            format!("`{}`", th.expr),
            threshold_actual(th),
            if th.ok {
                Cell::level("met", Level::Pass)
            } else {
                Cell::level("missed", Level::Fail)
            }
        ]);
    }
    s.push(Block::Table(t));
    s
}
