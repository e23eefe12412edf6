//! The segments of a merged run (a plan split over processes or machines): one row each, so a
//! missing, invalid or lagging segment is seen at once, and how far apart their clocks were.

use crate::doc::{Block, Cell, Level, Section, Table, Verdict};
use crate::run_values::segment_row;
use crate::words::capitalize;
use loadlab_metrics::result::RunResult;

/// `None` for a run that was not merged from segments.
pub(super) fn segments(r: &RunResult) -> Option<Section> {
    if r.segments.is_empty() {
        return None;
    }
    let mut s = Section::new("segments", "Segments");
    let mut t = Table::new(&[
        ">segment",
        "pod @ node (or host)",
        ">requests",
        ">failed",
        ">generator CPU",
        ">start",
        ">clock",
        "valid",
    ]);
    for seg in &r.segments {
        let mut row: Vec<Cell> = segment_row(seg).into_iter().map(Cell::from).collect();
        if let Some(last) = row.last_mut() {
            last.level = Some(if seg.valid { Level::Pass } else { Level::Fail });
        }
        t.row(row);
    }
    s.push(Block::Table(t.with_note(
        "start: the segment's plan start against the earliest one, by each segment's own clock; clock: its clock minus the start barrier's reference (the object store), ± what the probes cannot tell apart.",
    )));
    let mut notes = Vec::new();
    if let Some(skew) = &r.clock_skew {
        let level = if skew.spread_ms + skew.uncertainty_ms > 100.0 {
            Level::Warn
        } else {
            Level::Info
        };
        notes.push(Verdict::new(
            level,
            format!("{}.", capitalize(&skew.describe())),
        ));
    }
    if !notes.is_empty() {
        s.push(Block::Notes(notes));
    }
    Some(s)
}
