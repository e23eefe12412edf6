//! How a metric of a study is named, formatted and tabulated (`latency_ms.p95` → `p95 latency`).

use crate::chart::Unit;
use crate::doc::{Cell, Level};
use crate::verdict_words::format_value;
use loadlab_analysis::study::MetricStats;
use loadlab_metrics::{LatencyStat, MetricId, MetricUnit, Quantity};

/// `latency_ms.p95` → `p95 latency`, `groups.auth.latency_ms.p95` → `p95 latency of group `auth``.
pub fn metric_words(metric: &MetricId) -> String {
    metric.label()
}

/// The chart unit of a metric.
pub(super) fn metric_unit(metric: &MetricId) -> Unit {
    match metric.unit() {
        MetricUnit::Millis => Unit::Millis,
        MetricUnit::PerSecond => Unit::PerSecond,
        MetricUnit::Fraction => Unit::Fraction,
        MetricUnit::Count => Unit::Count,
        MetricUnit::Percent => Unit::Percent,
        MetricUnit::Bytes => Unit::Bytes,
        MetricUnit::Plain => Unit::Plain,
    }
}

pub(super) fn fmt(metric: &MetricId, v: f64) -> String {
    format_value(metric.unit(), v)
}

pub(super) fn pct(x: f64) -> String {
    crate::verdict_words::signed_pct(x)
}

/// `612.00ms [598.00ms, 640.00ms]`, or `612.00ms (n < 6: no CI)`.
pub(super) fn median_ci_words(metric: &MetricId, m: &MetricStats) -> String {
    match m.median_ci {
        Some([lo, hi]) => format!(
            "{} [{}, {}]",
            fmt(metric, m.median),
            fmt(metric, lo),
            fmt(metric, hi)
        ),
        None => format!("{} [n/a]", fmt(metric, m.median)),
    }
}

/// `CV 4.1%`, or `n/a` with one run.
pub(super) fn cv_words(m: &MetricStats) -> String {
    match m.cv {
        Some(cv) => format!("{:.1}%", cv * 100.0),
        None => "n/a".into(),
    }
}

/// `#3 high, #7 low (far)`: the outlier runs of a metric by their position in run order.
pub(super) fn outlier_words(m: &MetricStats) -> String {
    m.outliers
        .iter()
        .map(|o| {
            format!(
                "#{} {}{}",
                o.index + 1,
                match o.side {
                    loadlab_analysis::stats::OutlierSide::High => "high",
                    loadlab_analysis::stats::OutlierSide::Low => "low",
                },
                match o.kind {
                    loadlab_analysis::stats::OutlierKind::Extreme => " (far)",
                    loadlab_analysis::stats::OutlierKind::Mild => "",
                }
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

pub(super) fn metric_row(metric: &MetricId, m: &MetricStats) -> Vec<Cell> {
    // Errors are rare events: their CV says little, so it is not flagged.
    let unstable = !matches!(metric.quantity, Quantity::ErrorRate | Quantity::Errors)
        && m.cv
            .is_some_and(|cv| cv >= loadlab_analysis::stats::UNSTABLE_CV);
    let mean = match m.mean_ci {
        Some([lo, hi]) => format!(
            "{} [{}, {}]",
            fmt(metric, m.mean),
            fmt(metric, lo),
            fmt(metric, hi)
        ),
        None => format!("{} [n/a]", fmt(metric, m.mean)),
    };
    let outliers = outlier_words(m);
    vec![
        metric_words(metric).into(),
        m.n.to_string().into(),
        median_ci_words(metric, m).into(),
        mean.into(),
        if unstable {
            Cell::level(cv_words(m), Level::Warn)
        } else {
            cv_words(m).into()
        },
        format!("{} – {}", fmt(metric, m.min), fmt(metric, m.max)).into(),
        if outliers.is_empty() {
            "".into()
        } else {
            Cell::level(outliers, Level::Warn)
        },
    ]
}

pub(super) const METRIC_COLUMNS: [&str; 7] = [
    "metric",
    ">runs",
    ">median [95% CI]",
    ">mean [95% CI]",
    ">CV",
    ">min – max",
    "outlier runs",
];

pub(super) const METRIC_NOTE: &str = "One value per run, summarised across runs. CV = standard deviation / mean (the spread between runs, not a confidence margin); [n/a]: too few runs for an interval (the median's needs 6, the mean's 2); outlier runs lie outside Tukey's fences (#k = k-th run; far = beyond 3 IQR) and are kept in every statistic.";

/// The run-wide metrics of the per-variant table, in order.
pub(super) fn main_metrics() -> Vec<MetricId> {
    let mut m = vec![
        MetricId::run(Quantity::Throughput),
        MetricId::run(Quantity::Requests),
        MetricId::run(Quantity::Iterations),
        MetricId::run(Quantity::ErrorRate),
        MetricId::run(Quantity::Errors),
    ];
    m.extend(
        LatencyStat::tabulated()
            .filter(|s| *s != LatencyStat::Min)
            .map(MetricId::latency),
    );
    m
}
