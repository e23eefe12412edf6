//! The report of a `loadlab compare`: a baseline against a variant, metric by metric.

use super::comparison::{comparison_table, comparison_verdicts};
use super::method::study_methods;
use super::metrics::metric_words;
use super::warning_verdicts;
use crate::chart::{Axis, Chart, Rule, Series, SeriesKind, Unit};
use crate::doc::{Block, DocKind, Level, ReportDoc, Section, Verdict};
use loadlab_analysis::compare::CompareResult;

/// Builds the report of a `loadlab compare`.
pub fn compare_report(c: &CompareResult) -> ReportDoc {
    let mut verdicts = Vec::new();
    if !c.regressions.is_empty() {
        verdicts.push(Verdict::new(
            Level::Fail,
            format!(
                "Regression: {} significantly worse{}.",
                c.regressions
                    .iter()
                    .map(|m| metric_words(m))
                    .collect::<Vec<_>>()
                    .join(", "),
                c.fail_on_regression
                    .map(|b| format!(" by more than {:.0}%", b * 100.0))
                    .unwrap_or_default()
            ),
        ));
    } else if c.fail_on_regression.is_some() {
        verdicts.push(Verdict::new(
            Level::Pass,
            "No regression beyond the allowed bound.",
        ));
    }
    verdicts.extend(comparison_verdicts(&c.comparisons, c.alpha));
    verdicts.extend(warning_verdicts(&c.warnings));
    let mut summary = Section::new("summary", "Summary");
    summary.push(Block::Text(format!(
        "**What was compared:** {} `{}` ({}, {} run{}) as the baseline against {} `{}` ({}, {} run{}).",
        c.baseline.kind, c.baseline.label, c.baseline.id, c.baseline.runs, if c.baseline.runs == 1 { "" } else { "s" },
        c.variant.kind, c.variant.label, c.variant.id, c.variant.runs, if c.variant.runs == 1 { "" } else { "s" },
    )));
    summary.push(Block::Table(comparison_table(&c.comparisons)));
    let mut method = Section::new("method", "Method");
    method.push(Block::List(
        study_methods(c.alpha, c.equivalence)[..3].to_vec(),
    ));
    let names = [c.baseline.label.clone(), c.variant.label.clone()];
    let mut chart = Chart::new("comparison-change", "Change of each metric, with its 95% CI", Axis::categories("metric", c.comparisons.iter().map(|x| metric_words(&x.metric)).collect()), Axis::linear("variant / baseline − 1", Unit::Fraction))
        .describe(format!("Estimated change of `{}` relative to `{}` per metric; an interval that crosses 0 is not a significant difference.", names[1], names[0]))
        .height(260);
    let (pts, ivs): (Vec<_>, Vec<_>) = c
        .comparisons
        .iter()
        .enumerate()
        .filter_map(|(i, x)| {
            x.change.map(|ch| {
                (
                    (i as f64, ch),
                    x.change_ci.map(|[a, b]| (a, b)).unwrap_or((ch, ch)),
                )
            })
        })
        .unzip();
    chart = chart
        .series(Series::new("change", SeriesKind::Points, 0, pts).with_intervals(ivs))
        .rule(Rule::y(0.0, "no change", Level::Info));
    summary.push(Block::Chart(chart));
    ReportDoc {
        kind: DocKind::Comparison,
        title: format!(
            "{} vs {}: comparison report",
            c.variant.label, c.baseline.label
        ),
        subtitle: format!(
            "comparison · {} → {} · loadlab {}",
            c.baseline.id, c.variant.id, c.tool_version
        ),
        verdicts,
        sections: vec![summary, method],
        tool_version: c.tool_version.clone(),
    }
}
