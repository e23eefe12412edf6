//! `loadlab compare A B`: runs or studies against each other, benchstat style, and
//! `loadlab run --baseline` (one new run against a stored study). What is compared and how
//! is `loadlab_pipeline::compare`; this prints the tables and the gate.

use super::output::{print_report_paths, report_for, warn};
use crate::cli::CompareArgs;
use crate::exit::{CliError, Outcome};
use loadlab_analysis::compare::CompareOptions;
use loadlab_analysis::study::default_compare_metrics;
use loadlab_metrics::RunResult;
use loadlab_pipeline::compare::{baseline_for_run, compare_pairs, terminal_pairs};
use loadlab_pipeline::compare_command::{compare, CompareRequest};
use loadlab_pipeline::reports::CiOutputs;
use loadlab_report::study_terminal::{print_pairs, print_verdict};
use std::io::Write;
use std::path::Path;

pub fn execute(args: CompareArgs) -> Result<Outcome, CliError> {
    let request = CompareRequest {
        baseline: &args.baseline,
        candidate: &args.candidate,
        metrics: &args.metrics,
        equivalence: args.equivalence,
        bound: args.fail_on_regression,
        results: args.store.results.as_deref(),
        outputs: CiOutputs {
            json: args.json.as_deref(),
            junit: args.junit.as_deref(),
            summary: args.summary.as_deref(),
        },
    };
    let compared = compare(&request, &mut warn)?;
    if compared.took_first {
        eprintln!(
            "note: comparing variant `{}` with `{}`; choose others with ID:variant",
            compared.baseline[0].stats.name, compared.candidate[0].stats.name
        );
    }
    let result = &compared.result;
    if !args.quiet {
        let mut out = std::io::stdout().lock();
        let pairs = terminal_pairs(&compared.pairs());
        print_pairs(&mut out, &pairs, result, &compared.options);
        print_verdict(&mut out, result);
        if let Some(path) = &args.json {
            let _ = writeln!(out, "comparison written to {}", path.display());
        }
        if let Some(report) = compared.stored.as_deref().and_then(report_for) {
            print_report_paths(&mut out, &report);
        }
    }
    Ok(if result.regressions.is_empty() {
        Outcome::Ok
    } else {
        Outcome::ThresholdsFailed
    })
}

/// `loadlab run --baseline last|ID`: the new run against a stored study (the prediction test
/// of one run, Holm over the default metrics). Returns whether a metric failed the gate.
pub fn run_against_study(
    result: &RunResult,
    baseline: &str,
    results: Option<&Path>,
    bound: Option<f64>,
    quiet: bool,
) -> Result<bool, CliError> {
    let (base, run) = baseline_for_run(result, baseline, results, &mut warn)?;
    let options = CompareOptions::with_equivalence(base.equivalence);
    let pairs = [(&base, &run)];
    let compared = compare_pairs(&pairs, &default_compare_metrics(), &options, bound);
    if !quiet {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(
            out,
            "\nagainst study {} variant `{}` ({} runs):",
            base.id,
            base.stats.name,
            base.stats.runs.len()
        );
        print_pairs(&mut out, &terminal_pairs(&pairs), &compared, &options);
        print_verdict(&mut out, &compared);
    }
    Ok(!compared.regressions.is_empty())
}
