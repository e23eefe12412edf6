//! The runs a study did not use: each invalid or interrupted run, which repetition it was,
//! why it was left out, and whether it was made again.

use crate::doc::{Block, Cell, Level, Section, Table};
use loadlab_analysis::study::StudyResult;

pub(super) fn reruns_section(s: &StudyResult) -> Option<Section> {
    let unused: Vec<_> = s.run_log.iter().filter(|e| !e.used).collect();
    if unused.is_empty() {
        return None;
    }
    let mut sec = Section::new("reruns", "Runs left out and re-runs");
    sec.push(Block::Text(format!(
        "An invalid run is not an observation: it is left out of every statistic and made again, up to {} time{} per repetition (`study.retry_invalid`), so each variant keeps its planned number of valid runs — unless a re-run would end the same way (the warm-up took every request: nothing was measured).",
        s.retry_invalid,
        if s.retry_invalid == 1 { "" } else { "s" }
    )));
    let mut t = Table::new(&[
        "variant",
        ">repetition",
        ">attempt",
        "run",
        "why it was left out",
        "made again",
    ]);
    for e in unused {
        let again = s.run_log.iter().any(|later| {
            later.variant == e.variant && later.rep == e.rep && later.attempt > e.attempt
        }) || (e
            .invalid
            .contains(&loadlab_metrics::InvalidKind::Interrupted)
            && s.run_log
                .iter()
                .any(|l| l.variant == e.variant && l.rep == e.rep && l.used));
        let why = if e.reasons.is_empty() {
            e.invalid
                .iter()
                .map(|k| k.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        } else {
            e.reasons.join("; ")
        };
        t.row(vec![
            Cell::from(format!("`{}`", e.variant)),
            Cell::from((e.rep + 1).to_string()),
            Cell::from((e.attempt + 1).to_string()),
            Cell::from(format!("`{}`", e.run)),
            Cell::level(why, Level::Fail),
            Cell::from(if again { "yes" } else { "no: re-runs used up" }.to_string()),
        ]);
    }
    sec.push(Block::Table(t));
    Some(sec)
}
