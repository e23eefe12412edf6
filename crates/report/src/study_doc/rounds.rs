//! Client and server latency of every run, step by step: seed 003's per-round tables (client
//! p50/p95/p99 per round beside the server's sampled traces and error rate), which a table of
//! medians across runs cannot replace — a reader sees how the rounds differ.

use super::{variant_runs, Runs};
use crate::doc::Table;
use crate::format::format_ms;
use crate::words::error_share;
use loadlab_analysis::study::StudyResult;

/// One row per run and step that reported its own time (`Server-Timing`); `None` when no
/// step did.
pub(super) fn client_server_per_run(s: &StudyResult, runs: &Runs) -> Option<Table> {
    let mut t = Table::new(&[
        "variant",
        ">run",
        "step",
        ">requests",
        ">client p50",
        ">client p95",
        ">client p99",
        ">server timings",
        ">server p50",
        ">server p90",
        ">server p95",
        ">errors",
    ]);
    for v in &s.variants {
        for (i, r) in variant_runs(v, runs).iter().enumerate() {
            for step in &r.steps {
                let Some(server) = step.server_latency_ms.filter(|l| l.count > 0) else {
                    continue;
                };
                t.row(cells![
                    format!("`{}`", v.name),
                    (i + 1).to_string(),
                    format!("`{}`", step.name),
                    step.requests.to_string(),
                    format_ms(step.latency_ms.p50),
                    format_ms(step.latency_ms.p95),
                    format_ms(step.latency_ms.p99),
                    server.count.to_string(),
                    format_ms(server.p50),
                    format_ms(server.p90),
                    format_ms(server.p95),
                    error_share(step.failed, step.requests),
                ]);
            }
        }
    }
    (!t.rows.is_empty()).then(|| t.with_note("Each run (round) of each variant, step by step: what loadlab measured beside what the server reported for the same requests (server timings: responses that carried one). Each run's percentiles are its own; the tables above summarise them across runs without averaging percentiles."))
}
