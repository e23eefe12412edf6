//! Evaluates a scenario's thresholds against a run result: each with its actual value. Any
//! percentile of any scope (`step.signin.latency.p97`) is read from that scope's histogram.
//! Thresholds over a window (`over 30s`) or that abort are also judged while the run goes:
//! `window` (the pure judge) and `watch` (the live observer that carries it).

mod running;
mod watch;
mod window;

pub use watch::ThresholdWatch;
pub use window::{ThresholdState, WindowJudge};

use loadlab_metrics::result::{decode_histogram, Histograms, LatencySummary, ThresholdResult};
use loadlab_metrics::{LatencyHistogram, PhaseSummary, RunResult, StreamResult};
use loadlab_scenario::threshold::StreamFigure;
use loadlab_scenario::threshold::{Quantity, Scope, Stat};
use loadlab_scenario::Threshold;

/// One result per threshold, in order. A metric with no data fails its threshold.
pub fn evaluate(thresholds: &[Threshold], run: &RunResult) -> Vec<ThresholdResult> {
    thresholds
        .iter()
        .map(|t| {
            let actual = actual_value(t, run);
            ThresholdResult {
                expr: t.expr.clone(),
                actual,
                ok: actual.is_some_and(|a| t.op.holds(a, t.value)),
            }
        })
        .collect()
}

/// Evaluates thresholds written as text (as a run record keeps them); an expression that
/// no longer parses fails, with no value.
pub fn evaluate_exprs(exprs: &[String], run: &RunResult) -> Vec<ThresholdResult> {
    exprs
        .iter()
        .map(|e| match Threshold::parse(e) {
            Ok(t) => evaluate(std::slice::from_ref(&t), run).remove(0),
            Err(_) => ThresholdResult {
                expr: e.clone(),
                actual: None,
                ok: false,
            },
        })
        .collect()
}

struct Scoped<'a> {
    requests: u64,
    failed: u64,
    latency: &'a LatencySummary,
    service: &'a LatencySummary,
    histograms: &'a Histograms,
    /// Runs and steps only.
    phases: Option<&'a PhaseSummary>,
    /// Runs and steps that streamed.
    stream: Option<&'a StreamResult>,
}

pub(crate) fn actual_value(t: &Threshold, run: &RunResult) -> Option<f64> {
    let scoped = match &t.metric.scope {
        Scope::All => Scoped {
            requests: run.requests.total,
            failed: run.requests.failed,
            latency: &run.latency_ms,
            service: &run.service_time_ms,
            histograms: &run.histograms,
            phases: run.phases_ms.as_ref(),
            stream: run.stream.as_ref(),
        },
        Scope::Step(name) => {
            let s = run.steps.iter().find(|s| &s.name == name)?;
            Scoped {
                requests: s.requests,
                failed: s.failed,
                latency: &s.latency_ms,
                service: &s.service_time_ms,
                histograms: &s.histograms,
                phases: s.phases_ms.as_ref(),
                stream: s.stream.as_ref(),
            }
        }
        Scope::Group(name) => {
            let g = run.groups.iter().find(|g| &g.name == name)?;
            Scoped {
                requests: g.requests,
                failed: g.failed,
                latency: &g.latency_ms,
                service: &g.service_time_ms,
                histograms: &g.histograms,
                phases: None,
                stream: None,
            }
        }
    };
    match t.metric.quantity {
        Quantity::ErrorRate => {
            (scoped.requests > 0).then(|| scoped.failed as f64 / scoped.requests as f64)
        }
        Quantity::Requests => Some(scoped.requests as f64),
        Quantity::Failed => Some(scoped.failed as f64),
        Quantity::RequestRate => {
            (run.duration_s > 0.0).then(|| scoped.requests as f64 / run.duration_s)
        }
        Quantity::Latency(stat) => stat_of(stat, scoped.latency, &scoped.histograms.latency),
        Quantity::CompensatedLatency(stat) => {
            // From the scope's raw histogram on the run's schedule: every scope the same way.
            let schedule = run.compensation.as_ref()?;
            let raw = decode_histogram(&scoped.histograms.latency)?;
            histogram_stat(
                stat,
                &loadlab_metrics::compensation::compensate(&raw, schedule.interval_us()),
            )
        }
        Quantity::ServiceTime(stat) => {
            stat_of(stat, scoped.service, &scoped.histograms.service_time)
        }
        Quantity::Phase(phase, stat) => stat_of(
            stat,
            scoped.phases?.get(phase)?,
            scoped.histograms.phase(phase),
        ),
        Quantity::StreamTime(time, stat) => stat_of(
            stat,
            scoped.stream?.time(time),
            scoped.histograms.stream(time),
        ),
        Quantity::Stream(figure) => stream_figure(figure, scoped.stream?),
    }
}

/// The percentiles a `LatencySummary` holds, with the quantile each is read at.
const KNOWN_PERCENTILES: [(f64, f64); 5] = [
    (50.0, 0.50),
    (90.0, 0.90),
    (95.0, 0.95),
    (99.0, 0.99),
    (99.9, 0.999),
];

/// A stream figure of a scope (none when it had no streams to divide by).
pub(super) fn stream_figure(figure: StreamFigure, s: &StreamResult) -> Option<f64> {
    Some(match figure {
        StreamFigure::TokensPerS => s.output_tokens_per_s,
        StreamFigure::Goodput => s.goodput_per_s,
        StreamFigure::GoodRatio if s.streams == 0 => return None,
        StreamFigure::GoodRatio => s.good as f64 / s.streams as f64,
        StreamFigure::OutputTokens => s.output_tokens as f64,
        StreamFigure::InputTokens => s.input_tokens as f64,
        StreamFigure::Streams => s.streams as f64,
    })
}

fn stat_of(stat: Stat, s: &LatencySummary, encoded: &str) -> Option<f64> {
    if s.count == 0 {
        return None;
    }
    Some(match stat {
        Stat::Min => s.min,
        Stat::Mean => s.mean,
        Stat::Max => s.max,
        Stat::Percentile(p) => {
            let known = [
                (50.0, s.p50),
                (90.0, s.p90),
                (95.0, s.p95),
                (99.0, s.p99),
                (99.9, s.p999),
                (100.0, s.max),
            ];
            match known.iter().find(|(q, _)| (q - p).abs() < 1e-9) {
                Some((_, v)) => *v,
                // Other percentiles come from the scope's histogram.
                None => LatencySummary::percentile_of(&decode_histogram(encoded)?, p),
            }
        }
    })
}

/// The same statistic as [`stat_of`] reads from a summary, straight from a histogram (a
/// running window's): the same arithmetic, so both give the same value to the last bit.
pub(crate) fn histogram_stat(stat: Stat, h: &LatencyHistogram) -> Option<f64> {
    if h.is_empty() {
        return None;
    }
    let ms = |us: u64| us as f64 / 1000.0;
    Some(match stat {
        Stat::Min => ms(h.min()),
        Stat::Mean => h.mean() / 1000.0,
        Stat::Max => ms(h.max()),
        Stat::Percentile(p) if (p - 100.0).abs() < 1e-9 => ms(h.max()),
        Stat::Percentile(p) => match KNOWN_PERCENTILES.iter().find(|(k, _)| (k - p).abs() < 1e-9) {
            Some((_, q)) => ms(h.value_at_quantile(*q)),
            None => LatencySummary::percentile_of(h, p),
        },
    })
}

/// True when every threshold passed.
pub fn all_passed(results: &[ThresholdResult]) -> bool {
    results.iter().all(|r| r.ok)
}
