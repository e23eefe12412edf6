//! A realistic hand-built run result shared by the summary and schema tests.

#![allow(dead_code)]

use loadlab_metrics::result::{
    encode_histogram, GroupResult, Histograms, IntervalLatency, IntervalStats, Iterations,
    LagSummary, LatencySummary, LoadInfo, Requests, StepResult, ThresholdResult,
};
use loadlab_metrics::{ErrorKind, RunResult};
use std::collections::BTreeMap;

#[allow(clippy::too_many_arguments)]
pub fn lat(
    min: f64,
    mean: f64,
    p50: f64,
    p90: f64,
    p95: f64,
    p99: f64,
    p999: f64,
    max: f64,
) -> LatencySummary {
    LatencySummary {
        count: 1,
        min,
        mean,
        stdev: ((max - min) / 6.0 * 100.0).round() / 100.0,
        p50,
        p90,
        p95,
        p99,
        p999,
        max,
    }
}

fn with_count(mut l: LatencySummary, count: u64) -> LatencySummary {
    l.count = count;
    l
}

fn map<V: Clone>(entries: &[(&str, V)]) -> BTreeMap<String, V> {
    entries
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect()
}

/// Where the sample's service time went: 50 connections (one per VU), over TLS.
pub fn phases() -> loadlab_metrics::PhaseSummary {
    loadlab_metrics::PhaseSummary {
        connect: Some(with_count(
            lat(0.05, 0.09, 0.08, 0.12, 0.15, 0.3, 0.3, 0.31),
            50,
        )),
        tls_handshake: Some(with_count(lat(1.1, 1.6, 1.5, 2.1, 2.4, 3.0, 3.0, 3.2), 50)),
        waiting: Some(with_count(
            lat(0.9, 3.2, 2.7, 4.9, 6.8, 11.6, 29.0, 44.0),
            12_000,
        )),
        receiving: Some(with_count(
            lat(0.01, 0.05, 0.03, 0.08, 0.1, 0.4, 0.9, 1.2),
            12_000,
        )),
    }
}

/// A 60 s closed-model checkout run with some 5xx and timeouts, two groups and three thresholds.
pub fn sample() -> RunResult {
    let mut h = loadlab_metrics::new_histogram();
    for us in [1_020u64, 2_900, 3_100, 5_100, 7_000, 12_000, 30_000, 45_000] {
        h.record(us).unwrap();
    }
    let encoded = encode_histogram(&h);
    let hint = |k: ErrorKind| (k.as_str(), k.hint().to_string());
    RunResult {
        schema: loadlab_metrics::result::SCHEMA.to_string(),
        tool_version: "0.1.0".to_string(),
        name: "checkout".to_string(),
        scenario_file: Some("scenarios/checkout.yaml".to_string()),
        target: Some("http://localhost:8080".to_string()),
        started_at: "2026-11-22T07:30:00Z".to_string(),
        valid: true,
        interrupted: false,
        duration_s: 60.0,
        warmup_s: 10.0,
        load: LoadInfo {
            model: loadlab_metrics::LoadModel::Closed,
            planned_duration_s: 70.0,
            max_vus: Some(50),
            peak_rate: None,
            planned_arrivals: None,
            max_in_flight: None,
            count: None,
            ..Default::default()
        },
        requests: Requests {
            total: 12_000,
            ok: 11_880,
            failed: 120,
            rate: 200.0,
            warmup: 1_500,
            ..Default::default()
        },
        latency_ms: with_count(lat(1.02, 3.4, 2.9, 5.1, 7.0, 12.0, 30.0, 45.0), 12_000),
        service_time_ms: with_count(lat(0.98, 3.1, 2.7, 4.8, 6.5, 11.2, 28.0, 44.1), 12_000),
        lag_ms: LagSummary::default(),
        errors: map(&[("http_5xx", 100u64), ("timeout", 20)]),
        error_hints: map(&[hint(ErrorKind::Http5xx), hint(ErrorKind::Timeout)]),
        error_examples: map(&[("http_5xx", "503 Service Unavailable".to_string())]),
        status_codes: map(&[("200", 11_880u64), ("503", 100)]),
        iterations: Iterations {
            completed: 4_000,
            warmup: 0,
            dropped: 0,
            delayed_by_max_in_flight: 0,
            duration_ms: Some(with_count(
                lat(6.1, 11.0, 9.8, 15.2, 19.9, 31.0, 60.0, 92.0),
                4_000,
            )),
        },
        vus_max: Some(50),
        phases_ms: Some(phases()),
        bytes: loadlab_metrics::result::Bytes::over(1_560_000, 36_960_000, 60.0),
        steps: sample_steps(),
        groups: sample_groups(),
        thresholds: sample_thresholds(),
        generator: loadlab_metrics::result::Generator {
            cpu_percent: 42.5,
            cpu_seconds: 59.5,
            cores: 2,
            threads: 2,
            saturated: false,
            scheduler_lag_ms_p99: 0.45,
            batch_window_ms: None,
            reads_at_wakeups: false,
            max_rss_bytes: 48 * 1024 * 1024,
            ..Default::default()
        },
        intervals: sample_intervals(),
        histograms: Histograms {
            latency: encoded.clone(),
            service_time: encoded,
            ..Default::default()
        },
        environment: None,
        ..Default::default()
    }
}

/// Three steps in two groups: one with timeouts, one with 5xx.
fn sample_steps() -> Vec<StepResult> {
    vec![
        StepResult {
            name: "GET /".to_string(),
            group: Some("browse".to_string()),
            requests: 4_000,
            failed: 0,
            errors: BTreeMap::new(),
            status_codes: map(&[("200", 4_000u64)]),
            latency_ms: with_count(lat(1.02, 2.1, 1.9, 2.8, 3.2, 4.4, 9.0, 12.5), 4_000),
            service_time_ms: with_count(lat(0.98, 2.0, 1.8, 2.7, 3.1, 4.2, 8.8, 12.1), 4_000),
            phases_ms: Some(phases()),
            checks: Vec::new(),
            ..Default::default()
        },
        StepResult {
            name: "GET /api/v1/products/{id}/recommendations/personalised".to_string(),
            group: Some("browse".to_string()),
            requests: 4_000,
            failed: 20,
            errors: map(&[("timeout", 20u64)]),
            status_codes: map(&[("200", 3_980u64)]),
            latency_ms: with_count(lat(2.0, 4.0, 3.5, 6.0, 8.1, 14.0, 31.0, 45.0), 4_000),
            service_time_ms: with_count(lat(1.9, 3.8, 3.3, 5.7, 7.7, 13.1, 29.0, 44.1), 4_000),
            checks: Vec::new(),
            ..Default::default()
        },
        StepResult {
            name: "POST /cart".to_string(),
            group: Some("buy".to_string()),
            requests: 4_000,
            failed: 100,
            errors: map(&[("http_5xx", 100u64)]),
            status_codes: map(&[("200", 3_900u64), ("503", 100)]),
            latency_ms: with_count(lat(1.5, 4.1, 3.6, 6.2, 8.0, 12.3, 25.0, 40.0), 4_000),
            service_time_ms: with_count(lat(1.4, 3.9, 3.4, 5.9, 7.6, 11.8, 24.0, 39.0), 4_000),
            checks: Vec::new(),
            ..Default::default()
        },
    ]
}

/// The two groups of the steps.
fn sample_groups() -> Vec<GroupResult> {
    vec![
        GroupResult {
            name: "browse".to_string(),
            requests: 8_000,
            failed: 20,
            latency_ms: with_count(lat(1.02, 3.0, 2.6, 4.9, 6.8, 11.0, 29.0, 45.0), 8_000),
            service_time_ms: with_count(lat(0.98, 2.9, 2.5, 4.6, 6.3, 10.4, 27.0, 44.1), 8_000),
            ..Default::default()
        },
        GroupResult {
            name: "buy".to_string(),
            requests: 4_000,
            failed: 100,
            latency_ms: with_count(lat(1.5, 4.1, 3.6, 6.2, 8.0, 12.3, 25.0, 40.0), 4_000),
            service_time_ms: with_count(lat(1.4, 3.9, 3.4, 5.9, 7.6, 11.8, 24.0, 39.0), 4_000),
            ..Default::default()
        },
    ]
}

/// Two thresholds met, one missed and one without data.
fn sample_thresholds() -> Vec<ThresholdResult> {
    vec![
        ThresholdResult {
            expr: "latency.p95 < 200ms".to_string(),
            actual: Some(7.0),
            ok: true,
        },
        ThresholdResult {
            expr: "http.errors < 0.5%".to_string(),
            actual: Some(0.01),
            ok: false,
        },
        ThresholdResult {
            expr: "requests.rate > 100".to_string(),
            actual: Some(200.0),
            ok: true,
        },
        ThresholdResult {
            expr: "step.login.latency.p99 < 1s".to_string(),
            actual: None,
            ok: false,
        },
    ]
}

/// A warm-up slice and a measured one.
fn sample_intervals() -> Vec<IntervalStats> {
    vec![
        IntervalStats {
            t: 0.0,
            warmup: true,
            requests: 150,
            failed: 0,
            rate: 150.0,
            latency_ms: IntervalLatency {
                p50: 2.5,
                p95: 6.0,
                p99: 10.0,
                max: 20.0,
            },
            active: 50,
            ..Default::default()
        },
        IntervalStats {
            t: 10.0,
            warmup: false,
            requests: 200,
            failed: 2,
            rate: 200.0,
            latency_ms: IntervalLatency {
                p50: 2.9,
                p95: 7.0,
                p99: 12.0,
                max: 45.0,
            },
            active: 50,
            ..Default::default()
        },
    ]
}

/// The same run under the open model, invalid and interrupted, with a saturated generator.
pub fn sample_open_invalid() -> RunResult {
    let mut r = sample();
    r.load = LoadInfo {
        model: loadlab_metrics::LoadModel::Open,
        planned_duration_s: 70.0,
        max_vus: None,
        peak_rate: Some(200.0),
        planned_arrivals: Some(14_000.0),
        max_in_flight: Some(1_000),
        count: None,
        ..Default::default()
    };
    r.lag_ms = LagSummary {
        p50: 0.12,
        p99: 1.5,
        max: 4.0,
    };
    r.iterations.dropped = 12;
    r.iterations.delayed_by_max_in_flight = 42;
    r.valid = false;
    r.validity = loadlab_metrics::Validity {
        reasons: vec![
            loadlab_metrics::InvalidReason::new(
                loadlab_metrics::InvalidKind::GeneratorSaturated,
                "the load generator was saturated (cpu 97% of 2 cores)",
            ),
            loadlab_metrics::InvalidReason::new(
                loadlab_metrics::InvalidKind::SchedulerLate,
                "send lag p99 1.50ms exceeds 1ms",
            ),
        ],
    };
    r.interrupted = true;
    r.generator.cpu_percent = 97.0;
    r.generator.saturated = true;
    r
}
