//! A steered run's stretches of constant load: one row each, with what was measured wholly
//! inside it (`stretch_values` words them for the terminal too).

use crate::doc::{Block, Cell, Section, Table};
use crate::stretch_values::{stretch_note, stretch_row, STRETCH_COLUMNS};
use loadlab_metrics::result::RunResult;

/// `None` for a run that followed its plan.
pub(super) fn stretches(r: &RunResult) -> Option<Section> {
    if r.stretches.is_empty() {
        return None;
    }
    let mut s = Section::new("stretches", "Load as steered");
    let columns: Vec<String> = STRETCH_COLUMNS
        .iter()
        .map(|(name, right)| format!("{}{name}", if *right { ">" } else { "" }))
        .collect();
    let columns: Vec<&str> = columns.iter().map(String::as_str).collect();
    let mut t = Table::new(&columns);
    for stretch in &r.stretches {
        t.row(
            stretch_row(r, stretch)
                .into_iter()
                .map(Cell::from)
                .collect(),
        );
    }
    s.push(Block::Table(t.with_note(stretch_note(r))));
    Some(s)
}
