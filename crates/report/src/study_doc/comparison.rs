//! Comparisons of variants: change words, one verdict per pair, the benchstat-style table
//! and the comparison section of a study (with its degradation factors).

use super::metrics::{fmt, metric_unit, metric_words, p_words, pct};
use crate::doc::{Block, Cell, Level, Section, Table, Verdict};
use loadlab_analysis::compare::Comparison;
use loadlab_analysis::study::StudyResult;

/// `+299.0% [+258.0%, +358.0%]`.
pub fn change_words(c: &Comparison) -> String {
    match (c.change, c.change_ci) {
        (Some(ch), Some([lo, hi])) => format!("{} [{}, {}]", pct(ch), pct(lo), pct(hi)),
        (Some(ch), None) => format!("{} (no CI)", pct(ch)),
        _ => "n/a".to_string(),
    }
}

/// One sentence per compared pair: what is significantly different, with effect, CI and p.
pub fn comparison_verdicts(comparisons: &[Comparison], alpha: f64) -> Vec<Verdict> {
    let mut pairs: Vec<(&str, &str)> = Vec::new();
    for c in comparisons {
        if !pairs.contains(&(c.baseline.as_str(), c.variant.as_str())) {
            pairs.push((&c.baseline, &c.variant));
        }
    }
    let mut out = Vec::new();
    for (b, v) in pairs {
        let cs: Vec<&Comparison> = comparisons
            .iter()
            .filter(|c| c.baseline == b && c.variant == v)
            .collect();
        let sig: Vec<&&Comparison> = cs.iter().filter(|c| c.verdict != "~").collect();
        if sig.is_empty() {
            out.push(Verdict::new(
                Level::Info,
                format!(
                    "`{v}` and `{b}` show no significant difference on the {} metric{} compared (α = {alpha}, Holm-corrected).",
                    cs.len(),
                    if cs.len() == 1 { "" } else { "s" }
                ),
            ));
            continue;
        }
        let worse = sig
            .iter()
            .any(|c| loadlab_analysis::compare::is_regression(&c.verdict));
        let headline = sig
            .iter()
            .find(|c| c.metric == "latency_ms.p95")
            .or_else(|| sig.first())
            .expect("non-empty");
        let others: Vec<String> = sig
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
        let mut text = format!(
            "`{v}` is significantly {} than `{b}`: {} {}, {}",
            headline.verdict,
            metric_words(&headline.metric),
            change_words(headline),
            p_words(headline.p_adjusted)
        );
        if !others.is_empty() {
            text.push_str(&format!("; also {}", others.join(", ")));
        }
        text.push('.');
        out.push(Verdict::new(
            if worse { Level::Warn } else { Level::Pass },
            text,
        ));
    }
    out
}

/// The benchstat-style table.
pub fn comparison_table(comparisons: &[Comparison]) -> Table {
    let mut t = Table::new(&[
        "baseline → variant",
        "metric",
        ">baseline median",
        ">variant median",
        ">change [95% CI]",
        ">p (Holm)",
        ">n",
        "verdict",
    ]);
    for c in comparisons {
        let unit = metric_unit(&c.metric);
        let level = if c.verdict == "~" {
            None
        } else if loadlab_analysis::compare::is_regression(&c.verdict) {
            Some(Level::Fail)
        } else {
            Some(Level::Pass)
        };
        t.row(vec![
            format!("{} → {}", c.baseline, c.variant).into(),
            metric_words(&c.metric).into(),
            fmt(unit, c.baseline_median).into(),
            fmt(unit, c.variant_median).into(),
            change_words(c).into(),
            format!("{:.3}", c.p_adjusted).into(),
            format!("{}+{}", c.n[0], c.n[1]).into(),
            Cell {
                text: c.verdict.clone(),
                level,
            },
        ]);
    }
    t.with_note("Change = variant / baseline − 1 (Hodges–Lehmann estimate on log values, Moses 95% CI); p: two-sided Mann–Whitney U, Holm-corrected across the metrics of a pair; `~` = no significant difference (or one inside the equivalence band).")
}
/// The comparison section of a study: the table, then the degradation factors; `None`
/// without comparisons.
pub(super) fn comparison_section(s: &StudyResult) -> Option<Section> {
    if s.comparisons.is_empty() {
        return None;
    }
    let mut sec = Section::new("comparison", "Comparison");
    sec.push(Block::Table(comparison_table(&s.comparisons)));
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
            let f = |m: &str| {
                d.factors
                    .get(m)
                    .map(|x| format!("{x:.2}×"))
                    .unwrap_or_default()
            };
            t.row(cells![
                format!("{} → {}", d.baseline, d.variant),
                d.load_factor
                    .map(|x| format!("{x:.2}×"))
                    .unwrap_or_default(),
                f("requests.rate"),
                f("latency_ms.mean"),
                f("latency_ms.p50"),
                f("latency_ms.p95"),
                f("latency_ms.p99")
            ]);
        }
        sec.push(Block::Table(t));
    }
    Some(sec)
}
