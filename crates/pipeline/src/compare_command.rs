//! `loadlab compare A B` between its flags and its printing: both sides resolved, their
//! variants paired, the metrics chosen, the comparison made with the baseline study's band,
//! its CI files written and the comparison (with its report) kept in the store.

use crate::compare::{
    chosen_metrics, compare_pairs, pair_sides, resolve, store_comparison, unpaired,
    write_comparison_outputs, Side,
};
use crate::reports::CiOutputs;
use crate::PipelineError;
use loadlab_analysis::compare::{CompareOptions, CompareResult};
use std::path::{Path, PathBuf};

/// What to compare and how, as `loadlab compare` is asked.
pub struct CompareRequest<'a> {
    /// The baseline and the candidate: run or study ids, `ID:variant`, or result files.
    pub baseline: &'a str,
    pub candidate: &'a str,
    /// `--metric` (none: the defaults for what the sides measured).
    pub metrics: &'a [String],
    /// `--equivalence` (none: the baseline study's band).
    pub equivalence: Option<f64>,
    /// `--fail-on-regression`.
    pub bound: Option<f64>,
    /// `--results`.
    pub results: Option<&'a Path>,
    pub outputs: CiOutputs<'a>,
}

/// A comparison made: its sides, the options it was read with, and where it was kept.
pub struct Compared {
    pub baseline: Vec<Side>,
    pub candidate: Vec<Side>,
    /// Both sides held several variants and only the first of each was taken.
    pub took_first: bool,
    pub options: CompareOptions,
    pub result: CompareResult,
    /// Its `compare.json` in the store (none, and said to `warn`, when it could not be kept).
    pub stored: Option<PathBuf>,
}

impl Compared {
    /// The variants compared, paired.
    pub fn pairs(&self) -> Vec<(&Side, &Side)> {
        pair_sides(&self.baseline, &self.candidate).0
    }
}

/// Makes the comparison `request` asks for; `warn` hears what was not as asked (a store that
/// could not be read or written).
pub fn compare(
    request: &CompareRequest<'_>,
    warn: &mut dyn FnMut(&str),
) -> Result<Compared, PipelineError> {
    let mut store = None;
    let baseline = resolve(request.baseline, &mut store, request.results, warn)?;
    let candidate = resolve(request.candidate, &mut store, request.results, warn)?;
    let (pairs, took_first) = pair_sides(&baseline, &candidate);
    if !took_first {
        // Variants paired by name: one without a namesake on the other side is not compared,
        // and the user is told so rather than left to notice a missing table.
        for (side, sides, other) in [
            (request.baseline, &baseline, request.candidate),
            (request.candidate, &candidate, request.baseline),
        ] {
            let alone = unpaired(sides, &pairs);
            if !alone.is_empty() {
                warn(&format!(
                    "variant(s) {} of {side} have no namesake in {other}: not compared (compare one with {side}:VARIANT {other}:VARIANT)",
                    alone.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ")
                ));
            }
        }
    }
    let metrics = chosen_metrics(request.metrics, &pairs)?;
    // Without --equivalence, the baseline study's band: the same runs get the same verdict
    // words here as in the study's own summary and report.
    let band = request.equivalence.unwrap_or(baseline[0].equivalence);
    let options = CompareOptions::with_equivalence(band);
    let result = compare_pairs(&pairs, &metrics, &options, request.bound);
    let names = (request.baseline, request.candidate);
    write_comparison_outputs(&result, names, &request.outputs)?;
    let stored = store_comparison(request.results, &result)
        .map_err(|e| warn(&e))
        .ok();
    Ok(Compared {
        baseline,
        candidate,
        took_first,
        options,
        result,
        stored,
    })
}
