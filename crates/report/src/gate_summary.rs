//! The Markdown summaries for CI step summaries (`$GITHUB_STEP_SUMMARY`, `--summary PATH`):
//! a gate's or comparison's (what was compared with what, one table row per metric, the
//! outcome in one line) and a run's (its figures and one row per threshold). Short enough for
//! a CI page; rendered from the result records alone, like every other output.

use crate::verdict_words::{change_words, format_value, regression_sentence};
use loadlab_analysis::compare::{CompareResult, Comparison};
use loadlab_analysis::study::StudyResult;
use loadlab_metrics::{LatencyStat, MetricId, MetricUnit, Quantity, RunResult};
use std::fmt::Write;

/// What the newest point was compared with, in words (`nightly ping: study s… (commit=abc)
/// against points #12–#28 of its history, 102 runs`).
pub struct GateContext<'a> {
    pub name: &'a str,
    pub newest: &'a str,
    pub baseline: &'a str,
}

/// A gate's summary as Markdown.
pub fn gate_markdown(context: &GateContext<'_>, result: &CompareResult) -> String {
    comparison_markdown(
        &format!("loadlab gate: {}", context.name),
        &format!("{} against {}.", context.newest, context.baseline),
        result,
    )
}

/// A comparison's summary as Markdown: `title`, a sentence saying what was compared, the
/// table and the outcome.
pub fn comparison_markdown(title: &str, what: &str, result: &CompareResult) -> String {
    let mut md = String::new();
    let _ = writeln!(md, "## {title}\n");
    let _ = writeln!(md, "{what}\n");
    comparison_table(&mut md, &result.comparisons);
    match result.fail_on_regression {
        None => md.push_str("\nNo gate was set (--fail-on-regression).\n"),
        Some(bound) => outcome_lines(&mut md, result, bound * 100.0),
    }
    for w in &result.warnings {
        let _ = writeln!(md, "\n> {w}");
    }
    md
}

/// One row per comparison: the two sides, the metric, both medians, the change with its CI,
/// the verdict.
fn comparison_table(md: &mut String, comparisons: &[Comparison]) {
    let _ = writeln!(
        md,
        "| sides | metric | baseline (median) | candidate (median) | change (95% CI) | verdict |"
    );
    let _ = writeln!(md, "|---|---|---:|---:|---:|---|");
    for c in comparisons {
        let _ = writeln!(
            md,
            "| {} → {} | {} | {} | {} | {} | {} |",
            c.baseline,
            c.variant,
            c.metric.label(),
            format_value(c.metric.unit(), c.baseline_median),
            format_value(c.metric.unit(), c.variant_median),
            change_words(c),
            c.verdict.as_str()
        );
    }
}

/// A study's summary as Markdown: per variant its runs and medians, and its comparisons.
pub fn study_markdown(study: &StudyResult) -> String {
    let mut md = String::new();
    let _ = writeln!(md, "## loadlab study: {}\n", study.name);
    if study.interrupted {
        md.push_str("**Interrupted**: the study stopped before all its runs were made.\n\n");
    }
    let metrics = [
        MetricId::run(Quantity::Throughput),
        MetricId::latency(LatencyStat::P50),
        MetricId::latency(LatencyStat::P95),
    ];
    let _ = writeln!(
        md,
        "| variant | runs | throughput | p50 | p95 | runs failing a threshold |\n|---|---:|---:|---:|---:|---:|"
    );
    for v in &study.variants {
        let cells: Vec<String> = metrics
            .iter()
            .map(|m| {
                v.metrics
                    .get(m)
                    .map_or("–".to_string(), |s| format_value(m.unit(), s.median))
            })
            .collect();
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} |",
            v.name,
            v.runs.len(),
            cells.join(" | "),
            v.thresholds_failed
        );
    }
    if !study.comparisons.is_empty() {
        md.push('\n');
        comparison_table(&mut md, &study.comparisons);
    }
    for w in &study.warnings {
        let _ = writeln!(md, "\n> {w}");
    }
    md
}

fn outcome_lines(md: &mut String, result: &CompareResult, bound: f64) {
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
}

/// A run's summary as Markdown: validity, its main figures, one row per threshold.
pub fn run_markdown(result: &RunResult) -> String {
    let mut md = String::new();
    let _ = writeln!(md, "## loadlab run: {}\n", result.name);
    let r = &result.requests;
    let l = &result.latency_ms;
    let error_rate = if r.total > 0 {
        r.failed as f64 / r.total as f64
    } else {
        0.0
    };
    let _ = writeln!(
        md,
        "{}: {} requests, {}, errors {}, latency p50 {} · p95 {} · p99 {}.\n",
        if result.imported.is_some() {
            "Imported run (validity not judged)"
        } else if result.valid {
            "Valid run"
        } else {
            "**Invalid run**"
        },
        r.total,
        format_value(MetricUnit::PerSecond, r.rate),
        format_value(MetricUnit::Fraction, error_rate),
        format_value(MetricUnit::Millis, l.p50),
        format_value(MetricUnit::Millis, l.p95),
        format_value(MetricUnit::Millis, l.p99)
    );
    if let Some(b) = &result.aborted_by_threshold {
        let _ = writeln!(
            md,
            "**Aborted**: {}; the figures cover the run until then.\n",
            crate::words::aborted_words(result, b)
        );
    }
    if result.thresholds.is_empty() {
        md.push_str("No thresholds.\n");
        return md;
    }
    let _ = writeln!(md, "| threshold | actual | result |\n|---|---:|---|");
    for t in &result.thresholds {
        let actual = t.actual.map_or("no data".to_string(), |v| format!("{v}"));
        let _ = writeln!(
            md,
            "| `{}` | {actual} | {} |",
            t.expr,
            if t.ok { "passed" } else { "**failed**" }
        );
    }
    md
}
