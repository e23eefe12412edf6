//! Comparisons of variants: one verdict per pair, the benchstat-style table and the
//! comparison section of a study (with its degradation factors).

use super::metrics::{fmt, metric_words};
use crate::doc::{Block, Cell, Level, Section, Table, Verdict};
use crate::verdict_words::{change_words, p_cell, p_words, verdict_reason, verdict_sentence};
use loadlab_analysis::compare::{family_size, pairs_of, Comparison};
use loadlab_analysis::study::StudyResult;
use loadlab_metrics::{LatencyStat, MetricId, Quantity, Verdict as Word};

/// The settings a set of comparisons was made with.
#[derive(Debug, Clone, Copy)]
pub struct ComparisonSettings {
    pub alpha: f64,
    pub equivalence: f64,
    pub min_runs: usize,
}

/// One sentence per compared pair: what differs (with effect, CI and Holm p), what is
/// equivalent, what is inconclusive and how wide its CI is, what had too few runs.
pub fn comparison_verdicts(comparisons: &[Comparison], s: ComparisonSettings) -> Vec<Verdict> {
    pairs_of(comparisons)
        .into_iter()
        .map(|(b, v)| {
            let cs: Vec<&Comparison> = comparisons
                .iter()
                .filter(|c| c.baseline == b && c.variant == v)
                .collect();
            let differ: Vec<&Comparison> = cs
                .iter()
                .copied()
                .filter(|c| c.verdict.is_difference())
                .collect();
            if cs.iter().all(|c| c.verdict == Word::Insufficient) {
                Verdict::new(
                    Level::Warn,
                    format!(
                        "`{v}` vs `{b}`: insufficient — {}; no verdict is given.",
                        verdict_reason(cs[0], s.equivalence, s.min_runs)
                    ),
                )
            } else if differ.is_empty() {
                no_difference_verdict(b, v, &cs, s)
            } else {
                difference_verdict(b, v, &cs, &differ, s)
            }
        })
        .collect()
}

/// A pair with no significant difference: how many metrics, how many shown equivalent, and
/// why an inconclusive one (a latency first) is not "the same".
fn no_difference_verdict(b: &str, v: &str, cs: &[&Comparison], s: ComparisonSettings) -> Verdict {
    let equivalent = cs.iter().filter(|c| c.verdict == Word::Equivalent).count();
    let mut text = format!(
        "`{v}` vs `{b}`: no significant difference on the {} metric{} compared (α = {}, Holm-corrected)",
        cs.len(),
        if cs.len() == 1 { "" } else { "s" },
        s.alpha
    );
    if equivalent > 0 {
        text.push_str(&format!(
            "; {equivalent} shown equivalent within ±{}",
            crate::verdict_words::pct_plain(s.equivalence)
        ));
    }
    if let Some(c) = cs
        .iter()
        .find(|c| c.verdict == Word::Inconclusive && c.metric.is_latency())
        .or_else(|| cs.iter().find(|c| c.verdict == Word::Inconclusive))
    {
        text.push_str(&format!(
            ". `~` is not \"the same\": {}",
            verdict_sentence(c, s.equivalence, s.min_runs)
        ));
    }
    text.push('.');
    Verdict::new(Level::Info, text)
}

/// A pair that differs: the headline metric (p95 latency when it differs), the other
/// differences and the equivalent metrics; a warning when anything regressed.
fn difference_verdict(
    b: &str,
    v: &str,
    cs: &[&Comparison],
    differ: &[&Comparison],
    s: ComparisonSettings,
) -> Verdict {
    let worse = differ.iter().any(|c| c.verdict.is_regression());
    let headline = differ
        .iter()
        .find(|c| c.metric == MetricId::latency(LatencyStat::P95))
        .or_else(|| differ.first())
        .expect("non-empty");
    let others: Vec<String> = differ
        .iter()
        .filter(|c| c.metric != headline.metric)
        .map(|c| {
            format!(
                "{} {} ({})",
                metric_words(&c.metric),
                c.verdict,
                change_words(c)
            )
        })
        .collect();
    let mut text = if headline.verdict.is_neutral_difference() {
        format!(
            "`{v}` has significantly {} {} than `{b}` ({}, Holm {}), but the two were offered different loads: more throughput from more load is neither better nor worse",
            headline.verdict,
            metric_words(&headline.metric),
            change_words(headline),
            p_words(headline.p_adjusted.unwrap_or(1.0))
        )
    } else {
        format!(
            "`{v}` is significantly {} than `{b}`: {} {}, Holm {}",
            headline.verdict,
            metric_words(&headline.metric),
            change_words(headline),
            p_words(headline.p_adjusted.unwrap_or(1.0))
        )
    };
    if !others.is_empty() {
        text.push_str(&format!("; also {}", others.join(", ")));
    }
    let equivalent: Vec<String> = cs
        .iter()
        .filter(|c| c.verdict == Word::Equivalent)
        .map(|c| metric_words(&c.metric))
        .collect();
    if !equivalent.is_empty() {
        text.push_str(&format!(
            "; equivalent within ±{}: {}",
            crate::verdict_words::pct_plain(s.equivalence),
            equivalent.join(", ")
        ));
    }
    text.push('.');
    let better = differ.iter().any(|c| c.verdict.is_improvement());
    Verdict::new(
        if worse {
            Level::Warn
        } else if better {
            Level::Pass
        } else {
            Level::Info
        },
        text,
    )
}

/// The benchstat-style table.
pub fn comparison_table(comparisons: &[Comparison], s: ComparisonSettings) -> Table {
    let mut t = Table::new(&[
        "baseline → variant",
        "metric",
        ">baseline median",
        ">variant median",
        ">change [95% CI]",
        ">p raw",
        ">p Holm",
        ">n",
        "verdict",
    ]);
    for c in comparisons {
        let level = if c.verdict.is_regression() {
            Some(Level::Fail)
        } else if c.verdict.is_improvement() || c.verdict == Word::Equivalent {
            Some(Level::Pass)
        } else {
            None
        };
        t.row(vec![
            format!("{} → {}", c.baseline, c.variant).into(),
            metric_words(&c.metric).into(),
            fmt(&c.metric, c.baseline_median).into(),
            fmt(&c.metric, c.variant_median).into(),
            change_words(c).into(),
            p_cell(c.p_value).into(),
            p_cell(c.p_adjusted).into(),
            format!("{}+{}", c.n[0], c.n[1]).into(),
            Cell {
                text: c.verdict.to_string(),
                level,
            },
        ]);
    }
    t.with_note(comparison_note(comparisons, s))
}

/// What the table's columns and words mean, with the size of Holm's family.
pub fn comparison_note(comparisons: &[Comparison], s: ComparisonSettings) -> String {
    let one_run = comparisons.iter().any(|c| {
        matches!(
            c.test,
            loadlab_analysis::compare::TestKind::PredictionLogT
                | loadlab_analysis::compare::TestKind::PredictionRank
        )
    });
    let test = if one_run {
        "p: one run against the study's runs, Student-t prediction test on log values (its rank among them when a value is 0)"
    } else {
        "p: two-sided Mann–Whitney U, exact given the ties up to 25 runs per side"
    };
    format!(
        "Change = variant / baseline − 1 (Hodges–Lehmann on log values with Moses' 95% CI; the shift in the metric's unit when a value is 0). {test}; p Holm: Holm's correction over the {} tests of this family (every non-degenerate metric with enough runs, across all pairs; a metric with the same value in every run spends no α). Verdicts — {}.",
        family_size(comparisons),
        crate::verdict_words::verdict_legend(s.alpha, s.equivalence, s.min_runs)
    )
}

/// The comparison section of a study: the table, the reasons of each `~`, then the
/// degradation factors; `None` without comparisons.
pub(super) fn comparison_section(s: &StudyResult) -> Option<Section> {
    if s.comparisons.is_empty() {
        return None;
    }
    let settings = ComparisonSettings {
        alpha: s.alpha,
        equivalence: s.equivalence,
        min_runs: s.min_runs,
    };
    let mut sec = Section::new("comparison", "Comparison");
    sec.push(Block::Table(comparison_table(&s.comparisons, settings)));
    let reasons: Vec<String> = s
        .comparisons
        .iter()
        .filter(|c| !c.verdict.is_difference())
        .map(|c| {
            format!(
                "{} → {}: {}",
                c.baseline,
                c.variant,
                verdict_sentence(c, s.equivalence, s.min_runs)
            )
        })
        .collect();
    if !reasons.is_empty() {
        sec.push(Block::List(reasons));
    }
    if !s.degradation.is_empty() {
        sec.push(Block::Heading(
            "Degradation factors (ratio of medians)".into(),
        ));
        let mut t = Table::new(&[
            "baseline → variant",
            ">load",
            ">throughput",
            ">mean",
            ">p50",
            ">p95",
            ">p99",
        ]);
        for d in &s.degradation {
            let f = |m: MetricId| {
                d.factors
                    .get(&m)
                    .map(|x| format!("{x:.2}×"))
                    .unwrap_or_default()
            };
            let lat = MetricId::latency;
            t.row(cells![
                format!("{} → {}", d.baseline, d.variant),
                d.load_factor
                    .map(|x| format!("{x:.2}×"))
                    .unwrap_or_default(),
                f(MetricId::run(Quantity::Throughput)),
                f(lat(LatencyStat::Mean)),
                f(lat(LatencyStat::P50)),
                f(lat(LatencyStat::P95)),
                f(lat(LatencyStat::P99))
            ]);
        }
        sec.push(Block::Table(t));
    }
    Some(sec)
}
