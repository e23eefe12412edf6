//! `loadlab gate NAME`: for CI. The newest run or study of a history against the last stable
//! segment before it (`loadlab_pipeline::history::stable_segment`), with compare's
//! statistics (Mann–Whitney or the one-run prediction test, Holm, the gate on the 95% CI,
//! the equivalence band); exit 1 only on a significant regression beyond the margin. Prints
//! the comparison and writes a Markdown summary for the CI's step summary.

use super::history::series;
use crate::cli::GateArgs;
use crate::exit::{CliError, Outcome};
use loadlab_analysis::compare::CompareOptions;
use loadlab_pipeline::compare::{compare_pairs, terminal_pairs};
use loadlab_pipeline::history::{chosen_metrics, gate_detector_params, gate_sides};
use loadlab_report::gate_summary::{gate_markdown, GateContext};
use loadlab_report::junit::{comparison_cases, junit_xml};
use loadlab_report::study_terminal::{print_pairs, print_verdict};
use std::io::Write;

pub fn execute(args: GateArgs) -> Result<Outcome, CliError> {
    let bound = args.fail_on_regression;
    let d = &args.detector;
    let params = gate_detector_params(d.p_value, d.window, d.min_magnitude, bound)?;
    let equivalence = args.equivalence.unwrap_or(0.0);
    let s = &args.series;
    let (store, loaded) = series(s)?;
    let metrics = chosen_metrics(&s.metrics, &loaded.points)?;
    let sides = gate_sides(
        store.as_ref(),
        &loaded,
        &metrics,
        &params,
        &s.name,
        equivalence,
        &mut super::output::warn,
    )?;
    let options = CompareOptions::with_equivalence(equivalence);
    let pairs = [(&sides.history, &sides.newest)];
    let result = compare_pairs(&pairs, &metrics, &options, Some(bound));
    let mut out = std::io::stdout().lock();
    let _ = writeln!(
        out,
        "gate {}: {} against {}",
        s.name, sides.newest_words, sides.baseline_words
    );
    print_pairs(&mut out, &terminal_pairs(&pairs), &result, &options);
    print_verdict(&mut out, &result);
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&result).expect("serializes") + "\n";
        loadlab_pipeline::reports::write_json_file(path, &text)?;
    }
    let context = GateContext {
        name: &s.name,
        newest: &sides.newest_words,
        baseline: &sides.baseline_words,
    };
    let summary = gate_markdown(&context, &result);
    loadlab_pipeline::reports::write_summary(args.summary.as_deref(), true, &summary)?;
    if let Some(path) = &args.junit {
        let cases = comparison_cases(&result);
        let suite = format!("gate {}", s.name);
        loadlab_pipeline::reports::write_junit(path, &junit_xml(&suite, "loadlab.gate", &cases))?;
    }
    Ok(if result.regressions.is_empty() {
        Outcome::Ok
    } else {
        Outcome::ThresholdsFailed
    })
}
