//! Terminal rendering of comparisons (`loadlab compare`, `run --baseline`, `gate`, and a
//! study's own): the pairs' table, the legend and the gate, in the words of the reports
//! (`verdict_words`); kept apart from the study's tables so each file has one purpose.

use crate::study_doc::{gate_verdicts, one_run_words};
use crate::verdict_words::{
    change_words, format_value, p_cell, regression_sentence, verdict_legend_clauses,
    verdict_sentence,
};
use loadlab_analysis::compare::{family_size, CompareOptions, CompareResult, Comparison};
use loadlab_analysis::study::VariantStats;
use loadlab_metrics::{MetricId, Verdict};
use std::io::{self, Write};

/// `612.00ms CV 8.1%` (median across runs and its spread), or the single value.
pub fn median_cv(v: Option<&VariantStats>, metric: &MetricId, fallback: f64) -> String {
    match v.and_then(|v| v.metrics.get(metric)) {
        Some(s) => match s.cv {
            Some(cv) => format!(
                "{} CV {:.1}%",
                format_value(metric.unit(), s.median),
                cv * 100.0
            ),
            None => format_value(metric.unit(), s.median),
        },
        None => format_value(metric.unit(), fallback),
    }
}

/// The comparison table, benchstat style, then one line for every metric that is not a
/// difference, saying why (`~` is never left unexplained):
///
/// ```text
///   metric        baseline            variant             change [95% CI]             p raw  p Holm  n      verdict
///   p95 latency   612.00ms CV 8.1%  → 655.00ms CV 6.0%    +7.0% [+3.1% … +11.8%]      0.002  0.004   10+10  slower
/// ```
pub fn print_comparisons(
    out: &mut dyn Write,
    comps: &[Comparison],
    a: Option<&VariantStats>,
    b: Option<&VariantStats>,
    equivalence: f64,
    min_runs: usize,
) -> io::Result<()> {
    let rows: Vec<[String; 8]> = comps
        .iter()
        .map(|c| {
            [
                c.metric.label().replace('`', ""),
                median_cv(a, &c.metric, c.baseline_median),
                median_cv(b, &c.metric, c.variant_median),
                if c.verdict == Verdict::Insufficient && c.change_ci.is_none() {
                    "n/a".into()
                } else {
                    change_words(c)
                },
                p_cell(c.p_value),
                p_cell(c.p_adjusted),
                format!("{}+{}", c.n[0], c.n[1]),
                c.verdict.to_string(),
            ]
        })
        .collect();
    let head = [
        "metric",
        "baseline",
        "variant",
        "change [95% CI]",
        "p raw",
        "p Holm",
        "n",
        "verdict",
    ];
    let mut w = head.map(|h| h.chars().count());
    for r in &rows {
        for (i, cell) in r.iter().enumerate() {
            w[i] = w[i].max(cell.chars().count());
        }
    }
    let line = |cells: [&str; 8], arrow: &str| {
        format!(
            "  {:<w0$}  {:>w1$} {arrow} {:<w2$}  {:<w3$}  {:>w4$}  {:>w5$}  {:>w6$}  {}",
            cells[0],
            cells[1],
            cells[2],
            cells[3],
            cells[4],
            cells[5],
            cells[6],
            cells[7],
            w0 = w[0],
            w1 = w[1],
            w2 = w[2],
            w3 = w[3],
            w4 = w[4],
            w5 = w[5],
            w6 = w[6],
        )
    };
    writeln!(out, "{}", line(head, " "))?;
    for r in &rows {
        let cells = [
            r[0].as_str(),
            &r[1],
            &r[2],
            &r[3],
            &r[4],
            &r[5],
            &r[6],
            &r[7],
        ];
        writeln!(out, "{}", line(cells, "→"))?;
    }
    for c in comps.iter().filter(|c| !c.verdict.is_difference()) {
        writeln!(
            out,
            "    {}",
            verdict_sentence(c, equivalence, min_runs).replace('`', "")
        )?;
    }
    Ok(())
}

/// The legend under comparison tables: how the family was built and what every verdict
/// word means (the same words and meanings as the reports').
pub fn print_legend(
    out: &mut dyn Write,
    comps: &[Comparison],
    alpha: f64,
    equivalence: f64,
    min_runs: usize,
) -> io::Result<()> {
    match family_size(comps) {
        0 => writeln!(
            out,
            "  p raw, p Holm: no test was made (every metric was insufficient or had the same value in every run)."
        )?,
        n => writeln!(
            out,
            "  p raw: two-sided test per metric; p Holm: Holm's correction over the {n} test{} of the family (metrics with the same value in every run spend no α).",
            if n == 1 { "" } else { "s" }
        )?,
    }
    let mut lead = "  verdicts:";
    for clause in verdict_legend_clauses(alpha, equivalence, min_runs) {
        writeln!(out, "{lead} {}", clause.replace('`', ""))?;
        lead = "           ";
    }
    Ok(())
}

/// The end of `loadlab compare` / `run --baseline`: the gate's verdict and how weak one run is.
pub fn print_gate(out: &mut dyn Write, result: &CompareResult) -> io::Result<()> {
    if let Some(w) = one_run_words(result) {
        writeln!(out, "note: {}", w.replace('`', ""))?;
    }
    if result.fail_on_regression.is_none() {
        return Ok(());
    }
    if result.regressions.is_empty() {
        for v in gate_verdicts(result) {
            writeln!(out, "{}", v.text.replace('`', ""))?;
        }
    } else {
        for r in &result.regressions {
            writeln!(
                out,
                "REGRESSION: {} ({} → {})",
                regression_sentence(r).replace('`', ""),
                r.baseline,
                r.variant
            )?;
        }
    }
    Ok(())
}

/// One side of a compared pair as the tables name it.
#[derive(Debug, Clone, Copy)]
pub struct PairSide<'a> {
    /// `run`, `study` or `history`.
    pub kind: &'a str,
    /// The run's or study's id (the file name as given for a result file).
    pub id: &'a str,
    /// The tool that measured a run side (`loadlab 0.1.0`, `vegeta 12.13.0 (imported)`).
    pub made_by: Option<&'a str>,
    /// Its per-run values; `stats.name` is the variant (or the run's label).
    pub stats: &'a VariantStats,
}

impl PairSide<'_> {
    /// `b (study s2026...)`, `this run (run)`.
    pub fn words(&self) -> String {
        let by = self
            .made_by
            .map(|m| format!(", by {m}"))
            .unwrap_or_default();
        if self.id == self.stats.name {
            format!("{} ({}{by})", self.stats.name, self.kind)
        } else {
            format!("{} ({} {}{by})", self.stats.name, self.kind, self.id)
        }
    }
}

/// Each pair's table (`a → b`) as the terminal shows it, then the legend.
pub fn print_pairs(
    out: &mut dyn Write,
    pairs: &[(PairSide<'_>, PairSide<'_>)],
    result: &CompareResult,
    options: &CompareOptions,
) {
    let comps = &result.comparisons;
    for (a, b) in pairs {
        let _ = writeln!(out, "{} → {}", a.words(), b.words());
        let these: Vec<_> = comps
            .iter()
            .filter(|c| c.baseline == a.stats.name && c.variant == b.stats.name)
            .cloned()
            .collect();
        let _ = print_comparisons(
            out,
            &these,
            Some(a.stats),
            Some(b.stats),
            options.equivalence,
            options.min_runs,
        );
    }
    let _ = print_legend(
        out,
        comps,
        options.alpha,
        options.equivalence,
        options.min_runs,
    );
}

/// The warnings and the gate's line.
pub fn print_verdict(out: &mut dyn Write, result: &CompareResult) {
    for w in &result.warnings {
        let _ = writeln!(out, "warning: {}", w.replace('`', ""));
    }
    let _ = print_gate(out, result);
}
