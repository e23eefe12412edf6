//! The summary section of a run: what was tested and its key figures.

use crate::doc::{Block, Cell, Level, Section, Table};
use crate::format::{format_ms, format_rate};
use crate::words::*;
use loadlab_metrics::result::RunResult;

pub(super) fn summary(r: &RunResult) -> Section {
    let mut s = Section::new("summary", "Summary");
    s.push(Block::Text(format!(
        "**What was tested:** scenario `{}` against {}, {}; {}.",
        r.name,
        r.target
            .as_deref()
            .map(|t| format!("`{t}`"))
            .unwrap_or_else(|| "an unrecorded target".to_string()),
        run_load_words(r),
        duration_words(r)
    )));
    s.push(Block::Table(key_table(r)));
    s
}

fn key_table(r: &RunResult) -> Table {
    let mut t = Table::new(&["Metric", ">Value"]);
    t.row(cells!["Requests", r.requests.total.to_string()]);
    t.row(cells!["Throughput", format_rate(r.requests.rate)]);
    let failed = error_share(r.requests.failed, r.requests.total);
    t.row(cells![
        "Failed",
        Cell::level(
            format!("{} ({failed})", r.requests.failed),
            if r.requests.failed == 0 {
                Level::Pass
            } else {
                Level::Warn
            }
        )
    ]);
    let l = &r.latency_ms;
    for (name, v) in [
        ("Latency p50", l.p50),
        ("Latency p95", l.p95),
        ("Latency p99", l.p99),
        ("Latency max", l.max),
    ] {
        t.row(cells![name, format_ms(v)]);
    }
    if r.load.model == loadlab_metrics::LoadModel::Open {
        t.row(cells!["Send lag p99", format_ms(r.lag_ms.p99)]);
    }
    t
}
