//! How a metric of a study is named, formatted and tabulated (`latency_ms.p95` → `p95 latency`).

use crate::chart::Unit;
use crate::doc::{Cell, Level};
use crate::format::{format_fraction, format_ms, format_rate};
use loadlab_analysis::study::MetricStats;

/// `latency_ms.p95` → `p95 latency`, `groups.auth.latency_ms.p95` → `p95 latency of group auth`.
pub fn metric_words(metric: &str) -> String {
    let (scope, rest) = if let Some(r) = metric.strip_prefix("groups.") {
        match r.rsplit_once(".latency_ms.") {
            Some((g, p)) => return format!("{p} latency of group `{g}`"),
            None => ("", r),
        }
    } else if let Some(r) = metric.strip_prefix("steps.") {
        match r.rsplit_once(".latency_ms.") {
            Some((s, p)) => return format!("{p} latency of step `{s}`"),
            None => ("", r),
        }
    } else {
        ("", metric)
    };
    let w = match rest {
        "requests.rate" => "throughput".to_string(),
        "errors.rate" => "error rate".to_string(),
        "latency_ms.mean" => "mean latency".to_string(),
        "latency_ms.max" => "max latency".to_string(),
        r => match r.strip_prefix("latency_ms.") {
            Some(p) => format!("{p} latency"),
            None => format!("`{r}`"),
        },
    };
    format!("{w}{scope}")
}

pub(super) fn metric_unit(metric: &str) -> Unit {
    if metric == "errors.rate" {
        Unit::Fraction
    } else if metric.ends_with("rate") {
        Unit::PerSecond
    } else if metric.contains("latency") {
        Unit::Millis
    } else {
        Unit::Plain
    }
}

pub(super) fn fmt(unit: Unit, v: f64) -> String {
    match unit {
        Unit::Millis => format_ms(v),
        Unit::Fraction => format_fraction(v),
        Unit::PerSecond => format_rate(v),
        _ => format!("{v:.3}"),
    }
}

pub(super) fn pct(x: f64) -> String {
    format!("{:+.1}%", x * 100.0)
}

pub(super) fn p_words(p: f64) -> String {
    if p < 0.001 {
        "p < 0.001".to_string()
    } else {
        format!("p = {p:.3}")
    }
}

pub(super) fn median_ci_words(unit: Unit, m: &MetricStats) -> String {
    match m.median_ci {
        Some([lo, hi]) => format!(
            "{} [{}, {}]",
            fmt(unit, m.median),
            fmt(unit, lo),
            fmt(unit, hi)
        ),
        None => format!("{} [n<6]", fmt(unit, m.median)),
    }
}

pub(super) fn metric_row(metric: &str, m: &MetricStats) -> Vec<Cell> {
    let unit = metric_unit(metric);
    let half = (m.mean_ci[1] - m.mean_ci[0]) / 2.0;
    let unstable =
        metric != "errors.rate" && m.n >= 2 && m.cv >= loadlab_analysis::stats::UNSTABLE_CV;
    vec![
        metric_words(metric).into(),
        m.n.to_string().into(),
        median_ci_words(unit, m).into(),
        format!("{} ± {}", fmt(unit, m.mean), fmt(unit, half)).into(),
        if unstable {
            Cell::level(format!("{:.1}%", m.cv * 100.0), Level::Warn)
        } else {
            format!("{:.1}%", m.cv * 100.0).into()
        },
        format!("{} – {}", fmt(unit, m.min), fmt(unit, m.max)).into(),
    ]
}

pub(super) const METRIC_COLUMNS: [&str; 6] = [
    "metric",
    ">runs",
    ">median [95% CI]",
    ">mean ± 95% CI",
    ">CV",
    ">min – max",
];

pub(super) const MAIN_METRICS: [&str; 7] = [
    "requests.rate",
    "errors.rate",
    "latency_ms.p50",
    "latency_ms.p90",
    "latency_ms.p95",
    "latency_ms.p99",
    "latency_ms.max",
];
