//! Terminal rendering of studies and comparisons (`loadlab study`, `compare`, `run
//! --baseline`): the same words as the reports (`verdict_words`), in plain aligned text.
//! Spread is written `CV 4.1%` (never a bare `±`, which reads like a confidence margin);
//! p-values are labelled raw and Holm-adjusted. The pipeline hands over typed values (the
//! sides' names and per-run values, the comparison record); the words are made here.

use crate::format::format_ms;
use crate::study_doc::{gate_verdicts, one_run_words, usl_skipped_words};
use crate::verdict_words::{
    change_words, drift_sentence, format_value, p_cell, regression_sentence, usl_issue_sentence,
    verdict_legend_clauses, verdict_sentence,
};
use crate::words::capitalize;
use loadlab_analysis::compare::{family_size, pairs_of, CompareOptions, CompareResult, Comparison};
use loadlab_analysis::stats::{OutlierKind, OutlierSide};
use loadlab_analysis::study::{
    default_compare_metrics, LoadKind, StudyResult, UslIssue, VariantStats,
};
use loadlab_metrics::{LatencyStat, MetricId, Quantity, Verdict};
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
    writeln!(
        out,
        "  p raw: two-sided test per metric; p Holm: Holm's correction over the {} tests of the family (metrics with the same value in every run spend no α).",
        family_size(comps)
    )?;
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

fn table_metrics() -> [(MetricId, &'static str); 5] {
    [
        (MetricId::run(Quantity::Throughput), "req/s"),
        (MetricId::latency(LatencyStat::P50), "p50"),
        (MetricId::latency(LatencyStat::P95), "p95"),
        (MetricId::latency(LatencyStat::P99), "p99"),
        (MetricId::run(Quantity::ErrorRate), "errors"),
    ]
}

/// `median CV x%` of a metric, `-` when the variant lacks it.
fn cell(v: &VariantStats, metric: &MetricId) -> String {
    if v.metrics.contains_key(metric) {
        let text = median_cv(Some(v), metric, f64::NAN);
        if crate::study_doc::thin(v, metric) {
            // `219.90ms† CV 21.0%`: the mark belongs to the figure, not to its spread.
            match text.split_once(" CV ") {
                Some((value, cv)) => format!("{value}† CV {cv}"),
                None => format!("{text}†"),
            }
        } else {
            text
        }
    } else {
        "-".into()
    }
}

/// The study summary: per variant the median and CV of the main metrics, then the
/// comparisons, drift and outlier runs, degradation factors and sweep findings.
pub fn print_study(out: &mut dyn Write, study: &StudyResult) -> io::Result<()> {
    print_study_header(out, study)?;
    print_variant_table(out, study)?;
    if study.variants.len() == 1 {
        print_intervals(out, &study.variants[0])?;
    }
    print_variant_findings(out, study)?;
    print_study_comparisons(out, study)?;
    print_rounds(out, study)?;
    print_degradation(out, study)?;
    print_sweep(out, study)?;
    if !study.warnings.is_empty() {
        writeln!(out)?;
        for w in &study.warnings {
            writeln!(out, "warning: {w}")?;
        }
    }
    Ok(())
}

/// A study of rounds of segments: the two-level bootstrap CIs and where the variance is.
fn print_rounds(out: &mut dyn Write, study: &StudyResult) -> io::Result<()> {
    let Some(rounds) = &study.rounds else {
        return Ok(());
    };
    writeln!(out)?;
    writeln!(
        out,
        "rounds of {} segments (each round merged exactly; CIs from a two-level bootstrap of rounds and their segments, {} resamples):",
        rounds.segments, rounds.resamples
    )?;
    for v in &rounds.variants {
        let figures: Vec<String> = v
            .percentiles
            .iter()
            .map(|p| {
                let name = p.metric.to_string();
                format!(
                    "{} {} [{}–{}]{}",
                    name.rsplit('.').next().unwrap_or(&name),
                    format_ms(p.median_ms),
                    format_ms(p.ci_ms[0]),
                    format_ms(p.ci_ms[1]),
                    if p.thin { "†" } else { "" }
                )
            })
            .collect();
        writeln!(out, "  {}: {}", v.name, figures.join(" · "))?;
    }
    for c in &rounds.comparisons {
        writeln!(
            out,
            "  {} vs {}  {}  {:.3}× [{:.3}–{:.3}]",
            c.variant, c.baseline, c.metric, c.ratio, c.ci[0], c.ci[1]
        )?;
    }
    for v in &rounds.variants {
        if let Some(words) = crate::study_doc::level_words(v) {
            writeln!(out, "  {}", words.replace('`', ""))?;
        }
    }
    Ok(())
}

/// What the study is, and how many valid runs each variant has.
fn print_study_header(out: &mut dyn Write, study: &StudyResult) -> io::Result<()> {
    writeln!(out)?;
    writeln!(
        out,
        "study {} — {} variant(s), {} run(s) each, {} (median and CV across runs)",
        study.name,
        study.variants.len(),
        study.repeat,
        study.order
    )?;
    let valid = study.valid_runs();
    if valid.iter().all(|v| !v.is_short()) {
        writeln!(
            out,
            "  valid runs: {} of {} planned in every variant",
            study.repeat, study.repeat
        )?;
    } else {
        for v in &valid {
            writeln!(out, "  valid runs: {}", v.sentence())?;
        }
    }
    Ok(())
}

/// One row per variant: its runs and the median and CV of each main metric, with marks for
/// unstable and drifting variants.
fn print_variant_table(out: &mut dyn Write, study: &StudyResult) -> io::Result<()> {
    let metrics = table_metrics();
    let name_w = study
        .variants
        .iter()
        .map(|v| v.name.chars().count())
        .max()
        .unwrap_or(7)
        .max(7);
    let cells: Vec<Vec<String>> = study
        .variants
        .iter()
        .map(|v| metrics.iter().map(|(m, _)| cell(v, m)).collect())
        .collect();
    let col_w: Vec<usize> = (0..metrics.len())
        .map(|i| {
            cells
                .iter()
                .map(|r| r[i].chars().count())
                .chain([metrics[i].1.len()])
                .max()
                .unwrap_or(8)
        })
        .collect();
    write!(out, "  {:<name_w$}  {:>4}", "variant", "runs")?;
    for ((_, h), w) in metrics.iter().zip(&col_w) {
        write!(out, "  {h:>w$}")?;
    }
    writeln!(out)?;
    for (v, row) in study.variants.iter().zip(&cells) {
        write!(out, "  {:<name_w$}  {:>4}", v.name, v.runs.len())?;
        for (c, w) in row.iter().zip(&col_w) {
            write!(out, "  {c:>w$}")?;
        }
        if v.unstable {
            write!(out, "  unstable")?;
        }
        if !v.drift.is_empty() {
            write!(out, "  drift")?;
        }
        writeln!(out)?;
    }
    if study
        .variants
        .iter()
        .any(|v| metrics.iter().any(|(m, _)| crate::study_doc::thin(v, m)))
    {
        writeln!(out, "  {}", crate::study_doc::THIN_NOTE)?;
    }
    Ok(())
}

/// How many times larger each variant's figures are than its baseline's.
fn print_degradation(out: &mut dyn Write, study: &StudyResult) -> io::Result<()> {
    for d in &study.degradation {
        let mut parts = Vec::new();
        if let Some(l) = d.load_factor {
            parts.push(format!("{l:.2}× load"));
        }
        let arrow = if parts.is_empty() { "" } else { " → " };
        let figures: Vec<String> = d
            .factors
            .iter()
            .filter(|(m, _)| m.quantity != Quantity::Latency(LatencyStat::Mean))
            .map(|(m, f)| format!("{f:.2}× {}", m.label()))
            .collect();
        writeln!(
            out,
            "\ndegradation {} vs {}: {}{arrow}{}",
            d.variant,
            d.baseline,
            parts.join(""),
            figures.join(", ")
        )?;
    }
    Ok(())
}

/// Mean with its CI and median with its CI for a single variant (repetitions of one run).
fn print_intervals(out: &mut dyn Write, v: &VariantStats) -> io::Result<()> {
    let rows: Vec<[String; 5]> = table_metrics()
        .iter()
        .filter_map(|(m, _)| {
            let s = v.metrics.get(m)?;
            let f = |x: f64| format_value(m.unit(), x);
            // Say "too few runs" only when that is why an interval is missing.
            let interval = |ci: Option<[f64; 2]>, needs: usize| match ci {
                Some([a, b]) => format!("[{}, {}]", f(a), f(b)),
                None if s.n < needs => format!("n/a (n<{needs})"),
                None => "n/a".to_string(),
            };
            Some([
                m.label(),
                f(s.mean),
                interval(s.mean_ci, 2),
                interval(s.median_ci, 6),
                s.cv.map(|cv| format!("{:.1}%", cv * 100.0))
                    .unwrap_or_else(|| "n/a".into()),
            ])
        })
        .collect();
    writeln!(
        out,
        "\n  {:<16} {:>12} {:>26} {:>26} {:>7}",
        "metric", "mean", "95% CI of mean", "95% CI of median", "CV"
    )?;
    for r in rows {
        writeln!(
            out,
            "  {:<16} {:>12} {:>26} {:>26} {:>7}",
            r[0], r[1], r[2], r[3], r[4]
        )?;
    }
    Ok(())
}

/// Unstable variants, drift and outlier runs, each in a sentence.
fn print_variant_findings(out: &mut dyn Write, study: &StudyResult) -> io::Result<()> {
    let key = default_compare_metrics();
    let mut lines = Vec::new();
    for v in &study.variants {
        if v.unstable {
            lines.push(format!(
                "variant `{}` is unstable (CV ≥ 10% on throughput or p50 across runs): trust ranges, not single numbers",
                v.name
            ));
        }
        for d in &v.drift {
            lines.push(format!("variant `{}`: {}", v.name, drift_sentence(d)));
        }
        // Outliers on the key metrics here, one entry per run; every metric's are in the
        // report's tables.
        let mut by_run: Vec<(usize, Vec<String>)> = Vec::new();
        for (m, s) in v.metrics.iter().filter(|(m, _)| key.contains(m)) {
            for o in &s.outliers {
                let what = format!(
                    "{} {}{}",
                    m.label(),
                    match o.side {
                        OutlierSide::High => "high",
                        OutlierSide::Low => "low",
                    },
                    match o.kind {
                        OutlierKind::Extreme => ", far",
                        OutlierKind::Mild => "",
                    }
                );
                match by_run.iter_mut().find(|(i, _)| *i == o.index) {
                    Some((_, list)) => list.push(what),
                    None => by_run.push((o.index, vec![what])),
                }
            }
        }
        by_run.sort_by_key(|(i, _)| *i);
        if !by_run.is_empty() {
            lines.push(format!(
                "variant `{}` has outlier runs (Tukey's fences; kept in the statistics): {}",
                v.name,
                by_run
                    .iter()
                    .map(|(i, what)| format!("run {} ({})", i + 1, what.join("; ")))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        if !v.excluded_runs.is_empty() {
            lines.push(format!(
                "variant `{}`: {} invalid run(s) excluded from the statistics ({})",
                v.name,
                v.excluded_runs.len(),
                v.excluded_runs.join(", ")
            ));
        }
    }
    if !lines.is_empty() {
        writeln!(out)?;
    }
    for l in lines {
        writeln!(out, "note: {}", l.replace('`', ""))?;
    }
    Ok(())
}

fn print_study_comparisons(out: &mut dyn Write, study: &StudyResult) -> io::Result<()> {
    if study.comparisons.is_empty() {
        return Ok(());
    }
    for (a, b) in pairs_of(&study.comparisons) {
        let va = study.variants.iter().find(|v| v.name == a);
        let vb = study.variants.iter().find(|v| v.name == b);
        let comps: Vec<Comparison> = study
            .comparisons
            .iter()
            .filter(|c| c.baseline == a && c.variant == b)
            .cloned()
            .collect();
        writeln!(out, "\n{a} → {b}")?;
        print_comparisons(out, &comps, va, vb, study.equivalence, study.min_runs)?;
    }
    print_legend(
        out,
        &study.comparisons,
        study.alpha,
        study.equivalence,
        study.min_runs,
    )
}

fn print_sweep(out: &mut dyn Write, study: &StudyResult) -> io::Result<()> {
    let Some(s) = &study.sweep else {
        return Ok(());
    };
    let p = s.parameter.as_str();
    writeln!(out, "\nsweep over {p}:")?;
    writeln!(
        out,
        "  {:>8}  {:>12}  {:>10}  {:>10}  {:>8}",
        p, "req/s", "p50", "p95", "errors"
    )?;
    let num = |x: f64| format_value(loadlab_metrics::MetricUnit::Count, x);
    for pt in &s.points {
        writeln!(
            out,
            "  {:>8}  {:>12}  {:>10}  {:>10}  {:>8}",
            num(pt.value),
            format_value(loadlab_metrics::MetricUnit::PerSecond, pt.throughput),
            format_value(loadlab_metrics::MetricUnit::Millis, pt.p50),
            format_value(loadlab_metrics::MetricUnit::Millis, pt.p95),
            format_value(loadlab_metrics::MetricUnit::Fraction, pt.error_rate)
        )?;
    }
    match s.knee {
        Some(k) => writeln!(out, "  throughput knee (Kneedle): {p} = {}", num(k))?,
        None => writeln!(
            out,
            "  throughput knee: none (the curve does not bend over this range)"
        )?,
    }
    if let Some(k) = s.latency_knee {
        writeln!(out, "  p95 latency elbow (Kneedle): {p} = {}", num(k))?;
    }
    if let Some(plateau) = &s.saturation {
        let unit = match s.parameter {
            LoadKind::Vus => "VUs",
            LoadKind::Rate => "req/s offered",
        };
        writeln!(
            out,
            "  {}",
            crate::study_doc::saturation_sentence(plateau, unit)
        )?;
    }
    if let Some(u) = &s.usl {
        write!(
            out,
            "  USL: σ = {:.4}, κ = {:.6}, λ = {:.2} req/s per VU, R² = {:.3}",
            u.sigma, u.kappa, u.lambda, u.r2
        )?;
        match (u.n_star, u.peak) {
            (Some(n), Some(pk)) => {
                write!(out, "; N* = {n:.0} VUs")?;
                if let Some(ci) = &u.n_star_ci {
                    match ci.high {
                        Some(h) => write!(out, " (95% CI {:.0}–{h:.0})", ci.low)?,
                        None => write!(out, " (95% CI from {:.0}, unbounded)", ci.low)?,
                    }
                }
                write!(out, ", predicted peak {pk:.1} req/s")?;
            }
            _ if u.issues.contains(&UslIssue::NotIdentifiable) => {
                write!(out, "; N* not identifiable from this sweep")?
            }
            _ => write!(out, "; no peak (κ = 0)")?,
        }
        writeln!(out, "{}", if u.reliable() { "" } else { " — unreliable" })?;
        for issue in &u.issues {
            writeln!(out, "    {}", capitalize(&usl_issue_sentence(issue)))?;
        }
    }
    if let Some(skip) = &s.usl_skipped {
        if s.parameter == LoadKind::Vus {
            writeln!(out, "  no USL fit: {}", usl_skipped_words(skip))?;
        }
    }
    Ok(())
}
