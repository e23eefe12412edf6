//! The flat rows the `json` and `csv` outputs write: one per interval and step, plus one with
//! `step: "*"` for every step together (what spreadsheets and `jq` read most easily).

use super::snapshot::Snapshot;
use crate::frame::Quantiles;
use serde::Serialize;
use std::collections::BTreeMap;

/// The `step` of the row that holds every step together.
pub const ALL_STEPS: &str = "*";

/// One interval of one step (or of all, `step: "*"`).
#[derive(Debug, Clone, Serialize)]
pub struct Row<'a> {
    pub testid: &'a str,
    pub run: &'a str,
    pub index: u32,
    pub t_s: f64,
    pub length_s: f64,
    pub unix_ms: u64,
    pub warmup: bool,
    pub step: &'a str,
    pub requests: u64,
    pub failed: u64,
    pub rate: f64,
    pub statuses: &'a BTreeMap<String, u64>,
    pub errors: &'a BTreeMap<String, u64>,
    pub latency_ms: &'a Quantiles,
    pub service_time_ms: &'a Quantiles,
    pub lag_ms: &'a Quantiles,
    /// Run-wide gauges, repeated on each row of the interval.
    pub active: u64,
    pub in_flight: u64,
    pub planned: Option<f64>,
}

/// The rows of one interval: `*` first, then each step in the scenario's order.
pub fn rows(s: &Snapshot) -> Vec<Row<'_>> {
    let f = &s.frame;
    let base = Row {
        testid: &s.testid,
        run: &f.run,
        index: f.index,
        t_s: f.t_s,
        length_s: f.length_s,
        unix_ms: f.unix_ms,
        warmup: f.warmup,
        step: ALL_STEPS,
        requests: f.requests,
        failed: f.failed,
        rate: f.rate,
        statuses: &f.statuses,
        errors: &f.errors,
        latency_ms: &f.latency_ms,
        service_time_ms: &f.service_time_ms,
        lag_ms: &f.lag_ms,
        active: f.active,
        in_flight: f.in_flight,
        planned: f.planned,
    };
    let mut out = vec![base.clone()];
    for step in &f.steps {
        out.push(Row {
            step: &step.name,
            requests: step.requests,
            failed: step.failed,
            rate: step.rate,
            statuses: &step.statuses,
            errors: &step.errors,
            latency_ms: &step.latency_ms,
            service_time_ms: &step.service_time_ms,
            lag_ms: &step.lag_ms,
            ..base.clone()
        });
    }
    out
}
