//! Thresholds across the runs of a study: how often each was met, and the section that shows it.

use super::{median, variant_runs, Runs};
use crate::doc::{Block, Cell, Level, Section, Table};
use loadlab_analysis::study::{StudyResult, VariantStats};

/// Threshold expression → per variant (met, of runs, actual values).
pub(super) fn threshold_counts(
    v: &VariantStats,
    runs: &Runs,
) -> Vec<(String, usize, usize, Vec<f64>)> {
    let mut out: Vec<(String, usize, usize, Vec<f64>)> = Vec::new();
    for r in variant_runs(v, runs) {
        for t in &r.thresholds {
            let i = match out.iter().position(|e| e.0 == t.expr) {
                Some(i) => i,
                None => {
                    out.push((t.expr.clone(), 0, 0, Vec::new()));
                    out.len() - 1
                }
            };
            out[i].2 += 1;
            if t.ok {
                out[i].1 += 1;
            }
            if let Some(a) = t.actual {
                out[i].3.push(a);
            }
        }
    }
    out
}

pub(super) fn study_thresholds(s: &StudyResult, runs: &Runs) -> Option<Section> {
    let mut t = Table::new(&[
        "variant",
        "threshold",
        ">met in",
        ">actual (median)",
        ">actual (min – max)",
    ]);
    for v in &s.variants {
        for (expr, met, of, actual) in threshold_counts(v, runs) {
            let unit = crate::format::Unit::of_threshold(&expr);
            let (mn, mx) = actual
                .iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
                    (a.min(*x), b.max(*x))
                });
            t.row(vec![
                format!("`{}`", v.name).into(),
                format!("`{expr}`").into(),
                Cell::level(
                    format!("{met}/{of} runs"),
                    if met == of { Level::Pass } else { Level::Fail },
                ),
                if actual.is_empty() {
                    "no data".to_string()
                } else {
                    unit.format(median(&actual))
                }
                .into(),
                if actual.is_empty() {
                    String::new()
                } else {
                    format!("{} – {}", unit.format(mn), unit.format(mx))
                }
                .into(),
            ]);
        }
    }
    if t.rows.is_empty() {
        return None;
    }
    let mut sec = Section::new("thresholds", "Thresholds");
    sec.push(Block::Table(t));
    Some(sec)
}
