//! How much each level of a sweep changed from the one before: seed 002's "test 6 vs test 7"
//! table (total execution time, throughput, and per operation the mean, max and p95 latency,
//! each as a % change), for every adjacent pair of levels.

use super::metrics::pct;
use super::{median, variant_runs, Runs};
use crate::doc::{Cell, Table};
use loadlab_analysis::study::{StudyResult, VariantStats};
use loadlab_metrics::{LatencyStat, MetricId, Quantity, Scope};

/// The per-step latency statistics compared, in column order.
const STEP_STATS: [LatencyStat; 3] = [LatencyStat::Mean, LatencyStat::Max, LatencyStat::P95];

fn steps(v: &VariantStats) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for m in v.metrics.keys() {
        if let Scope::Step(name) = &m.scope {
            if !out.contains(name) {
                out.push(name.clone());
            }
        }
    }
    out
}

fn median_of(v: &VariantStats, id: &MetricId) -> Option<f64> {
    v.metrics.get(id).map(|m| m.median)
}

fn change(before: Option<f64>, after: Option<f64>) -> Cell {
    match (before, after) {
        (Some(b), Some(a)) if b > 0.0 => pct(a / b - 1.0).into(),
        _ => "".into(),
    }
}

/// `None` for a study without a sweep, or a sweep of one level.
pub(super) fn sweep_changes(s: &StudyResult, runs: &Runs) -> Option<Table> {
    let sw = s.sweep.as_ref()?;
    let levels: Vec<&VariantStats> = sw
        .points
        .iter()
        .filter_map(|p| s.variants.iter().find(|v| v.name == p.variant))
        .collect();
    if levels.len() < 2 {
        return None;
    }
    let step_names = steps(levels[0]);
    let mut cols = vec![
        "levels".to_string(),
        ">run duration".to_string(),
        ">throughput".to_string(),
    ];
    for step in &step_names {
        for stat in STEP_STATS {
            cols.push(format!(">`{step}` {}", stat.label()));
        }
    }
    let col_refs: Vec<&str> = cols.iter().map(String::as_str).collect();
    let mut t = Table::new(&col_refs);
    let duration = |v: &VariantStats| {
        let d: Vec<f64> = variant_runs(v, runs).iter().map(|r| r.duration_s).collect();
        (!d.is_empty()).then(|| median(&d))
    };
    let throughput = MetricId::run(Quantity::Throughput);
    for pair in levels.windows(2) {
        let (a, b) = (pair[0], pair[1]);
        let mut row: Vec<Cell> = vec![
            format!("`{}` → `{}`", a.name, b.name).into(),
            change(duration(a), duration(b)),
            change(median_of(a, &throughput), median_of(b, &throughput)),
        ];
        for step in &step_names {
            for stat in STEP_STATS {
                let id = MetricId {
                    scope: Scope::Step(step.clone()),
                    quantity: Quantity::Latency(stat),
                };
                row.push(change(median_of(a, &id), median_of(b, &id)));
            }
        }
        t.row(row);
    }
    Some(t.with_note("Change of the median across runs from one level to the next. For a significance test and a CI of one pair: `loadlab compare STUDY:vus=50 STUDY:vus=75`."))
}
