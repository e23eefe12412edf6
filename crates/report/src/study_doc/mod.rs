//! Studies, sweeps, capacity searches and comparisons → [`ReportDoc`](crate::ReportDoc).
//!
//! The statistics come from `study.json` / `capacity.json` / the comparison record
//! (crate `loadlab-analysis`); the runs (when their files are at hand) add the time series,
//! the merged latency distributions, errors and per-threshold counts. One file per report
//! kind (`study`, `capacity`, `compare`) and one per section of a study report; this file
//! holds what they share: the runs of a study and its warnings.

mod capacity;
mod charts;
mod compare;
mod comparison;
mod environment;
mod errors;
mod method;
pub(crate) mod metrics;
mod reruns;
mod resources;
mod results;
mod rounds;
mod segments;
mod streaming;
mod study;
mod summary;
mod sweep;
mod sweep_changes;
mod thresholds;
mod verdicts;

pub use capacity::capacity_report;
pub use compare::{compare_report, gate_verdicts, one_run_words};
pub use comparison::{comparison_note, comparison_table, comparison_verdicts, ComparisonSettings};
pub use environment::multi_environment;
pub use metrics::metric_words;
pub(crate) use metrics::{thin, THIN_NOTE};
pub(crate) use segments::level_words;
pub use study::study_report;
pub use sweep::{saturation_sentence, usl_skipped_words};

use crate::doc::{Level, Verdict};
use crate::words::capitalize;
use loadlab_analysis::study::{StudyResult, VariantStats};
use loadlab_metrics::RunResult;
use std::collections::BTreeMap;

/// Runs by store id (those whose files could be read).
pub type Runs = BTreeMap<String, RunResult>;

fn variant_runs<'a>(v: &VariantStats, runs: &'a Runs) -> Vec<&'a RunResult> {
    v.runs.iter().filter_map(|id| runs.get(id)).collect()
}

fn all_runs<'a>(s: &StudyResult, runs: &'a Runs) -> Vec<&'a RunResult> {
    s.variants
        .iter()
        .flat_map(|v| v.runs.iter().chain(&v.excluded_runs))
        .filter_map(|id| runs.get(id))
        .collect()
}

fn median(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    if v.is_empty() {
        return f64::NAN;
    }
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// The warnings of a record as `Warn` verdicts: capitalised, one full stop.
fn warning_verdicts(warnings: &[String]) -> impl Iterator<Item = Verdict> + '_ {
    warnings.iter().map(|w| {
        Verdict::new(
            Level::Warn,
            format!("{}.", capitalize(w.trim_end_matches('.'))),
        )
    })
}
