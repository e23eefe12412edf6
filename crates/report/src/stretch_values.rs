//! A steered run's stretches of constant load as the terminal summary and the run report
//! both show them: one row per stretch, worded once for both (the exploratory answer, "at
//! 800/s p95 was 40 ms, at 1,200/s 900 ms").

use crate::format::{format_ms, format_rate, format_secs, percent_of};
use loadlab_metrics::result::RunResult;
use loadlab_metrics::{LoadModel, LoadStretch, StretchLevel};
use loadlab_scenario::steer::Level;

/// The table's columns; `true`: right-aligned.
pub(crate) const STRETCH_COLUMNS: [(&str, bool); 10] = [
    ("from – to", false),
    ("load", false),
    ("measured", true),
    ("requests", true),
    ("achieved", true),
    ("failed", true),
    ("p50", true),
    ("p95", true),
    ("p99", true),
    ("max", true),
];

/// A level of the run's load: `800/s`, or `40 VUs` (closed model).
pub(crate) fn level_words(r: &RunResult, x: f64) -> String {
    let vus = r
        .load
        .driven
        .as_ref()
        .map_or(r.load.model == LoadModel::Closed, |d| d.vus);
    if vus {
        Level::Vus(x.round() as u32).words()
    } else {
        Level::Rate(x).words()
    }
}

/// One stretch's row, in [`STRETCH_COLUMNS`] order.
pub(crate) fn stretch_row(r: &RunResult, s: &LoadStretch) -> Vec<String> {
    let load = match s.level {
        StretchLevel::Steady { level } => level_words(r, level),
        StretchLevel::Paused => "paused".to_string(),
        StretchLevel::Ramp { from, to } => {
            format!("{} → {}", level_words(r, from), level_words(r, to))
        }
    };
    let at = |t: f64| {
        if t <= 0.0 {
            "0s".to_string()
        } else {
            format_secs(t)
        }
    };
    let span = format!("{} – {}", at(s.from_s), at(s.to_s));
    if s.measured_s <= 0.0 {
        let mut row = vec![span, load, "-".to_string()];
        row.extend(std::iter::repeat_n("-".to_string(), 7));
        return row;
    }
    let l = &s.latency_ms;
    let latency = if s.requests > 0 {
        [l.p50, l.p95, l.p99, l.max].map(format_ms)
    } else {
        ["-", "-", "-", "-"].map(String::from)
    };
    let mut row = vec![
        span,
        load,
        format_secs(s.measured_s),
        s.requests.to_string(),
        format_rate(s.rate),
        if s.failed == 0 {
            "0".to_string()
        } else {
            format!("{} ({})", s.failed, percent_of(s.failed, s.requests))
        },
    ];
    row.extend(latency);
    row
}

/// What the table's figures cover, and the requests it leaves out.
pub(crate) fn stretch_note(r: &RunResult) -> String {
    let in_rows: u64 = r.stretches.iter().map(|s| s.requests).sum();
    let between = r.requests.total.saturating_sub(in_rows);
    format!(
        "measured: the record's intervals wholly inside the stretch, after the warm-up; the {between} request{} of intervals in which the load changed are in no row (they were sent at two levels).",
        if between == 1 { "" } else { "s" }
    )
}
