//! Terminal rendering of studies (`loadlab study`; the comparison tables it shares with
//! `compare` and `run --baseline` are `compare_terminal`'s): the same words as the reports (`verdict_words`), in plain aligned text.
//! Spread is written `CV 4.1%` (never a bare `±`, which reads like a confidence margin);
//! p-values are labelled raw and Holm-adjusted. The pipeline hands over typed values (the
//! sides' names and per-run values, the comparison record); the words are made here.

use crate::format::format_ms;
use crate::study_doc::usl_skipped_words;
use crate::verdict_words::{drift_sentence, format_value, usl_issue_sentence};
use crate::words::capitalize;
use loadlab_analysis::compare::{pairs_of, Comparison};
use loadlab_analysis::stats::{OutlierKind, OutlierSide};
use loadlab_analysis::study::{
    default_compare_metrics, LoadKind, StudyResult, UslIssue, VariantStats,
};
use loadlab_metrics::{LatencyStat, MetricId, Quantity};
use std::io::{self, Write};

pub use crate::compare_terminal::{
    median_cv, print_comparisons, print_gate, print_legend, print_pairs, print_verdict, PairSide,
};

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
    if study.is_imported() {
        // Another tool ran these: loadlab planned no repetitions or order, and cannot tell
        // whether the tool's generator kept up.
        writeln!(
            out,
            "study {} — {} variant(s) of runs imported from {} result files (median and CV across runs)",
            study.name,
            study.variants.len(),
            study.imported_from.join(", ")
        )?;
        return writeln!(
            out,
            "  runs: {}; validity not judged (the files hold none of the generator's own timing)",
            study.runs_per_variant_words()
        );
    }
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
