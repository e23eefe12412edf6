//! The k6-like breakdown of a run in its report: where service time went (connect, TLS
//! handshake, waiting for the first byte, receiving), per run and per step, and the data
//! sent and received with their rates.

use crate::doc::{Block, Table};
use crate::format::{format_bytes, format_ms};
use crate::run_values::{byte_rates, phase_label};
use loadlab_metrics::result::{LatencySummary, RunResult};
use loadlab_metrics::{Phase, PhaseSummary};

const COLUMNS: [&str; 7] = ["", ">count", ">p50", ">p90", ">p95", ">p99", ">max"];

fn row(name: &str, l: &LatencySummary) -> Vec<crate::doc::Cell> {
    cells![
        name,
        l.count.to_string(),
        format_ms(l.p50),
        format_ms(l.p90),
        format_ms(l.p95),
        format_ms(l.p99),
        format_ms(l.max)
    ]
}

/// The run's phases table (none when nothing was measured), and a per-step one when the
/// run has several steps.
pub(super) fn phase_blocks(r: &RunResult) -> Vec<Block> {
    let Some(p) = &r.phases_ms else {
        return Vec::new();
    };
    let mut blocks = vec![Block::Heading("Where service time went".to_string())];
    let mut t = Table::new(&COLUMNS);
    t.row(row("service time", &r.service_time_ms));
    for phase in Phase::ALL {
        if let Some(l) = p.get(phase).filter(|l| l.count > 0) {
            t.row(row(phase_label(phase), l));
        }
    }
    blocks.push(Block::Table(t.with_note(
        "Like k6's `http_req_connecting`, `http_req_tls_handshaking`, `http_req_waiting` and `http_req_receiving`. Connect and TLS handshake count only the requests that opened a connection (their count is connections opened; with keep-alive most requests open none). Waiting is the time to first byte after the request was written (HTTP/2: until the response head); receiving runs from there to the complete response; waiting + receiving is at most the service time of each request.",
    )));
    let steps: Vec<(&str, &PhaseSummary)> = r
        .steps
        .iter()
        .filter_map(|s| Some((s.name.as_str(), s.phases_ms.as_ref()?)))
        .collect();
    if r.steps.len() > 1 && !steps.is_empty() {
        let mut t = Table::new(&[
            "step",
            ">connections opened",
            ">connect p95",
            ">TLS p95",
            ">waiting p50",
            ">waiting p95",
            ">receiving p95",
        ]);
        let p95 = |l: Option<&LatencySummary>| l.map(|l| format_ms(l.p95)).unwrap_or_default();
        for (name, p) in steps {
            t.row(cells![
                format!("`{name}`"),
                p.connect.map_or(0, |l| l.count).to_string(),
                p95(p.connect.as_ref()),
                p95(p.tls_handshake.as_ref()),
                p.waiting.map(|l| format_ms(l.p50)).unwrap_or_default(),
                p95(p.waiting.as_ref()),
                p95(p.receiving.as_ref())
            ]);
        }
        blocks.push(Block::Table(t));
    }
    blocks
}

/// Rows of the counts table: data sent and received, with their rates.
pub(super) fn data_rows(r: &RunResult, t: &mut Table) {
    if r.bytes.is_zero() {
        return;
    }
    let (sent, received) = byte_rates(r);
    t.row(cells![
        "data sent",
        format!(
            "{} ({}/s)",
            format_bytes(r.bytes.sent as f64),
            format_bytes(sent)
        )
    ]);
    t.row(cells![
        "data received",
        format!(
            "{} ({}/s)",
            format_bytes(r.bytes.received as f64),
            format_bytes(received)
        )
    ]);
}
