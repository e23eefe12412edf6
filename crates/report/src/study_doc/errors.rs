//! The errors section of a study: error kinds summed over the runs of each variant.

use super::{variant_runs, Runs};
use crate::doc::{Block, Section, Table};
use crate::words::error_share;
use loadlab_analysis::study::StudyResult;
use std::collections::BTreeMap;

pub(super) fn multi_errors(s: &StudyResult, runs: &Runs) -> Option<Section> {
    let mut rows: Vec<(String, String, u64, u64, String)> = Vec::new();
    for v in &s.variants {
        let rs = variant_runs(v, runs);
        let total: u64 = rs.iter().map(|r| r.requests.total).sum();
        let mut by_kind: BTreeMap<String, (u64, String)> = BTreeMap::new();
        for r in rs {
            for (k, n) in &r.errors {
                let e = by_kind.entry(k.clone()).or_default();
                e.0 += n;
                if e.1.is_empty() {
                    e.1 = r.error_hints.get(k).cloned().unwrap_or_default();
                }
            }
        }
        for (k, (n, hint)) in by_kind {
            rows.push((v.name.clone(), k, n, total, hint));
        }
    }
    if rows.is_empty() {
        return None;
    }
    let mut sec = Section::new("errors", "Errors");
    let mut t = Table::new(&[
        "variant",
        "kind",
        ">count",
        ">share of requests",
        "what it means",
    ]);
    for (v, k, n, total, hint) in rows {
        t.row(cells![
            format!("`{v}`"),
            format!("`{k}`"),
            n.to_string(),
            error_share(n, total),
            hint
        ]);
    }
    sec.push(Block::Table(
        t.with_note("Over all the runs of each variant."),
    ));
    Some(sec)
}
