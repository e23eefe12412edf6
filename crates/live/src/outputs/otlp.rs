//! The `otlp` output: every interval, one OTLP/HTTP protobuf export
//! (`ExportMetricsServiceRequest`) with the same metrics as `prometheus-rw`, in OpenTelemetry
//! form: cumulative monotonic sums for the counts, a summary for latency (the interval's
//! exact quantiles, cumulative count and sum), gauges for VUs, in-flight, send lag and the
//! plan. Resource attributes `service.name=loadlab` and `loadlab.testid`; every data point
//! also carries `testid` and `scenario`, so receivers that drop resource attributes (as
//! Prometheus does by default) still tell runs apart.

use super::http::Poster;
use super::otlp_proto::*;
use super::snapshot::Snapshot;
use super::{SendError, Sink};
use crate::frame::Quantiles;
use prost::Message;

pub(crate) struct OtlpSink {
    poster: Poster,
}

impl OtlpSink {
    pub fn new(url: &str) -> Self {
        Self {
            poster: Poster::new(url, vec![("Content-Type", "application/x-protobuf")]),
        }
    }
}

impl Sink for OtlpSink {
    fn send(&mut self, snapshot: &Snapshot) -> Result<(), SendError> {
        self.poster.post(&encode(snapshot).encode_to_vec())
    }
}

fn kv(key: &str, value: &str) -> KeyValue {
    KeyValue {
        key: key.to_string(),
        value: Some(AnyValue {
            string_value: Some(value.to_string()),
        }),
    }
}

struct Points<'a> {
    s: &'a Snapshot,
    start_ns: u64,
    at_ns: u64,
}

impl Points<'_> {
    fn attrs(&self, extra: &[(&str, &str)]) -> Vec<KeyValue> {
        let mut a = vec![
            kv("scenario", &self.s.frame.run),
            kv("testid", &self.s.testid),
        ];
        a.extend(extra.iter().map(|(k, v)| kv(k, v)));
        a
    }

    fn number(&self, extra: &[(&str, &str)], value: f64) -> NumberDataPoint {
        NumberDataPoint {
            start_time_unix_nano: self.start_ns,
            time_unix_nano: self.at_ns,
            as_double: Some(value),
            attributes: self.attrs(extra),
        }
    }
}

fn metric(name: &str, description: &str, unit: &str) -> Metric {
    Metric {
        name: name.to_string(),
        description: description.to_string(),
        unit: unit.to_string(),
        ..Metric::default()
    }
}

fn sum(name: &str, description: &str, points: Vec<NumberDataPoint>) -> Metric {
    Metric {
        sum: Some(Sum {
            data_points: points,
            aggregation_temporality: CUMULATIVE,
            is_monotonic: true,
        }),
        ..metric(name, description, "{request}")
    }
}

fn gauge(name: &str, description: &str, unit: &str, points: Vec<NumberDataPoint>) -> Metric {
    Metric {
        gauge: Some(Gauge {
            data_points: points,
        }),
        ..metric(name, description, unit)
    }
}

fn quantile_values(q: &Quantiles) -> Vec<ValueAtQuantile> {
    [(0.5, q.p50), (0.95, q.p95), (0.99, q.p99)]
        .into_iter()
        .filter(|_| q.count > 0)
        .map(|(quantile, ms)| ValueAtQuantile {
            quantile,
            value: ms / 1000.0,
        })
        .collect()
}

/// The export of one interval.
pub fn encode(s: &Snapshot) -> ExportMetricsServiceRequest {
    let p = Points {
        s,
        start_ns: s.start_unix_ms * 1_000_000,
        at_ns: s.frame.unix_ms * 1_000_000,
    };
    let mut metrics = step_metrics(&p);
    metrics.extend(gauges(&p));
    export(&s.testid, metrics)
}

/// The per-step metrics: requests by status, failures by kind, and latency.
fn step_metrics(p: &Points) -> Vec<Metric> {
    let (s, f) = (p.s, &p.s.frame);
    let (mut requests, mut failures, mut latency) = (Vec::new(), Vec::new(), Vec::new());
    for (step, t) in f.steps.iter().zip(&s.totals) {
        for (status, n) in &t.statuses {
            requests.push(p.number(&[("step", &step.name), ("status", status)], *n as f64));
        }
        for (kind, n) in &t.errors {
            failures.push(p.number(&[("step", &step.name), ("kind", kind)], *n as f64));
        }
        latency.push(SummaryDataPoint {
            start_time_unix_nano: p.start_ns,
            time_unix_nano: p.at_ns,
            count: t.latency_count,
            sum: t.latency_sum_s,
            quantile_values: quantile_values(&step.latency_ms),
            attributes: p.attrs(&[("step", &step.name)]),
        });
    }
    vec![
        sum(
            "loadlab.http.requests",
            "Requests ended, by step and status (none: no response).",
            requests,
        ),
        sum(
            "loadlab.http.request.failures",
            "Failed requests, by step and error kind.",
            failures,
        ),
        Metric {
            summary: Some(Summary {
                data_points: latency,
            }),
            ..metric(
                "loadlab.http.request.duration",
                "Request latency: the interval's exact quantiles, cumulative sum and count.",
                "s",
            )
        },
    ]
}

/// The whole run's gauges: VUs, in flight, send lag and (when known) the planned load.
fn gauges(p: &Points) -> Vec<Metric> {
    let f = &p.s.frame;
    let lag = [
        ("0.5", f.lag_ms.p50),
        ("0.95", f.lag_ms.p95),
        ("0.99", f.lag_ms.p99),
    ]
    .into_iter()
    .filter(|_| f.lag_ms.count > 0)
    .map(|(q, ms)| p.number(&[("quantile", q)], ms / 1000.0))
    .collect();
    let mut metrics = vec![
        gauge(
            "loadlab.vus",
            "VUs (closed model) or iterations in flight (open model).",
            "",
            vec![p.number(&[], f.active as f64)],
        ),
        gauge(
            "loadlab.in_flight",
            "Requests in flight.",
            "",
            vec![p.number(&[], f.in_flight as f64)],
        ),
        gauge(
            "loadlab.send_lag",
            "How late requests were sent against the plan: the interval's quantiles.",
            "s",
            lag,
        ),
    ];
    if let (Some(v), Some(unit)) = (f.planned, &f.planned_unit) {
        metrics.push(gauge(
            "loadlab.planned_load",
            "The planned load (unit: vus or arrivals/s).",
            "",
            vec![p.number(&[("unit", unit)], v)],
        ));
    }
    metrics
}

/// The metrics under this tool's resource (named with the run's test id) and scope.
fn export(testid: &str, metrics: Vec<Metric>) -> ExportMetricsServiceRequest {
    ExportMetricsServiceRequest {
        resource_metrics: vec![ResourceMetrics {
            resource: Some(Resource {
                attributes: vec![
                    kv("service.name", "loadlab"),
                    kv("service.version", env!("CARGO_PKG_VERSION")),
                    kv("loadlab.testid", testid),
                ],
            }),
            scope_metrics: vec![ScopeMetrics {
                scope: Some(InstrumentationScope {
                    name: "loadlab".to_string(),
                    version: env!("CARGO_PKG_VERSION").to_string(),
                }),
                metrics,
            }],
        }],
    }
}
