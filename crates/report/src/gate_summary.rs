//! The Markdown summary of a gate (`loadlab gate`), short enough for a CI step summary
//! (`$GITHUB_STEP_SUMMARY`): what was compared with what, one table row per metric, and the
//! outcome in one line. Rendered from the comparison record alone, like every other output.

use crate::verdict_words::{change_words, format_value, regression_sentence};
use loadlab_analysis::compare::CompareResult;
use std::fmt::Write;

/// What the newest point was compared with, in words (`nightly ping: study s… (commit=abc)
/// against points #12–#28 of its history, 102 runs`).
pub struct GateContext<'a> {
    pub name: &'a str,
    pub newest: &'a str,
    pub baseline: &'a str,
}

/// The summary as Markdown.
pub fn gate_markdown(context: &GateContext<'_>, result: &CompareResult) -> String {
    let mut md = String::new();
    let _ = writeln!(md, "## loadlab gate: {}\n", context.name);
    let _ = writeln!(md, "{} against {}.\n", context.newest, context.baseline);
    let _ = writeln!(
        md,
        "| metric | history (median) | newest (median) | change (95% CI) | verdict |"
    );
    let _ = writeln!(md, "|---|---:|---:|---:|---|");
    for c in &result.comparisons {
        let change = change_words(c);
        let verdict = c.verdict.as_str();
        let _ = writeln!(
            md,
            "| {} | {} | {} | {change} | {verdict} |",
            c.metric.label(),
            format_value(c.metric.unit(), c.baseline_median),
            format_value(c.metric.unit(), c.variant_median),
        );
    }
    let bound = result.fail_on_regression.unwrap_or(0.0) * 100.0;
    if result.regressions.is_empty() {
        let _ = writeln!(
            md,
            "\n**Passed**: no significant regression beyond {bound:.0}%."
        );
    } else {
        let _ = writeln!(
            md,
            "\n**Failed**: a significant regression beyond {bound:.0}%:"
        );
        for r in &result.regressions {
            let _ = writeln!(md, "- {}", regression_sentence(r));
        }
    }
    for w in &result.warnings {
        let _ = writeln!(md, "\n> {w}");
    }
    md
}
