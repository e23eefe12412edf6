//! The live frame: one interval of a run as the dashboard's `/events` stream and the `json`
//! output publish it (its JSON form is documented in docs/live.md), built from the record's
//! interval with exact histogram percentiles.

use loadlab_metrics::result::PlannedLoad;
use loadlab_metrics::{ErrorKind, LatencyHistogram, LazyHistogram};
use loadlab_record::{IntervalRecord, RecordMeta};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Percentiles of one series over one interval, in milliseconds (`count` values).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Quantiles {
    pub count: u64,
    pub p50: f64,
    pub p95: f64,
    pub p99: f64,
    pub max: f64,
}

impl Quantiles {
    pub fn of(h: &LazyHistogram) -> Self {
        h.get().map(Self::of_histogram).unwrap_or_default()
    }

    fn of_histogram(h: &LatencyHistogram) -> Self {
        let ms = |us: u64| us as f64 / 1000.0;
        Self {
            count: h.len(),
            p50: ms(h.value_at_quantile(0.50)),
            p95: ms(h.value_at_quantile(0.95)),
            p99: ms(h.value_at_quantile(0.99)),
            max: ms(h.max()),
        }
    }
}

/// One request step's share of an interval.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StepFrame {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// Requests that ended in the interval, and of those the failed ones.
    pub requests: u64,
    pub failed: u64,
    /// Requests per second over the interval's length.
    pub rate: f64,
    pub bytes_sent: u64,
    pub bytes_received: u64,
    /// Responses by status code (`"200"`).
    pub statuses: BTreeMap<String, u64>,
    /// Failures by error kind (`"timeout"`, `"status_5xx"`…), only kinds that occurred.
    pub errors: BTreeMap<String, u64>,
    pub latency_ms: Quantiles,
    pub service_time_ms: Quantiles,
    pub lag_ms: Quantiles,
}

/// One interval of the run (`/events` data, a `json` output line).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LiveFrame {
    /// The scenario's name.
    pub run: String,
    /// 0, 1, 2… in time order.
    pub index: u32,
    /// Start of the interval, seconds since the plan's start; its length.
    pub t_s: f64,
    pub length_s: f64,
    /// Wall clock at the interval's end, milliseconds since the Unix epoch.
    pub unix_ms: u64,
    /// Inside the warm-up: shown, but kept out of every statistic.
    pub warmup: bool,
    /// The planned load at the interval's end: VUs (`planned_unit: "vus"`) or arrivals per
    /// second (`"arrivals/s"`); absent for a burst.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub planned: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub planned_unit: Option<String>,
    /// Every step together.
    pub requests: u64,
    pub failed: u64,
    pub rate: f64,
    pub statuses: BTreeMap<String, u64>,
    pub errors: BTreeMap<String, u64>,
    pub latency_ms: Quantiles,
    pub service_time_ms: Quantiles,
    pub lag_ms: Quantiles,
    /// VUs (closed model) or iterations in flight (open model) at the interval's end.
    pub active: u64,
    /// Requests in flight at the interval's end.
    pub in_flight: u64,
    /// Arrivals that could not start (open model) in the interval.
    pub dropped_iterations: u64,
    /// Since the run's start (warm-up included): requests and failures.
    pub total_requests: u64,
    pub total_failed: u64,
    pub steps: Vec<StepFrame>,
    /// The resource monitor's last sample in the interval (`generator.cpu_percent`,
    /// `host.cpu_percent`, `processes.target.cpu_percent`…), when one was taken.
    pub resources: BTreeMap<String, f64>,
}

/// Builds the frames of one run, keeping its running totals.
#[derive(Debug, Clone, Default)]
pub struct FrameBuilder {
    run: String,
    steps: Vec<(String, Option<String>)>,
    planned: Option<PlannedLoad>,
    start_unix_s: f64,
    total_requests: u64,
    total_failed: u64,
}

impl FrameBuilder {
    pub fn new(meta: &RecordMeta) -> Self {
        let steps = meta
            .steps
            .iter()
            .map(|s| (s.name.clone(), s.group.clone()))
            .collect();
        Self::from_parts(
            &meta.name,
            steps,
            meta.load.planned.clone(),
            meta.start_unix_s,
        )
    }

    /// A builder for run `run` with these steps (name, group) and plan, started at
    /// `start_unix_s`.
    pub fn from_parts(
        run: &str,
        steps: Vec<(String, Option<String>)>,
        planned: Option<PlannedLoad>,
        start_unix_s: f64,
    ) -> Self {
        Self {
            run: run.to_string(),
            steps,
            planned,
            start_unix_s,
            total_requests: 0,
            total_failed: 0,
        }
    }

    /// The frame of the next interval (intervals must come in order, each once).
    pub fn frame(&mut self, record: &IntervalRecord) -> LiveFrame {
        let d = &record.delta;
        let length = record.length_s.max(1e-3);
        self.total_requests += d.requests();
        self.total_failed += d.failed();
        let steps: Vec<StepFrame> = d
            .steps
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let (name, group) = self.steps.get(i).cloned().unwrap_or_default();
                StepFrame {
                    name,
                    group,
                    requests: s.requests,
                    failed: s.failed,
                    rate: s.requests as f64 / length,
                    bytes_sent: s.bytes_sent,
                    bytes_received: s.bytes_received,
                    statuses: statuses(&s.statuses),
                    errors: errors(&s.errors),
                    latency_ms: Quantiles::of(&s.latency),
                    service_time_ms: Quantiles::of(&s.service),
                    lag_ms: Quantiles::of(&s.lag),
                }
            })
            .collect();
        let end_s = record.start_s + record.length_s;
        let (planned, planned_unit) = self.planned_at(end_s);
        LiveFrame {
            run: self.run.clone(),
            index: record.index,
            t_s: record.start_s,
            length_s: record.length_s,
            unix_ms: ((self.start_unix_s + end_s) * 1000.0).round() as u64,
            warmup: record.warmup,
            planned,
            planned_unit,
            requests: d.requests(),
            failed: d.failed(),
            rate: d.requests() as f64 / length,
            statuses: sum_maps(steps.iter().map(|s| &s.statuses)),
            errors: sum_maps(steps.iter().map(|s| &s.errors)),
            latency_ms: Quantiles::of(&d.latency()),
            service_time_ms: Quantiles::of(&merged(d.steps.iter().map(|s| &s.service))),
            lag_ms: Quantiles::of(&merged(d.steps.iter().map(|s| &s.lag))),
            active: d.active,
            in_flight: d.in_flight,
            dropped_iterations: d.iterations_dropped,
            total_requests: self.total_requests,
            total_failed: self.total_failed,
            steps,
            resources: record
                .resources
                .last()
                .map(|s| s.sample.values.clone())
                .unwrap_or_default(),
        }
    }

    /// The planned load at `t_s`, interpolated between the plan's points (ramps are linear).
    fn planned_at(&self, t_s: f64) -> (Option<f64>, Option<String>) {
        let Some(plan) = &self.planned else {
            return (None, None);
        };
        let unit = if plan.vus { "vus" } else { "arrivals/s" };
        (planned_value(&plan.points, t_s), Some(unit.to_string()))
    }
}

/// The value of a piecewise-linear plan at `t` (the last point's value after it).
pub fn planned_value(points: &[(f64, f64)], t: f64) -> Option<f64> {
    let first = points.first()?;
    if t <= first.0 {
        return Some(first.1);
    }
    for pair in points.windows(2) {
        let ((t0, v0), (t1, v1)) = (pair[0], pair[1]);
        if t <= t1 {
            if t1 <= t0 {
                return Some(v1);
            }
            return Some(v0 + (v1 - v0) * (t - t0) / (t1 - t0));
        }
    }
    points.last().map(|p| p.1)
}

fn statuses(list: &[(u16, u64)]) -> BTreeMap<String, u64> {
    list.iter().map(|(s, n)| (s.to_string(), *n)).collect()
}

fn errors(counts: &[u64; ErrorKind::COUNT]) -> BTreeMap<String, u64> {
    ErrorKind::ALL
        .iter()
        .zip(counts)
        .filter(|(_, n)| **n > 0)
        .map(|(k, n)| (k.as_str().to_string(), *n))
        .collect()
}

fn sum_maps<'a>(maps: impl Iterator<Item = &'a BTreeMap<String, u64>>) -> BTreeMap<String, u64> {
    let mut sum = BTreeMap::new();
    for m in maps {
        for (k, v) in m {
            *sum.entry(k.clone()).or_insert(0) += v;
        }
    }
    sum
}

fn merged<'a>(hs: impl Iterator<Item = &'a LazyHistogram>) -> LazyHistogram {
    let mut all = LazyHistogram::new();
    for h in hs {
        all.add(h);
    }
    all
}

#[cfg(test)]
mod tests;
