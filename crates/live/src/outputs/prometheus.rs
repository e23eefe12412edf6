//! The `prometheus-rw` output: every interval, one remote-write 1.0 request (protobuf
//! `WriteRequest`, snappy block format) with the run's series at the interval's end. Counters
//! are cumulative since the run's start (so a dropped interval loses no request); latency is a
//! summary: the interval's exact p50/p95/p99 plus cumulative `_sum` and `_count`.
//! Every series carries `testid` and `scenario`.

use super::http::Poster;
use super::prometheus_proto::{
    Label, MetricMetadata, Sample, TimeSeries, WriteRequest, COUNTER, GAUGE, SUMMARY,
};
use super::snapshot::Snapshot;
use super::{SendError, Sink};
use crate::frame::Quantiles;
use prost::Message;

pub(crate) struct PrometheusSink {
    poster: Poster,
}

impl PrometheusSink {
    pub fn new(url: &str) -> Self {
        let headers = vec![
            ("Content-Encoding", "snappy"),
            ("Content-Type", "application/x-protobuf"),
            ("X-Prometheus-Remote-Write-Version", "0.1.0"),
        ];
        Self {
            poster: Poster::new(url, headers),
        }
    }
}

impl Sink for PrometheusSink {
    fn send(&mut self, snapshot: &Snapshot) -> Result<(), SendError> {
        let body = compress(&encode(snapshot).encode_to_vec())?;
        self.poster.post(&body)
    }
}

/// Snappy block format, as remote write wants it (not the framed stream format).
pub fn compress(bytes: &[u8]) -> Result<Vec<u8>, SendError> {
    snap::raw::Encoder::new()
        .compress_vec(bytes)
        .map_err(|e| SendError::Io(std::io::Error::other(e)))
}

/// Reads one quantile of a series.
type Pick = fn(&Quantiles) -> f64;

/// The quantiles a summary carries.
const QUANTILES: [(&str, Pick); 3] = [("0.5", |q| q.p50), ("0.95", |q| q.p95), ("0.99", |q| q.p99)];

/// The request of one interval.
pub fn encode(s: &Snapshot) -> WriteRequest {
    let mut w = Series::new(s);
    let f = &s.frame;
    for (step, t) in f.steps.iter().zip(&s.totals) {
        let st = [("step", step.name.as_str())];
        for (status, n) in &t.statuses {
            w.add(
                "loadlab_http_requests_total",
                &[("step", &step.name), ("status", status)],
                *n as f64,
            );
        }
        for (kind, n) in &t.errors {
            w.add(
                "loadlab_http_request_failures_total",
                &[("step", &step.name), ("kind", kind)],
                *n as f64,
            );
        }
        w.quantiles(
            "loadlab_http_request_duration_seconds",
            &st,
            &step.latency_ms,
        );
        w.add(
            "loadlab_http_request_duration_seconds_sum",
            &st,
            t.latency_sum_s,
        );
        w.add(
            "loadlab_http_request_duration_seconds_count",
            &st,
            t.latency_count as f64,
        );
    }
    w.add("loadlab_vus", &[], f.active as f64);
    w.add("loadlab_in_flight", &[], f.in_flight as f64);
    w.quantiles("loadlab_send_lag_seconds", &[], &f.lag_ms);
    if let (Some(p), Some(unit)) = (f.planned, &f.planned_unit) {
        w.add("loadlab_planned_load", &[("unit", unit)], p);
    }
    WriteRequest {
        timeseries: w.series,
        metadata: metadata(),
    }
}

struct Series<'a> {
    common: [(&'static str, &'a str); 2],
    at_ms: i64,
    series: Vec<TimeSeries>,
}

impl<'a> Series<'a> {
    fn new(s: &'a Snapshot) -> Self {
        Self {
            common: [("scenario", &s.frame.run), ("testid", &s.testid)],
            at_ms: s.frame.unix_ms as i64,
            series: Vec::new(),
        }
    }

    fn add(&mut self, name: &str, labels: &[(&str, &str)], value: f64) {
        let mut all: Vec<Label> = std::iter::once(("__name__", name))
            .chain(self.common.iter().copied())
            .chain(labels.iter().copied())
            .map(|(n, v)| Label {
                name: n.to_string(),
                value: v.to_string(),
            })
            .collect();
        all.sort_by(|a, b| a.name.cmp(&b.name));
        self.series.push(TimeSeries {
            labels: all,
            samples: vec![Sample {
                value,
                timestamp: self.at_ms,
            }],
        });
    }

    /// p50/p95/p99 in seconds, when the interval had values.
    fn quantiles(&mut self, name: &str, labels: &[(&str, &str)], q: &Quantiles) {
        if q.count == 0 {
            return;
        }
        for (quantile, get) in QUANTILES {
            let mut l = labels.to_vec();
            l.push(("quantile", quantile));
            self.add(name, &l, get(q) / 1000.0);
        }
    }
}

fn metadata() -> Vec<MetricMetadata> {
    let m = |t, name: &str, help: &str, unit: &str| MetricMetadata {
        r#type: t,
        metric_family_name: name.to_string(),
        help: help.to_string(),
        unit: unit.to_string(),
    };
    vec![
        m(
            COUNTER,
            "loadlab_http_requests_total",
            "Requests ended, by step and status (none: no response).",
            "",
        ),
        m(
            COUNTER,
            "loadlab_http_request_failures_total",
            "Failed requests, by step and error kind.",
            "",
        ),
        m(
            SUMMARY,
            "loadlab_http_request_duration_seconds",
            "Request latency: the interval's exact quantiles, cumulative sum and count.",
            "seconds",
        ),
        m(
            GAUGE,
            "loadlab_vus",
            "VUs (closed model) or iterations in flight (open model).",
            "",
        ),
        m(GAUGE, "loadlab_in_flight", "Requests in flight.", ""),
        m(
            SUMMARY,
            "loadlab_send_lag_seconds",
            "How late requests were sent against the plan, the interval's quantiles.",
            "seconds",
        ),
        m(
            GAUGE,
            "loadlab_planned_load",
            "The planned load (unit: vus or arrivals/s).",
            "",
        ),
    ]
}
