//! The charts of a run (latency, throughput and activity over time, the HDR percentile plot)
//! and the per-interval series a study draws for each variant's median run.

use super::PlannedLoad;
use crate::chart::{Axis, Band, Chart, Rule, Series, SeriesKind, Unit};
use crate::doc::{Block, Level, Section};
use loadlab_metrics::result::{decode_histogram, IntervalLatency, RunResult};

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

/// `(t, latency)` of each slice with requests, `f` picking the percentile.
pub(crate) fn latency_points(r: &RunResult, f: fn(&IntervalLatency) -> f64) -> Vec<(f64, f64)> {
    r.intervals
        .iter()
        .filter(|i| i.requests > 0)
        .map(|i| (i.t, f(&i.latency_ms)))
        .collect()
}

/// `(t, successful requests/s)` of each slice.
pub(crate) fn ok_rate_points(r: &RunResult) -> Vec<(f64, f64)> {
    r.intervals
        .iter()
        .map(|i| {
            (
                i.t,
                i.rate * (i.requests - i.failed.min(i.requests)) as f64 / i.requests.max(1) as f64,
            )
        })
        .collect()
}

/// `(t, failed requests/s)` of each slice.
pub(crate) fn failed_rate_points(r: &RunResult) -> Vec<(f64, f64)> {
    r.intervals
        .iter()
        .map(|i| (i.t, i.rate * i.failed as f64 / i.requests.max(1) as f64))
        .collect()
}

/// `(t, active VUs or requests in flight)` at the end of each slice.
pub(crate) fn active_points(r: &RunResult) -> Vec<(f64, f64)> {
    r.intervals.iter().map(|i| (i.t, i.active as f64)).collect()
}

/// p50/p95/p99 per interval, with latency thresholds as reference lines.
pub fn latency_over_time(r: &RunResult, id: &str) -> Chart {
    let pts = |f: fn(&IntervalLatency) -> f64| latency_points(r, f);
    let mut c = Chart::new(
        id,
        "Latency percentiles over time",
        Axis::linear("time since start (s)", Unit::Seconds),
        Axis::linear("latency", Unit::Millis),
    )
    .describe("p50, p95 and p99 of each 1-second slice: a rising line means the target fell behind; spikes are stalls.")
    .series(Series::new("p50", SeriesKind::Line, 2, pts(|l| l.p50)))
    .series(Series::new("p95", SeriesKind::Line, 0, pts(|l| l.p95)))
    .series(Series::new("p99", SeriesKind::Line, 1, pts(|l| l.p99)));
    warmup_band(&mut c, r.warmup_s);
    for t in &r.thresholds {
        let metric = t.expr.split(['<', '>']).next().unwrap_or("").trim();
        if matches!(metric, "latency.p95" | "latency.p99" | "latency.p50") {
            if let Some(limit) = threshold_limit(&t.expr) {
                c.rules.push(Rule::y(
                    limit,
                    format!("threshold {}", t.expr),
                    if t.ok { Level::Pass } else { Level::Fail },
                ));
            }
        }
    }
    c
}

/// The number on the right of a latency threshold, in ms (`< 250ms` → 250, `< 2.8s` → 2800).
fn threshold_limit(expr: &str) -> Option<f64> {
    let pos = expr.rfind(['<', '>', '='])?;
    let v = expr[pos + 1..].trim();
    let (num, mult) = if let Some(n) = v.strip_suffix("ms") {
        (n, 1.0)
    } else if let Some(n) = v.strip_suffix("us").or_else(|| v.strip_suffix("µs")) {
        (n, 0.001)
    } else if let Some(n) = v.strip_suffix('s') {
        (n, 1000.0)
    } else {
        (v, 1.0)
    };
    num.trim().parse::<f64>().ok().map(|x| x * mult)
}

pub fn throughput_over_time(r: &RunResult, plan: Option<&PlannedLoad>, id: &str) -> Chart {
    let ok = ok_rate_points(r);
    let failed = failed_rate_points(r);
    let mut c = Chart::new(
        id,
        "Throughput and errors over time",
        Axis::linear("time since start (s)", Unit::Seconds),
        Axis::linear("requests/s", Unit::PerSecond),
    )
    .describe("Completed requests per second, successful and failed; under an open model the planned arrival rate is dashed.")
    .series(Series::new("ok/s", SeriesKind::Line, 2, ok))
    .series(Series::new("failed/s", SeriesKind::Line, 1, failed));
    if let Some(p) = plan.filter(|p| !p.vus) {
        c = c.series(
            Series::new("planned arrivals/s", SeriesKind::Line, 6, p.points.clone()).dashed(),
        );
    }
    warmup_band(&mut c, r.warmup_s);
    c
}

pub fn active_over_time(r: &RunResult, plan: Option<&PlannedLoad>, id: &str) -> Chart {
    let closed = r.load.model == "closed";
    let what = if closed {
        "active VUs"
    } else {
        "requests in flight"
    };
    let mut c = Chart::new(
        id,
        if closed {
            "Active virtual users over time"
        } else {
            "Requests in flight over time"
        },
        Axis::linear("time since start (s)", Unit::Seconds),
        Axis::linear(what, Unit::Count),
    )
    .describe(if closed {
        "Virtual users running at the end of each slice (dashed: the plan)."
    } else {
        "Requests sent and not yet answered at the end of each slice: growth means the target cannot keep up with the arrival rate."
    })
    .series(Series::new(
        what,
        SeriesKind::Line,
        3,
        active_points(r),
    ));
    if let Some(p) = plan.filter(|p| p.vus) {
        c = c.series(Series::new("planned VUs", SeriesKind::Line, 6, p.points.clone()).dashed());
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
    s.push(Block::Chart(latency_over_time(r, "latency-over-time")));
    s.push(Block::Chart(throughput_over_time(
        r,
        plan,
        "throughput-over-time",
    )));
    s.push(Block::Chart(active_over_time(r, plan, "active-over-time")));
    s.push(Block::Chart(distribution_chart(
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
mod tests {
    #[test]
    fn limits() {
        assert_eq!(super::threshold_limit("latency.p95 < 250ms"), Some(250.0));
        assert_eq!(super::threshold_limit("latency.p95 < 2.8s"), Some(2800.0));
        assert_eq!(super::threshold_limit("latency.p99 <= 900us"), Some(0.9));
    }
}
