//! The terminal summary of a study: median ± CV per variant, comparisons, degradation
//! factors and sweep findings.

use crate::commands::compare::{fmt_metric, print_comparisons};
use crate::commands::measure::fmt_num;
use loadlab_analysis::study::{StudyResult, VariantStats};
use std::io::Write;

const TABLE_METRICS: &[(&str, &str)] = &[
    ("requests.rate", "req/s"),
    ("latency_ms.p50", "p50"),
    ("latency_ms.p95", "p95"),
    ("latency_ms.p99", "p99"),
    ("errors.rate", "errors"),
];

/// `median ±cv%` of a metric.
pub fn cell(v: &VariantStats, metric: &str) -> String {
    match v.metrics.get(metric) {
        Some(s) if s.n > 1 => format!("{} ±{:.0}%", fmt_metric(metric, s.median), s.cv * 100.0),
        Some(s) => fmt_metric(metric, s.median),
        None => "-".into(),
    }
}

/// The study summary table: per variant, median ± CV of the main metrics, then the
/// comparisons, degradation factors and sweep findings.
pub fn print_study(out: &mut impl Write, study: &StudyResult) -> std::io::Result<()> {
    writeln!(out)?;
    writeln!(
        out,
        "study {} — {} variant(s), {} run(s) each, {} (median ±CV across runs)",
        study.name,
        study.variants.len(),
        study.repeat,
        study.order
    )?;
    let name_w = study
        .variants
        .iter()
        .map(|v| v.name.chars().count())
        .max()
        .unwrap_or(7)
        .max(7);
    write!(out, "  {:<name_w$}  {:>4}", "variant", "runs")?;
    for (_, h) in TABLE_METRICS {
        write!(out, "  {h:>16}")?;
    }
    writeln!(out)?;
    for v in &study.variants {
        write!(out, "  {:<name_w$}  {:>4}", v.name, v.runs.len())?;
        for (m, _) in TABLE_METRICS {
            write!(out, "  {:>16}", cell(v, m))?;
        }
        if v.unstable {
            write!(out, "  unstable")?;
        }
        writeln!(out)?;
    }
    // Mean ± t-CI for the first variant's key metrics when there is only one variant (rounds).
    if study.variants.len() == 1 {
        let v = &study.variants[0];
        writeln!(
            out,
            "\n  {:<16} {:>12} {:>26} {:>26} {:>7}",
            "metric", "mean", "95% CI of mean", "95% CI of median", "CV"
        )?;
        for (m, _) in TABLE_METRICS {
            if let Some(s) = v.metrics.get(*m) {
                let median_ci = s
                    .median_ci
                    .map(|[a, b]| format!("[{}, {}]", fmt_metric(m, a), fmt_metric(m, b)))
                    .unwrap_or_else(|| "n < 6".into());
                writeln!(
                    out,
                    "  {:<16} {:>12} {:>26} {:>26} {:>6.1}%",
                    m,
                    fmt_metric(m, s.mean),
                    format!(
                        "[{}, {}]",
                        fmt_metric(m, s.mean_ci[0]),
                        fmt_metric(m, s.mean_ci[1])
                    ),
                    median_ci,
                    s.cv * 100.0
                )?;
            }
        }
    }
    if !study.comparisons.is_empty() {
        let mut pairs: Vec<(&str, &str)> = study
            .comparisons
            .iter()
            .map(|c| (c.baseline.as_str(), c.variant.as_str()))
            .collect();
        pairs.dedup();
        for (a, b) in pairs {
            let va = study.variants.iter().find(|v| v.name == a);
            let vb = study.variants.iter().find(|v| v.name == b);
            let comps: Vec<_> = study
                .comparisons
                .iter()
                .filter(|c| c.baseline == a && c.variant == b)
                .cloned()
                .collect();
            writeln!(out, "\n{a} → {b}")?;
            print_comparisons(out, &comps, va, vb)?;
        }
    }
    for d in &study.degradation {
        let mut parts = Vec::new();
        if let Some(l) = d.load_factor {
            parts.push(format!("{l:.2}× load"));
        }
        let arrow = if parts.is_empty() { "" } else { " → " };
        let figures: Vec<String> = d
            .factors
            .iter()
            .filter(|(m, _)| m.as_str() != "latency_ms.mean")
            .map(|(m, f)| {
                format!(
                    "{f:.2}× {}",
                    m.trim_start_matches("latency_ms.")
                        .replace("requests.rate", "throughput")
                )
            })
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
    if let Some(s) = &study.sweep {
        writeln!(out, "\nsweep over {}:", s.parameter)?;
        writeln!(
            out,
            "  {:>8}  {:>12}  {:>10}  {:>10}  {:>8}",
            s.parameter, "req/s", "p50", "p95", "errors"
        )?;
        for p in &s.points {
            writeln!(
                out,
                "  {:>8}  {:>12}  {:>10}  {:>10}  {:>7.2}%",
                fmt_num(p.value),
                fmt_metric("requests.rate", p.throughput),
                fmt_metric("latency_ms.p50", p.p50),
                fmt_metric("latency_ms.p95", p.p95),
                p.error_rate * 100.0
            )?;
        }
        match s.knee {
            Some(k) => writeln!(
                out,
                "  throughput knee (Kneedle): {} = {}",
                s.parameter,
                fmt_num(k)
            )?,
            None => writeln!(out, "  throughput knee (Kneedle): none found")?,
        }
        if let Some(k) = s.latency_knee {
            writeln!(
                out,
                "  p95 latency elbow (Kneedle): {} = {}",
                s.parameter,
                fmt_num(k)
            )?;
        }
        if let Some(u) = &s.usl {
            write!(
                out,
                "  USL: σ = {:.4}, κ = {:.6}, λ = {:.2} req/s per VU, R² = {:.3}",
                u.sigma, u.kappa, u.lambda, u.r2
            )?;
            if let (Some(n), Some(p)) = (u.n_star, u.peak) {
                write!(out, "; N* = {n:.0} VUs, predicted peak {p:.1} req/s")?;
            }
            writeln!(out, "{}", if u.poor_fit { " (poor fit)" } else { "" })?;
        }
    }
    if !study.warnings.is_empty() {
        writeln!(out)?;
        for w in &study.warnings {
            writeln!(out, "warning: {w}")?;
        }
    }
    Ok(())
}
