//! The charts of a run (latency, throughput and activity over time, the HDR percentile plot)
//! and the per-interval series a study draws for each variant's median run.

use super::PlannedLoad;
use crate::chart::{Axis, Band, Chart, Rule, Series, SeriesKind, Unit};
use crate::doc::{Block, Level, Section};
use loadlab_metrics::result::{
    decode_histogram, IntervalLatency, RunResult, WindowStats, WINDOW_REQUESTS,
};
use loadlab_scenario::threshold::{
    Quantity as ThresholdQuantity, Scope as ThresholdScope, Stat, Threshold,
};

/// Shades the warm-up (excluded from the statistics) at the start of a time chart.
pub(crate) fn warmup_band(c: &mut Chart, warmup_s: f64) {
    if warmup_s > 0.0 {
        c.bands.push(Band {
            from: 0.0,
            to: warmup_s,
            label: "warm-up (excluded)".to_string(),
        });
    }
}

/// Slices shorter than this share of the run's slice length carry no rate or percentile
/// worth drawing: the run's tail after its last whole slice, a couple of requests over a few
/// milliseconds, whose percentiles would end a line with a jump that is not the run's
/// (docs/reports.md, "Short slices at the end of a run").
const MIN_DRAWN_SLICE_SHARE: f64 = 0.2;

/// The run's slice length: its longest interval (the record cuts seconds, or tenths for a
/// short run; only the warm-up's end and the run's end cut shorter ones).
fn nominal_slice_s(r: &RunResult) -> f64 {
    r.intervals.iter().map(|i| i.length_s).fold(0.0, f64::max)
}

/// The end of a run's time axis: the end of its last slice (its planned length when it has
/// none). Every time chart of the run uses it, so they share one x range and ticks.
pub(crate) fn run_end_s(r: &RunResult) -> f64 {
    let end = r
        .intervals
        .iter()
        .map(|i| i.t + i.length_s)
        .fold(0.0, f64::max);
    if end > 0.0 {
        end
    } else {
        r.load.planned_duration_s.max(r.duration_s + r.warmup_s)
    }
}

/// Where a window's figure is drawn: the middle of the time it sums up, so a partial window
/// sits where its requests happened and the line meets the planned load where it should.
fn mid(w: &WindowStats) -> f64 {
    w.t + w.length_s / 2.0
}

/// The run's slice length in words (`1s`, `100ms`).
pub(crate) fn slice_length(r: &RunResult) -> String {
    crate::format::format_secs((nominal_slice_s(r) * 1000.0).round() / 1000.0)
}

/// What the latency and rate charts draw: the run's windows (slices merged until they hold
/// enough requests), or each slice for a result written before windows existed.
fn windows(r: &RunResult) -> Vec<WindowStats> {
    if !r.windows.is_empty() {
        return r.windows.clone();
    }
    r.intervals
        .iter()
        .map(|i| WindowStats {
            t: i.t,
            length_s: i.length_s,
            warmup: i.warmup,
            requests: i.requests,
            failed: i.failed,
            rate: i.rate,
            latency_ms: i.latency_ms,
        })
        .collect()
}

/// Whether any window merges several slices (the words then say so).
fn merges_slices(r: &RunResult) -> bool {
    let nominal = nominal_slice_s(r);
    r.windows.iter().any(|w| w.length_s > nominal + 1e-3)
}

/// What one point of a time chart sums up, from the run's own slices: `each 1s slice`, and
/// when some are shorter (cut where the warm-up ends, or where the run ends), that too.
fn slice_words(r: &RunResult) -> String {
    let nominal = nominal_slice_s(r);
    if nominal <= 0.0 {
        return "each slice".to_string();
    }
    let length = slice_length(r);
    let shorter = r.intervals.iter().any(|i| i.length_s < nominal - 1e-3);
    if shorter {
        format!("each {length} slice (drawn at its middle; the slices cut where the warm-up or the run ends are shorter)")
    } else {
        format!("each {length} slice (drawn at its middle)")
    }
}

/// What one point of the latency and rate charts sums up: [`slice_words`], or the windows
/// when consecutive slices were merged to hold enough requests.
pub(crate) fn window_words(r: &RunResult) -> String {
    if merges_slices(r) {
        format!(
            "each window of consecutive {} slices holding at least {WINDOW_REQUESTS} requests (at most 1s; drawn at its middle)",
            slice_length(r)
        )
    } else {
        slice_words(r)
    }
}

/// Whether a window is worth drawing: a run's tail after its last whole slice holds a
/// couple of requests over a few milliseconds, too few for a percentile
/// (see [`MIN_DRAWN_SLICE_SHARE`]).
fn drawn_window(w: &WindowStats, nominal_s: f64) -> bool {
    w.requests >= WINDOW_REQUESTS / 2 || w.length_s >= MIN_DRAWN_SLICE_SHARE * nominal_s
}

/// `(t, latency)` of each window with requests, `f` picking the percentile; the run's short
/// tail is left out.
pub(crate) fn latency_points(r: &RunResult, f: fn(&IntervalLatency) -> f64) -> Vec<(f64, f64)> {
    let nominal = nominal_slice_s(r);
    windows(r)
        .iter()
        .filter(|w| w.requests > 0 && drawn_window(w, nominal))
        .map(|w| (mid(w), f(&w.latency_ms)))
        .collect()
}

/// The windows whose rate means something. Each rate is over its window's real length; the
/// very short tail after the last whole slice, and the drain after an open model's
/// arrivals stopped, are left out: they would read as throughput falling to zero.
fn rate_windows(r: &RunResult) -> Vec<WindowStats> {
    let open = r.load.model == loadlab_metrics::LoadModel::Open;
    let plan_end = r.load.planned_duration_s;
    let nominal = nominal_slice_s(r);
    windows(r)
        .into_iter()
        .filter(|w| drawn_window(w, nominal) && !(open && plan_end > 0.0 && w.t >= plan_end - 1e-6))
        .collect()
}

/// `(t, successful requests/s)` of each window.
pub(crate) fn ok_rate_points(r: &RunResult) -> Vec<(f64, f64)> {
    rate_windows(r)
        .iter()
        .map(|w| {
            (
                mid(w),
                w.rate * (w.requests - w.failed.min(w.requests)) as f64 / w.requests.max(1) as f64,
            )
        })
        .collect()
}

/// `(t, failed requests/s)` of each window.
pub(crate) fn failed_rate_points(r: &RunResult) -> Vec<(f64, f64)> {
    rate_windows(r)
        .iter()
        .map(|w| (mid(w), w.rate * w.failed as f64 / w.requests.max(1) as f64))
        .collect()
}

/// `(t, active VUs or requests in flight)`: a sample taken at the end of each slice, so it
/// is drawn there.
pub(crate) fn active_points(r: &RunResult) -> Vec<(f64, f64)> {
    r.intervals
        .iter()
        .map(|i| (i.t + i.length_s, i.active as f64))
        .collect()
}

/// The planned load as a dashed grey line.
pub(crate) fn planned_series(p: &PlannedLoad) -> Series {
    let name = if p.vus {
        "planned VUs"
    } else {
        "planned arrivals/s"
    };
    // A plan's points hold each level until the next: VUs change in steps, rates ramp
    // between points that say so (two points at one time are a jump).
    Series::new(name, SeriesKind::Line, 6, p.points.clone()).dashed()
}

/// The load as a steered run's commands drove it: a solid line beside the planned one.
pub(crate) fn driven_series(p: &PlannedLoad) -> Series {
    let name = if p.vus {
        "driven VUs"
    } else {
        "driven arrivals/s"
    };
    Series::new(name, SeriesKind::Line, 4, p.points.clone())
}

/// The run's latency thresholds drawn in the chart (`latency.p95 < 250ms`): `(text, limit in
/// ms, met)`, read from the parsed threshold, never from its text.
fn latency_limits(r: &RunResult) -> Vec<(String, f64, bool)> {
    r.thresholds
        .iter()
        .filter_map(|t| {
            let parsed = Threshold::parse(&t.expr).ok()?;
            match (parsed.metric.scope, parsed.metric.quantity) {
                (ThresholdScope::All, ThresholdQuantity::Latency(Stat::Percentile(p)))
                    if [50.0, 95.0, 99.0].contains(&p) =>
                {
                    Some((t.expr.clone(), parsed.value, t.ok))
                }
                _ => None,
            }
        })
        .collect()
}

/// p50/p95/p99 per interval, with latency thresholds as reference lines.
pub fn latency_over_time(r: &RunResult, id: &str) -> Chart {
    let pts = |f: fn(&IntervalLatency) -> f64| latency_points(r, f);
    let mut c = Chart::new(
        id,
        "Latency percentiles over time",
        Axis::time(run_end_s(r)),
        Axis::linear("latency", Unit::Millis),
    )
    .describe(format!(
        "p50, p95 and p99 of {}: a rising line means the target fell behind; spikes are stalls.",
        window_words(r)
    ))
    .series(Series::new("p50", SeriesKind::Line, 2, pts(|l| l.p50)))
    .series(Series::new("p95", SeriesKind::Line, 0, pts(|l| l.p95)))
    .series(Series::new("p99", SeriesKind::Line, 1, pts(|l| l.p99)));
    warmup_band(&mut c, r.warmup_s);
    for (expr, limit, ok) in latency_limits(r) {
        c.rules.push(Rule::y(
            limit,
            format!("threshold {expr}"),
            if ok { Level::Pass } else { Level::Fail },
        ));
    }
    c
}

pub fn throughput_over_time(r: &RunResult, plan: Option<&PlannedLoad>, id: &str) -> Chart {
    let planned = plan.filter(|p| !p.vus);
    let mut c = Chart::new(
        id,
        "Throughput and errors over time",
        Axis::time(run_end_s(r)),
        Axis::linear("requests/s", Unit::PerSecond),
    )
    .describe(format!(
        "Completed requests per second of {} (over its real length), successful and failed{}",
        window_words(r),
        if planned.is_some() {
            "; dashed: the planned arrival rate."
        } else {
            "."
        }
    ))
    .series(Series::new("ok/s", SeriesKind::Line, 2, ok_rate_points(r)))
    .series(Series::new(
        "failed/s",
        SeriesKind::Line,
        1,
        failed_rate_points(r),
    ));
    if let Some(p) = planned {
        c = c.series(planned_series(p));
    }
    if let Some(d) = r.load.driven.as_ref().filter(|d| !d.vus) {
        c = c.series(driven_series(d));
        c.description
            .push_str(" Solid: the arrival rate as it was steered.");
    }
    warmup_band(&mut c, r.warmup_s);
    c
}

pub fn active_over_time(r: &RunResult, plan: Option<&PlannedLoad>, id: &str) -> Chart {
    let closed = r.load.model == loadlab_metrics::LoadModel::Closed;
    let what = if closed {
        "active VUs"
    } else {
        "requests in flight"
    };
    let planned = plan.filter(|p| p.vus);
    let mut c = Chart::new(
        id,
        if closed {
            "Active virtual users over time"
        } else {
            "Requests in flight over time"
        },
        Axis::time(run_end_s(r)),
        Axis::linear(what, Unit::Count),
    )
    .describe(match (closed, planned.is_some()) {
        (true, true) => "Virtual users running at the end of each slice (one dot each, not joined: they say nothing of the time between); dashed: the planned VUs, which change in steps.",
        (true, false) => "Virtual users running at the end of each slice (one dot each, not joined: they say nothing of the time between).",
        _ => "Requests sent and not yet answered, sampled at the end of each slice (one dot each): a steady climb means the target cannot keep up with the arrival rate; a single sample jumps with each request.",
    });
    // Samples at the end of each slice: dots. Joined, a VU count that steps between two
    // samples read as a ramp the plan never had, and an in-flight count that jumps with every
    // request as a trend.
    c = c.series(Series::new(what, SeriesKind::Points, 3, active_points(r)));
    if let Some(p) = planned {
        c = c.series(planned_series(p));
    }
    if let Some(d) = r.load.driven.as_ref().filter(|d| d.vus) {
        c = c.series(driven_series(d));
        c.description
            .push_str(" Solid: the VUs as they were steered.");
    }
    warmup_band(&mut c, r.warmup_s);
    c
}

/// `(quantile, ms)` along the HdrHistogram percentile axis, from a base64 V2 histogram.
pub fn percentile_curve(encoded: &str) -> Vec<(f64, f64)> {
    let Some(h) = decode_histogram(encoded) else {
        return Vec::new();
    };
    if h.is_empty() {
        return Vec::new();
    }
    let top = (h.len() as f64).log10().clamp(1.0, 6.0);
    let steps = (top * 20.0).round() as usize;
    let mut pts: Vec<(f64, f64)> = (0..=steps)
        .map(|i| {
            let t = top * i as f64 / steps as f64;
            let q = 1.0 - 10f64.powf(-t);
            (q, h.value_at_quantile(q) as f64 / 1000.0)
        })
        .collect();
    pts.push((1.0 - 10f64.powf(-top - 0.3), h.max() as f64 / 1000.0));
    pts
}

pub fn distribution_chart(series: Vec<(String, Vec<(f64, f64)>)>, id: &str) -> Chart {
    let mut c = Chart::new(
        id,
        "Latency distribution (HDR percentile plot)",
        Axis::percentile("percentile (log scale of 1/(1−p))"),
        Axis::log("latency (log scale)", Unit::Millis),
    )
    .describe("Latency at each percentile of the measured requests, from the merged HDR histogram: the right-hand end is the tail (p99.9 and beyond).");
    for (i, (name, pts)) in series.into_iter().enumerate() {
        c = c.series(Series::new(&name, SeriesKind::Line, i, pts));
    }
    c
}

pub(super) fn charts(r: &RunResult, plan: Option<&PlannedLoad>) -> Section {
    let mut s = Section::new("charts", "Charts");
    s.push(Block::chart(latency_over_time(r, "latency-over-time")));
    s.push(Block::chart(throughput_over_time(
        r,
        plan,
        "throughput-over-time",
    )));
    s.push(Block::chart(active_over_time(r, plan, "active-over-time")));
    s.push(Block::chart(distribution_chart(
        vec![
            (
                "latency".to_string(),
                percentile_curve(&r.histograms.latency),
            ),
            (
                "service time".to_string(),
                percentile_curve(&r.histograms.service_time),
            ),
        ],
        "latency-distribution",
    )));
    s
}

#[cfg(test)]
mod tests;
