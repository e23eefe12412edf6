//! How a metric of a study is named, formatted and tabulated (`latency_ms.p95` → `p95 latency`).

use crate::chart::Unit;
use crate::doc::{Cell, Level};
use crate::verdict_words::format_value;
use loadlab_analysis::study::{MetricStats, VariantStats};
use loadlab_metrics::{LatencyStat, MetricId, MetricUnit, Quantity};

/// `latency_ms.p95` → `p95 latency`, `groups.auth.latency_ms.p95` → `p95 latency of group `auth``.
pub fn metric_words(metric: &MetricId) -> String {
    metric.label()
}

/// The chart unit of a metric.
pub(crate) fn metric_unit(metric: &MetricId) -> Unit {
    match metric.unit() {
        MetricUnit::Millis => Unit::Millis,
        MetricUnit::PerSecond => Unit::PerSecond,
        MetricUnit::Fraction => Unit::Fraction,
        MetricUnit::Count => Unit::Count,
        MetricUnit::Percent => Unit::Percent,
        MetricUnit::Bytes | MetricUnit::BytesPerSecond => Unit::Bytes,
        MetricUnit::Cores => Unit::Fraction,
        MetricUnit::Plain => Unit::Plain,
    }
}

pub(super) fn fmt(metric: &MetricId, v: f64) -> String {
    format_value(metric.unit(), v)
}

pub(super) fn pct(x: f64) -> String {
    crate::verdict_words::signed_pct(x)
}

/// Fewest runs for the distribution-free 95% interval of a median.
pub(super) const MEDIAN_CI_RUNS: usize = 6;

/// `612.00ms [598.00ms, 640.00ms]`; `612.00ms [n<6]` when too few runs for an interval
/// (`needs` of them); `612.00ms [n/a]` when none could be computed for another reason.
fn with_ci(metric: &MetricId, value: f64, ci: Option<[f64; 2]>, n: usize, needs: usize) -> String {
    match ci {
        // Every metric of a study is a count, rate, share or duration: a Student-t interval
        // of skewed runs can reach below 0 (`[-3.97ms, 89.27ms]`), which no run can be.
        Some([lo, hi]) => format!(
            "{} [{}, {}]",
            fmt(metric, value),
            fmt(metric, lo.max(0.0)),
            fmt(metric, hi)
        ),
        None if n < needs => format!("{} [n<{needs}]", fmt(metric, value)),
        None => format!("{} [n/a]", fmt(metric, value)),
    }
}

/// The median with its 95% CI: `612.00ms [598.00ms, 640.00ms]`, or `612.00ms [n<6]`.
pub(super) fn median_ci_words(metric: &MetricId, m: &MetricStats) -> String {
    with_ci(metric, m.median, m.median_ci, m.n, MEDIAN_CI_RUNS)
}

/// True when a median's interval is missing for want of runs: the `[n<6]` note applies.
pub(super) fn too_few_for_ci(m: &MetricStats) -> bool {
    m.median_ci.is_none() && m.n < MEDIAN_CI_RUNS
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

pub(super) fn metric_row(metric: &MetricId, m: &MetricStats, thin: bool) -> Vec<Cell> {
    // Errors are rare events: their CV says little, so it is not flagged.
    let unstable = !matches!(metric.quantity, Quantity::ErrorRate | Quantity::Errors)
        && m.cv
            .is_some_and(|cv| cv >= loadlab_analysis::stats::UNSTABLE_CV);
    let mean = with_ci(metric, m.mean, m.mean_ci, m.n, 2);
    let outliers = outlier_words(m);
    vec![
        metric_words(metric).into(),
        m.n.to_string().into(),
        (median_ci_words(metric, m) + if thin { "†" } else { "" }).into(),
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

/// The note under a table of [`metric_row`]s; the `[n<6]` sentence only when a row of the
/// table lacks an interval for want of runs.
pub(super) fn metric_note(short: bool) -> String {
    let mut note = "One value per run, summarised across runs. CV = standard deviation / mean (the spread between runs, not a confidence margin); ".to_string();
    if short {
        note.push_str("[n<6]: too few runs for the median's distribution-free 95% interval ([n<2] for the mean's); ");
    }
    note.push_str("outlier runs lie outside Tukey's fences (#k = k-th run; far = beyond 3 IQR) and are kept in every statistic.");
    note
}

/// Whether a variant's runs hold too few requests (in the metric's scope, median across
/// runs) for its percentile: fewer than 10 beyond it, so each run's figure is nearly its
/// maximum. Such figures are marked `†` ([`THIN_NOTE`]) and draw no comparison verdict.
pub(crate) fn thin(v: &VariantStats, metric: &MetricId) -> bool {
    let Quantity::Latency(stat) = &metric.quantity else {
        return false;
    };
    let requests = MetricId {
        scope: metric.scope.clone(),
        quantity: Quantity::Requests,
    };
    match (stat.quantile(), v.metrics.get(&requests)) {
        (Some(q), Some(n)) => loadlab_metrics::thin_percentile(n.median as u64, q),
        _ => false,
    }
}

/// `†` after a [`thin`] figure.
pub(super) fn thin_mark(v: &VariantStats, metric: &MetricId) -> &'static str {
    if thin(v, metric) {
        "†"
    } else {
        ""
    }
}

/// What `†` means, under a table that holds one.
pub(crate) const THIN_NOTE: &str = "† the runs hold too few requests for this percentile (fewer than 10 beyond it; p99 needs 1,000 a run, p95 200): each run's figure is nearly its maximum, and no comparison verdict is drawn from it.";

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
