//! The report of a `loadlab compare`: a baseline against a variant, metric by metric.

use super::comparison::{comparison_table, comparison_verdicts, ComparisonSettings};
use super::method::study_methods;
use super::metrics::metric_words;
use super::warning_verdicts;
use crate::chart::{Axis, Chart, Rule, Series, SeriesKind, Unit};
use crate::doc::{Block, DocKind, Level, ReportDoc, Section, Verdict};
use crate::verdict_words::{pct_plain, regression_sentence, signed_pct, verdict_sentence};
use loadlab_analysis::compare::CompareResult;

/// The gate's verdicts: each regression beyond the bound, or that there is none.
pub fn gate_verdicts(c: &CompareResult) -> Vec<Verdict> {
    let Some(bound) = c.fail_on_regression else {
        return Vec::new();
    };
    if c.regressions.is_empty() {
        let near: Vec<String> = c
            .comparisons
            .iter()
            .filter(|x| x.verdict.is_regression())
            .map(|x| verdict_sentence(x, c.equivalence, c.min_runs))
            .collect();
        let mut text = format!(
            "No metric is shown to be worse by more than {} (the gate needs the whole 95% CI beyond the bound)",
            pct_plain(bound)
        );
        if !near.is_empty() {
            text.push_str(&format!(
                "; worse but within the bound: {}",
                near.join("; ")
            ));
        }
        text.push('.');
        return vec![Verdict::new(Level::Pass, text)];
    }
    c.regressions
        .iter()
        .map(|r| {
            Verdict::new(
                Level::Fail,
                format!(
                    "Regression: {} (`{}` → `{}`).",
                    regression_sentence(r),
                    r.baseline,
                    r.variant
                ),
            )
        })
        .collect()
}

/// How weak one run against a study is, in a sentence.
pub fn one_run_words(c: &CompareResult) -> Option<String> {
    let one = c.one_run.as_ref()?;
    let widest = one
        .detectable
        .iter()
        .map(|(m, [lo, hi])| format!("{} {} … {}", m.label(), signed_pct(*lo), signed_pct(*hi)))
        .collect::<Vec<_>>();
    Some(format!(
        "One run against {} is weak evidence: it is flagged only when it lies outside what the study's runs predict (Student-t prediction on log values, Holm over {} metric{}), so only large changes can show{}",
        one.baseline_runs,
        c.family_size,
        if c.family_size == 1 { "" } else { "s" },
        if widest.is_empty() {
            ".".to_string()
        } else {
            format!(": a run must lie outside {} to be flagged. Run a study of the candidate for a real comparison.", widest.join(", "))
        }
    ))
}

/// Builds the report of a `loadlab compare`.
pub fn compare_report(c: &CompareResult) -> ReportDoc {
    let settings = ComparisonSettings {
        alpha: c.alpha,
        equivalence: c.equivalence,
        min_runs: c.min_runs,
    };
    let mut verdicts = gate_verdicts(c);
    verdicts.extend(comparison_verdicts(&c.comparisons, settings));
    if let Some(w) = one_run_words(c) {
        verdicts.push(Verdict::new(Level::Warn, w));
    }
    verdicts.extend(warning_verdicts(&c.warnings));
    let mut summary = Section::new("summary", "Summary");
    summary.push(Block::Text(format!(
        "**What was compared:** {} `{}` ({}, {} run{}{}) as the baseline against {} `{}` ({}, {} run{}{}).",
        c.baseline.kind, c.baseline.label, c.baseline.id, c.baseline.runs, if c.baseline.runs == 1 { "" } else { "s" },
        made_by_words(&c.baseline),
        c.variant.kind, c.variant.label, c.variant.id, c.variant.runs, if c.variant.runs == 1 { "" } else { "s" },
        made_by_words(&c.variant),
    )));
    summary.push(Block::Table(comparison_table(&c.comparisons, settings)));
    let mut method = Section::new("method", "Method");
    method.push(Block::List(
        study_methods(c.alpha, c.equivalence, c.min_runs).for_comparison(),
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
    if let Some(b) = c.fail_on_regression {
        chart = chart
            .rule(Rule::y(b, format!("+{}", pct_plain(b)), Level::Fail))
            .rule(Rule::y(-b, format!("−{}", pct_plain(b)), Level::Fail));
    }
    summary.push(Block::chart(chart));
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

/// `, measured by vegeta 12.13.0 (imported)` for a run side that says which tool made it.
fn made_by_words(side: &loadlab_analysis::compare::CompareSide) -> String {
    side.made_by
        .as_deref()
        .map(|m| format!(", measured by {m}"))
        .unwrap_or_default()
}
