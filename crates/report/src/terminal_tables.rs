//! The end-of-run summary's tables: one row per step, per group and per merged segment.

use crate::format::{format_ms, percent_of, truncate};
use crate::run_values::segment_row;
use crate::terminal_lines::{table, Align};
use crate::Style;
use loadlab_metrics::result::{LatencySummary, RunResult};
use std::io::{self, Write};

/// Longest step or group name shown in a table before it is shortened.
const NAME_WIDTH: usize = 32;

fn failed_cell(failed: u64, requests: u64) -> String {
    if failed == 0 {
        "0".to_string()
    } else {
        format!("{failed} ({})", percent_of(failed, requests))
    }
}

fn percentile_cells(l: &LatencySummary) -> [String; 4] {
    if l.count == 0 {
        return ["-", "-", "-", "-"].map(String::from);
    }
    [l.p50, l.p95, l.p99, l.max].map(format_ms)
}

pub(crate) fn steps(r: &RunResult, out: &mut dyn Write, style: Style) -> io::Result<()> {
    if r.steps.is_empty() {
        return Ok(());
    }
    let with_groups = r.steps.iter().any(|s| s.group.is_some());
    let mut columns = vec![("step", Align::Left)];
    if with_groups {
        columns.push(("group", Align::Left));
    }
    columns.extend(COUNT_AND_LATENCY);
    let rows: Vec<Vec<String>> = r
        .steps
        .iter()
        .map(|s| {
            let mut row = vec![truncate(&s.name, NAME_WIDTH)];
            if with_groups {
                row.push(truncate(s.group.as_deref().unwrap_or("-"), NAME_WIDTH / 2));
            }
            row.extend(count_and_latency_cells(s.requests, s.failed, &s.latency_ms));
            row
        })
        .collect();
    writeln!(out)?;
    table(out, style, &columns, &rows)
}

/// The columns the step and group tables share.
const COUNT_AND_LATENCY: [(&str, Align); 6] = [
    ("requests", Align::Right),
    ("failed", Align::Right),
    ("p50", Align::Right),
    ("p95", Align::Right),
    ("p99", Align::Right),
    ("max", Align::Right),
];

fn count_and_latency_cells(requests: u64, failed: u64, latency: &LatencySummary) -> Vec<String> {
    let mut cells = vec![requests.to_string(), failed_cell(failed, requests)];
    cells.extend(percentile_cells(latency));
    cells
}

pub(crate) fn groups(r: &RunResult, out: &mut dyn Write, style: Style) -> io::Result<()> {
    if r.groups.is_empty() || crate::run_values::each_group_is_one_step(r) {
        return Ok(());
    }
    let mut columns = vec![("group", Align::Left)];
    columns.extend(COUNT_AND_LATENCY);
    let rows: Vec<Vec<String>> = r
        .groups
        .iter()
        .map(|g| {
            let mut row = vec![truncate(&g.name, NAME_WIDTH)];
            row.extend(count_and_latency_cells(g.requests, g.failed, &g.latency_ms));
            row
        })
        .collect();
    writeln!(out)?;
    table(out, style, &columns, &rows)
}

/// A steered run's stretches of constant load: what each level measured.
pub(crate) fn stretches(r: &RunResult, out: &mut dyn Write, style: Style) -> io::Result<()> {
    use crate::stretch_values::{stretch_note, stretch_row, STRETCH_COLUMNS};
    if r.stretches.is_empty() {
        return Ok(());
    }
    writeln!(out)?;
    writeln!(out, "  {}", style.bold("load as steered"))?;
    let columns: Vec<(&str, Align)> = STRETCH_COLUMNS
        .iter()
        .map(|(name, right)| (*name, if *right { Align::Right } else { Align::Left }))
        .collect();
    let rows: Vec<Vec<String>> = r.stretches.iter().map(|s| stretch_row(r, s)).collect();
    table(out, style, &columns, &rows)?;
    writeln!(out, "  {}", style.dim(&stretch_note(r)))
}

/// A merged run's segments: one row each, so a bad segment is seen at once.
pub(crate) fn segments(r: &RunResult, out: &mut dyn Write, style: Style) -> io::Result<()> {
    if r.segments.is_empty() {
        return Ok(());
    }
    writeln!(out)?;
    let count = r.segments.len();
    let rows: Vec<Vec<String>> = r.segments.iter().map(segment_row).collect();
    writeln!(
        out,
        "  {}",
        style.bold(&format!("segments ({count} merged)"))
    )?;
    table(
        out,
        style,
        &[
            ("segment", Align::Right),
            ("pod @ node (or host)", Align::Left),
            ("requests", Align::Right),
            ("failed", Align::Right),
            ("generator cpu", Align::Right),
            ("start", Align::Right),
            ("clock", Align::Right),
            ("valid", Align::Left),
        ],
        &rows,
    )?;
    if let Some(skew) = &r.clock_skew {
        writeln!(
            out,
            "  clock skew between segments: {:.0} ms ± {:.0} ms (against the {})",
            skew.spread_ms, skew.uncertainty_ms, skew.reference
        )?;
    }
    Ok(())
}
