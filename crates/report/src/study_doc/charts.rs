//! The charts section of a study: per-run dot plots, time series of each variant's median
//! run and the merged latency distributions.

use super::metrics::{metric_unit, metric_words};
use super::{median, variant_runs, Runs};
use crate::chart::{Axis, Chart, Series, SeriesKind, Unit};
use crate::doc::{Block, Section};
use crate::run_doc::{
    active_points, distribution_chart, failed_rate_points, latency_points, ok_rate_points,
    percentile_curve, planned_series, run_end_s, warmup_band, window_words,
};
use loadlab_analysis::study::{StudyResult, VariantStats};
use loadlab_metrics::result::{decode_histogram, PlannedLoad};
use loadlab_metrics::{LatencyStat, MetricId, Quantity, RunResult};

/// A deterministic spread of the dots of one category (no randomness: golden files).
fn jitter(i: usize, n: usize) -> f64 {
    if n <= 1 {
        return 0.0;
    }
    let width = 0.36;
    -width / 2.0 + width * (i as f64) / ((n - 1) as f64)
}

fn dot_plot(s: &StudyResult, metric: &MetricId, id: &str, title: &str) -> Chart {
    let unit = metric_unit(metric);
    let names: Vec<String> = s.variants.iter().map(|v| v.name.clone()).collect();
    let mut c = Chart::new(
        id,
        title,
        Axis::categories("variant", names),
        Axis::linear(&metric_words(metric), unit),
    )
    .describe(format!(
        "Each dot is one run's {}; the bar is the median with its 95% confidence interval (none below 6 runs). Outlier runs (outside Tukey's fences) are drawn apart and kept in every statistic.",
        metric_words(metric)
    ))
    .height(280);
    let mut medians = Vec::new();
    let mut cis = Vec::new();
    let mut outliers = Vec::new();
    for (i, v) in s.variants.iter().enumerate() {
        if let Some(m) = v.metrics.get(metric) {
            let is_outlier = |j: usize| m.outliers.iter().any(|o| o.index == j);
            let place = |j: usize| i as f64 + jitter(j, m.values.len());
            let pts = m
                .values
                .iter()
                .enumerate()
                .filter(|(j, _)| !is_outlier(*j))
                .map(|(j, y)| (place(j), *y))
                .collect();
            outliers.extend(m.outliers.iter().map(|o| (place(o.index), o.value)));
            let mut ser = Series::new("", SeriesKind::Points, i, pts);
            ser.name = format!("{} runs", v.name);
            c = c.series(ser);
            if let Some([lo, hi]) = m.median_ci {
                medians.push((i as f64 + 0.3, m.median));
                cis.push((lo, hi));
            }
        }
    }
    if !outliers.is_empty() {
        c = c.series(Series::new("outlier runs", SeriesKind::Points, 3, outliers));
    }
    c.series(Series::new("median [95% CI]", SeriesKind::Points, 7, medians).with_intervals(cis))
}

/// The run whose p95 is the median of its variant: the one drawn in time series.
pub(super) fn representative<'a>(v: &VariantStats, runs: &'a Runs) -> Option<&'a RunResult> {
    let rs = variant_runs(v, runs);
    let m = median(&rs.iter().map(|r| r.latency_ms.p95).collect::<Vec<_>>());
    rs.into_iter().min_by(|a, b| {
        (a.latency_ms.p95 - m)
            .abs()
            .total_cmp(&(b.latency_ms.p95 - m).abs())
    })
}

pub(super) fn study_charts(s: &StudyResult, runs: &Runs) -> Section {
    let mut sec = Section::new("charts", "Charts");
    sec.push(Block::chart(dot_plot(
        s,
        &MetricId::latency(LatencyStat::P95),
        "p95-per-run",
        "p95 latency of every run, per variant",
    )));
    sec.push(Block::chart(dot_plot(
        s,
        &MetricId::run(Quantity::Throughput),
        "throughput-per-run",
        "Throughput of every run, per variant",
    )));
    let reps: Vec<Representative> = s
        .variants
        .iter()
        .enumerate()
        .filter_map(|(i, v)| representative(v, runs).map(|r| (i, v, r)))
        .collect();
    if !reps.is_empty() {
        for chart in time_charts(&reps) {
            sec.push(Block::chart(chart));
        }
        sec.push(Block::chart(merged_distribution_chart(s, runs)));
    }
    sec
}

/// A variant's colour index, its statistics and its median run.
type Representative<'a> = (usize, &'a VariantStats, &'a RunResult);

/// Latency, throughput and active load over time of each variant's median run, on one time
/// axis long enough for the longest, with the plans and the warm-up drawn in.
fn time_charts(reps: &[Representative]) -> [Chart; 3] {
    let end = reps
        .iter()
        .map(|(_, _, r)| run_end_s(r))
        .fold(0.0, f64::max);
    let first = reps[0].2;
    let mut lat = latency_chart(reps, Axis::time(end));
    let mut tput = throughput_chart(reps, Axis::time(end));
    let mut active = active_chart(reps, Axis::time(end));
    draw_plans(reps, &mut tput, &mut active);
    for chart in [&mut lat, &mut tput, &mut active] {
        warmup_band(chart, first.warmup_s);
    }
    [lat, tput, active]
}

fn latency_chart(reps: &[Representative], time: Axis) -> Chart {
    let mut lat = Chart::new(
        "latency-over-time",
        "Latency percentiles over time (median run of each variant)",
        time,
        Axis::linear("latency", Unit::Millis),
    )
    .describe(format!(
        "p95 (solid) and p99 (dashed) of {}, for the run whose p95 is the median of its variant.",
        window_words(reps[0].2)
    ));
    for (i, v, r) in reps {
        lat = lat
            .series(Series::new(
                &format!("{} p95", v.name),
                SeriesKind::Line,
                *i,
                latency_points(r, |l| l.p95),
            ))
            .series(
                Series::new(
                    &format!("{} p99", v.name),
                    SeriesKind::Line,
                    *i,
                    latency_points(r, |l| l.p99),
                )
                .dashed(),
            );
    }
    lat
}

fn throughput_chart(reps: &[Representative], time: Axis) -> Chart {
    let mut tput = Chart::new(
        "throughput-over-time",
        "Throughput and errors over time (median run of each variant)",
        time,
        Axis::linear("requests/s", Unit::PerSecond),
    )
    .describe(format!("Completed requests per second of {}, over its real length (solid), and failed requests per second (dashed).", window_words(reps[0].2)));
    for (i, v, r) in reps {
        tput = tput
            .series(Series::new(
                &format!("{} ok/s", v.name),
                SeriesKind::Line,
                *i,
                ok_rate_points(r),
            ))
            .series(
                Series::new(
                    &format!("{} failed/s", v.name),
                    SeriesKind::Line,
                    *i,
                    failed_rate_points(r),
                )
                .dashed(),
            );
    }
    tput
}

/// Active VUs (closed model, a line) or requests in flight (open model, one dot a sample).
fn active_chart(reps: &[Representative], time: Axis) -> Chart {
    let closed = reps[0].2.load.model == loadlab_metrics::LoadModel::Closed;
    let mut active = Chart::new(
        "active-over-time",
        if closed { "Active virtual users over time" } else { "Requests in flight over time" },
        time,
        Axis::linear(if closed { "active VUs" } else { "in flight" }, Unit::Count),
    )
    .describe(if closed {
        "Active VUs at the end of each slice."
    } else {
        "Requests in flight, sampled at the end of each slice (one dot each): a steady climb means the target cannot keep up."
    });
    let kind = if closed {
        SeriesKind::Line
    } else {
        SeriesKind::Points
    };
    for (i, v, r) in reps {
        active = active.series(Series::new(&v.name, kind, *i, active_points(r)));
    }
    active
}

/// The planned load: a rate plan on the throughput chart, a VU plan on the active chart.
/// One grey dashed line when every variant has the same plan, else one dashed line per
/// variant in its colour.
fn draw_plans(reps: &[Representative], tput: &mut Chart, active: &mut Chart) {
    let plans: Vec<(usize, &str, &PlannedLoad)> = reps
        .iter()
        // An imported run's load is what its file shows, not a plan loadlab followed.
        .filter(|(_, _, r)| r.validity_judged())
        .filter_map(|(i, v, r)| r.load.planned.as_ref().map(|p| (*i, v.name.as_str(), p)))
        .collect();
    let same_plan = plans.windows(2).all(|w| w[0].2 == w[1].2);
    for (k, (i, name, p)) in plans.iter().enumerate() {
        if same_plan && k > 0 {
            break;
        }
        let mut line = planned_series(p);
        if !same_plan {
            line.name = format!("{name} {}", line.name);
            line.color = *i;
        }
        if p.vus {
            active.series.push(line);
        } else {
            tput.series.push(line);
        }
    }
    let what = |load: &str| {
        if same_plan {
            format!(" Grey dashed: the planned {load}.")
        } else {
            format!(" `planned` (dashed): each variant's planned {load}.")
        }
    };
    if plans.iter().any(|(_, _, p)| !p.vus) {
        tput.description.push_str(&what("arrival rate"));
    }
    if plans.iter().any(|(_, _, p)| p.vus) {
        active.description.push_str(&what("VUs"));
    }
}

/// Each variant's latency at every percentile, its runs' HDR histograms merged exactly.
fn merged_distribution_chart(s: &StudyResult, runs: &Runs) -> Chart {
    let mut dist = Vec::new();
    for v in &s.variants {
        let mut merged: Option<loadlab_metrics::LatencyHistogram> = None;
        for r in variant_runs(v, runs) {
            if let Some(h) = decode_histogram(&r.histograms.latency) {
                match &mut merged {
                    Some(m) => {
                        let _ = m.add(&h);
                    }
                    None => merged = Some(h),
                }
            }
        }
        if let Some(h) = merged {
            let enc = loadlab_metrics::result::encode_histogram(&h);
            dist.push((v.name.clone(), percentile_curve(&enc)));
        }
    }
    let mut c = distribution_chart(dist, "latency-distribution");
    c.description = "Latency at each percentile of all the measured requests of a variant (its runs' HDR histograms merged exactly): the right-hand end is the tail.".into();
    c
}
