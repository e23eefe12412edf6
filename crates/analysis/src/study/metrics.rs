//! One value per metric per run, and the statistics of a metric across runs.

use super::{LoadKind, LoadLevel, MetricStats, VariantStats};
use crate::stats;
use loadlab_metrics::result::LatencySummary;
use loadlab_metrics::{LatencyStat, MetricId, MetricNameError, Quantity, RunResult};
use std::collections::{BTreeMap, BTreeSet};

/// Fewest runs for a trend test: with 5 the exact two-sided p can reach 2/5! = 0.017.
const DRIFT_MIN_RUNS: usize = 5;

/// Metrics compared by default (Holm's family is drawn from these).
pub fn default_compare_metrics() -> Vec<MetricId> {
    vec![
        MetricId::run(Quantity::Throughput),
        MetricId::run(Quantity::ErrorRate),
        MetricId::latency(LatencyStat::P50),
        MetricId::latency(LatencyStat::P95),
        MetricId::latency(LatencyStat::P99),
    ]
}

/// The stream metrics compared by default when every variant streamed: TTFT, TPOT and ITL
/// (p50, p95), output tokens/s and goodput.
fn stream_compare_metrics() -> Vec<MetricId> {
    use loadlab_metrics::StreamTime;
    let mut m = Vec::new();
    for t in [StreamTime::Ttft, StreamTime::Tpot, StreamTime::Itl] {
        for s in [LatencyStat::P50, LatencyStat::P95] {
            m.push(MetricId::run(Quantity::Stream(t, s)));
        }
    }
    m.extend([
        MetricId::run(Quantity::TokensPerS),
        MetricId::run(Quantity::Goodput),
    ]);
    m
}

/// The default metrics for these variants: [`default_compare_metrics`], and the stream
/// metrics when every variant measured them.
pub fn default_metrics_for(variants: &[&VariantStats]) -> Vec<MetricId> {
    let mut m = default_compare_metrics();
    m.extend(
        stream_compare_metrics().into_iter().filter(|id| {
            !variants.is_empty() && variants.iter().all(|v| v.metrics.contains_key(id))
        }),
    );
    m
}

/// A stream scope's TTFT, TPOT, ITL and E2E statistics, output tokens/s and goodput.
fn stream_metrics(
    out: &mut BTreeMap<MetricId, f64>,
    id: impl Fn(Quantity) -> MetricId,
    s: &loadlab_metrics::StreamResult,
) {
    for t in loadlab_metrics::StreamTime::ALL {
        let l = s.time(t);
        if l.count > 0 {
            for stat in LatencyStat::ALL {
                out.insert(id(Quantity::Stream(t, stat)), latency_value(l, stat));
            }
        }
    }
    out.insert(id(Quantity::TokensPerS), s.output_tokens_per_s);
    out.insert(id(Quantity::Goodput), s.goodput_per_s);
}

fn latency_value(l: &LatencySummary, stat: LatencyStat) -> f64 {
    match stat {
        LatencyStat::Min => l.min,
        LatencyStat::Mean => l.mean,
        LatencyStat::P50 => l.p50,
        LatencyStat::P90 => l.p90,
        LatencyStat::P95 => l.p95,
        LatencyStat::P99 => l.p99,
        LatencyStat::P999 => l.p999,
        LatencyStat::Max => l.max,
    }
}

/// Requests, errors (rate and count), throughput and latency of one scope of a run.
fn scope_metrics(
    out: &mut BTreeMap<MetricId, f64>,
    id: impl Fn(Quantity) -> MetricId,
    requests: u64,
    failed: u64,
    seconds: f64,
    latency: &LatencySummary,
    compensated: Option<&LatencySummary>,
) {
    out.insert(id(Quantity::Requests), requests as f64);
    if seconds > 0.0 {
        out.insert(id(Quantity::Throughput), requests as f64 / seconds);
    }
    out.insert(
        id(Quantity::ErrorRate),
        if requests > 0 {
            failed as f64 / requests as f64
        } else {
            0.0
        },
    );
    out.insert(id(Quantity::Errors), failed as f64);
    if latency.count > 0 {
        for stat in LatencyStat::ALL {
            out.insert(id(Quantity::Latency(stat)), latency_value(latency, stat));
        }
    }
    if let Some(c) = compensated.filter(|c| c.count > 0) {
        for stat in LatencyStat::ALL {
            out.insert(
                id(Quantity::CompensatedLatency(stat)),
                latency_value(c, stat),
            );
        }
    }
}

/// One value per metric for a run: for the run, each group and each step, requests (count
/// and rate), errors (rate = failed / total, and count) and latency (min, mean, p50, p90,
/// p95, p99, p99.9, max); iterations for the whole run. Latency is absent from a scope with
/// no completed request.
pub fn run_metrics(run: &RunResult) -> BTreeMap<MetricId, f64> {
    let mut m = BTreeMap::new();
    // An open (or burst) model's latency is measured from each request's intended send time:
    // it is its own compensated figure, so a study compared on compensated latency
    // (`study.compare_on`) reads it for them too.
    let schedule_kept = run.load.model != loadlab_metrics::LoadModel::Closed;
    let compensated =
        |raw: &'_ LatencySummary, c: Option<&'_ LatencySummary>| -> Option<LatencySummary> {
            c.copied().or_else(|| schedule_kept.then_some(*raw))
        };
    scope_metrics(
        &mut m,
        MetricId::run,
        run.requests.total,
        run.requests.failed,
        run.duration_s,
        &run.latency_ms,
        compensated(&run.latency_ms, run.latency_compensated_ms.as_ref()).as_ref(),
    );
    // The run's own rate (what the recorder measured), not recomputed.
    m.insert(MetricId::run(Quantity::Throughput), run.requests.rate);
    m.insert(
        MetricId::run(Quantity::Iterations),
        run.iterations.completed as f64,
    );
    if let Some(s) = &run.stream {
        stream_metrics(&mut m, MetricId::run, s);
    }
    for g in &run.groups {
        scope_metrics(
            &mut m,
            |q| MetricId::group(&g.name, q),
            g.requests,
            g.failed,
            run.duration_s,
            &g.latency_ms,
            compensated(&g.latency_ms, g.latency_compensated_ms.as_ref()).as_ref(),
        );
    }
    for s in &run.steps {
        scope_metrics(
            &mut m,
            |q| MetricId::step(&s.name, q),
            s.requests,
            s.failed,
            run.duration_s,
            &s.latency_ms,
            compensated(&s.latency_ms, s.latency_compensated_ms.as_ref()).as_ref(),
        );
        if let Some(st) = &s.stream {
            stream_metrics(&mut m, |q| MetricId::step(&s.name, q), st);
        }
    }
    if let Some(resources) = &run.resources {
        for (series, summary) in resources.all_series() {
            if compared_resource(&series) && summary.samples > 0 {
                m.insert(MetricId::resource(&series, false), summary.mean);
                m.insert(MetricId::resource(&series, true), summary.max);
            }
        }
    }
    m
}

/// Resource series that are one value per run worth comparing (the CPU and memory of the
/// host, the generator and each monitored process or cgroup, and every chosen Prometheus
/// series); per-core, per-interface and limit series stay in the run.
fn compared_resource(series: &str) -> bool {
    const HOST: [&str; 9] = [
        "host.cpu_percent",
        "host.cpu.user_percent",
        "host.cpu.system_percent",
        "host.cpu.iowait_percent",
        "host.cpu.steal_percent",
        "host.pressure.cpu_some_percent",
        "host.memory.used_percent",
        "host.memory.available_bytes",
        "host.load1",
    ];
    const PROCESS: [&str; 5] = [
        "cpu_percent",
        "max_thread_cpu_percent",
        "rss_bytes",
        "threads",
        "open_files",
    ];
    const CGROUP: [&str; 4] = [
        "cpu_percent",
        "cpu_throttled_percent",
        "memory_bytes",
        "memory_peak_bytes",
    ];
    let last = |s: &str| s.rsplit('.').next().unwrap_or("").to_string();
    // `….includes_generator` flags an in-process source for the charts; it is no measurement.
    if series.ends_with(".includes_generator") {
        return false;
    }
    if HOST.contains(&series) || series.starts_with("prometheus.") {
        return true;
    }
    if let Some(rest) = series.strip_prefix("generator.") {
        return matches!(rest, "cpu_percent" | "rss_bytes");
    }
    if series.starts_with("processes.") {
        return PROCESS.contains(&last(series).as_str());
    }
    if series.starts_with("cgroups.") {
        return CGROUP.contains(&last(series).as_str());
    }
    false
}

/// Offered load of a run: `vus` (closed model) or peak `rate` (open model).
pub fn load_level(run: &RunResult) -> Option<LoadLevel> {
    if let Some(v) = run.load.max_vus {
        return Some(LoadLevel {
            kind: LoadKind::Vus,
            value: f64::from(v),
        });
    }
    run.load.peak_rate.map(|r| LoadLevel {
        kind: LoadKind::Rate,
        value: r,
    })
}

/// Statistics of one metric across runs (outliers and trend included; run ids unknown).
/// With one run there is no spread: CIs, SD and CV are `None`, never zero-width.
pub fn metric_stats(values: &[f64]) -> Option<MetricStats> {
    let s = stats::describe(values).ok()?;
    let spread = s.n >= 2;
    let outliers = stats::tukey_outliers(values)
        .into_iter()
        .map(|(index, kind, side)| super::OutlierRun {
            index,
            run: None,
            value: values[index],
            kind,
            side,
        })
        .collect();
    let trend = if s.n >= DRIFT_MIN_RUNS {
        stats::kendall_trend(values).ok()
    } else {
        None
    };
    Some(MetricStats {
        n: s.n,
        values: s.values.clone(),
        median: s.median,
        median_ci: s.median_ci.map(|(a, b)| [a, b]),
        mean: s.mean,
        mean_ci: spread.then_some([s.mean_ci.0, s.mean_ci.1]),
        sd: spread.then_some(s.sd),
        cv: (spread && s.cv.is_finite()).then_some(s.cv),
        min: s.min,
        max: s.max,
        outliers,
        trend,
    })
}

/// A metric name that names nothing the runs measured.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("unknown metric `{name}`{reason}")]
pub struct UnknownMetric {
    pub name: String,
    /// Why (bad spelling, or not measured by these runs).
    pub reason: String,
    /// Every metric the runs have, in table order.
    pub valid: Vec<MetricId>,
}

/// Every metric some variant has, in table order (run, then groups, then steps).
pub fn available_metrics(variants: &[&VariantStats]) -> Vec<MetricId> {
    let set: BTreeSet<&MetricId> = variants.iter().flat_map(|v| v.metrics.keys()).collect();
    set.into_iter().cloned().collect()
}

/// Reads metric names (`step.signin.latency.p99`, `latency_ms.p95`...) and checks each is
/// measured by the given variants.
pub fn parse_metrics(
    names: &[String],
    variants: &[&VariantStats],
) -> Result<Vec<MetricId>, UnknownMetric> {
    let valid = available_metrics(variants);
    names
        .iter()
        .map(|name| {
            let id: MetricId = name.parse().map_err(|e| UnknownMetric {
                name: name.clone(),
                reason: match e {
                    MetricNameError::Unknown(_) => String::new(),
                    other => format!(" ({other})"),
                },
                valid: valid.clone(),
            })?;
            if !valid.contains(&id) {
                return Err(UnknownMetric {
                    name: name.clone(),
                    reason: " (the runs did not measure it)".into(),
                    valid: valid.clone(),
                });
            }
            Ok(id)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use loadlab_metrics::LoadModel;

    /// An open model's latency is its own compensated figure; a closed model's is only what
    /// its compensation made, never the raw one copied.
    #[test]
    fn compensated_latency_is_an_open_models_own_and_a_closed_models_computed() {
        let p95 = MetricId::run(Quantity::CompensatedLatency(LatencyStat::P95));
        let mut open = RunResult::default();
        open.load.model = LoadModel::Open;
        open.latency_ms = LatencySummary {
            count: 10,
            p95: 5.0,
            ..Default::default()
        };
        assert_eq!(run_metrics(&open).get(&p95), Some(&5.0));
        let mut closed = open.clone();
        closed.load.model = LoadModel::Closed;
        assert_eq!(run_metrics(&closed).get(&p95), None);
        closed.latency_compensated_ms = Some(LatencySummary {
            count: 30,
            p95: 50.0,
            ..Default::default()
        });
        assert_eq!(run_metrics(&closed).get(&p95), Some(&50.0));
    }
}
