//! A variant's runs summarised: per step and group metrics, n = 1 without CIs, outlier runs
//! marked with their ids, drift over run order, metric names read and checked.

use loadlab_analysis::stats::{OutlierKind, OutlierSide};
use loadlab_analysis::study::{
    parse_metrics, summarize_variant, RunSample, TrendDirection, VariantStats,
};
use loadlab_metrics::{LatencyStat, MetricId, Quantity, RunResult};
use serde_json::json;

fn latency(p50: f64, p95: f64) -> serde_json::Value {
    json!({"count": 1000, "min": p50 / 4.0, "mean": p50 * 1.1, "stdev": 1.0, "p50": p50,
           "p90": p95 * 0.9, "p95": p95, "p99": p95 * 1.5, "p999": p95 * 2.0, "max": p95 * 3.0})
}

/// A 10 s run with one step `signin` in group `auth`.
fn run(rate: f64, p95: f64, failed: u64) -> RunResult {
    let total = (rate * 10.0) as u64;
    serde_json::from_value(json!({
        "schema": "loadlab.run.v1", "tool_version": "0.1.0", "name": "s", "scenario_file": null,
        "target": null, "started_at": "2026-01-01T00:00:00Z", "valid": true,
        "invalid_reasons": [], "interrupted": false, "duration_s": 10.0, "warmup_s": 0.0,
        "load": {"model": "closed", "planned_duration_s": 10.0, "max_vus": 10, "peak_rate": null,
                 "planned_arrivals": null, "max_in_flight": null, "count": null},
        "requests": {"total": total, "ok": total - failed, "failed": failed, "rate": rate, "warmup": 0},
        "latency_ms": latency(p95 / 3.0, p95), "service_time_ms": latency(p95 / 3.0, p95),
        "lag_ms": {"p50": 0.0, "p99": 0.0, "max": 0.0},
        "errors": {}, "error_hints": {}, "error_examples": {}, "status_codes": {},
        "iterations": {"completed": total / 2, "dropped": 0, "delayed_by_max_in_flight": 0},
        "steps": [{"name": "signin", "group": "auth", "requests": total, "failed": failed,
                   "errors": {}, "status_codes": {}, "latency_ms": latency(p95 / 3.0, p95),
                   "service_time_ms": latency(p95 / 3.0, p95)}],
        "groups": [{"name": "auth", "requests": total, "failed": failed,
                    "latency_ms": latency(p95 / 3.0, p95), "service_time_ms": latency(p95 / 3.0, p95)}],
        "thresholds": [],
        "generator": {"cpu_percent": 10.0, "cpu_seconds": 1.0, "cores": 2, "threads": 2,
                      "saturated": false, "scheduler_lag_ms_p99": 0.1, "max_rss_bytes": 1000},
        "intervals": [], "histograms": {"latency": "", "service_time": ""}
    }))
    .unwrap()
}

fn variant(runs: &[RunResult]) -> VariantStats {
    let samples: Vec<RunSample<'_>> = runs
        .iter()
        .enumerate()
        .map(|(i, r)| RunSample {
            id: format!("run{i}"),
            result: r,
            excluded: false,
        })
        .collect();
    summarize_variant("v", &samples)
}

#[test]
fn per_step_and_group_metrics_are_summarised() {
    let runs: Vec<RunResult> = (0..6).map(|i| run(100.0 + i as f64, 50.0, i)).collect();
    let v = variant(&runs);
    for name in [
        "steps.signin.requests.total",
        "steps.signin.requests.rate",
        "steps.signin.errors.rate",
        "steps.signin.errors.count",
        "steps.signin.latency_ms.mean",
        "steps.signin.latency_ms.p50",
        "steps.signin.latency_ms.p90",
        "steps.signin.latency_ms.p95",
        "steps.signin.latency_ms.p99",
        "steps.signin.latency_ms.max",
        "groups.auth.latency_ms.p99",
        "groups.auth.errors.count",
        "iterations.completed",
        "requests.total",
    ] {
        let id: MetricId = name.parse().unwrap();
        let s = v
            .metrics
            .get(&id)
            .unwrap_or_else(|| panic!("{name} missing"));
        assert_eq!(s.n, 6, "{name}");
        assert!(
            s.median_ci.is_some() && s.mean_ci.is_some() && s.cv.is_some(),
            "{name}"
        );
    }
    let errors = &v.metrics[&MetricId::step("signin", Quantity::Errors)];
    assert_eq!(errors.values, vec![0.0, 1.0, 2.0, 3.0, 4.0, 5.0]);
    // Names as users write them (threshold spelling), checked against what was measured.
    let ids = parse_metrics(&["step.signin.latency.p99".into()], &[&v]).unwrap();
    assert_eq!(
        ids,
        vec![MetricId::step(
            "signin",
            Quantity::Latency(LatencyStat::P99)
        )]
    );
    let err = parse_metrics(&["step.login.latency.p99".into()], &[&v]).unwrap_err();
    assert!(err.valid.contains(&ids[0]) && err.reason.contains("did not measure"));
    let err = parse_metrics(&["latency.p97".into()], &[&v]).unwrap_err();
    assert_eq!(err.to_string(), "unknown metric `latency.p97`");
}

#[test]
fn one_run_has_no_interval_at_all() {
    let v = variant(&[run(100.0, 50.0, 0)]);
    let s = &v.metrics[&MetricId::latency(LatencyStat::P95)];
    assert_eq!((s.n, s.median, s.mean), (1, 50.0, 50.0));
    assert_eq!(
        (s.mean_ci, s.median_ci, s.sd, s.cv),
        (None, None, None, None)
    );
    assert!(s.trend.is_none() && s.outliers.is_empty());
    let text = serde_json::to_value(s).unwrap();
    assert!(text["mean_ci"].is_null() && text["cv"].is_null());
}

#[test]
fn outlier_runs_are_marked_with_their_ids() {
    let p95 = [50.0, 51.0, 49.5, 50.5, 150.0, 50.2, 49.8];
    let runs: Vec<RunResult> = p95.iter().map(|&p| run(100.0, p, 0)).collect();
    let v = variant(&runs);
    let s = &v.metrics[&MetricId::latency(LatencyStat::P95)];
    assert_eq!(s.outliers.len(), 1);
    let o = &s.outliers[0];
    assert_eq!(
        (o.index, o.run.as_deref(), o.value),
        (4, Some("run4"), 150.0)
    );
    assert_eq!((o.kind, o.side), (OutlierKind::Extreme, OutlierSide::High));
    // Never dropped: the statistics still include it.
    assert_eq!((s.n, s.max), (7, 150.0));
}

#[test]
fn a_metric_rising_over_the_runs_is_drift() {
    // p95 rises 2% a run (a leak); throughput wobbles without a trend.
    let wobble = [
        100.0, 103.0, 99.0, 102.0, 98.0, 101.0, 100.5, 99.5, 102.5, 98.5,
    ];
    let runs: Vec<RunResult> = (0..10)
        .map(|i| run(wobble[i], 50.0 * 1.02f64.powi(i as i32), 0))
        .collect();
    let v = variant(&runs);
    let p95 = MetricId::latency(LatencyStat::P95);
    let d = v
        .drift
        .iter()
        .find(|d| d.metric == p95)
        .expect("p95 drifts");
    assert_eq!(d.direction, TrendDirection::Rising);
    assert!(d.tau > 0.99 && d.p_adjusted < 0.05, "{d:?}");
    assert!(!v
        .drift
        .iter()
        .any(|d| d.metric == MetricId::run(Quantity::Throughput)));
    // Stable runs: no drift.
    let flat: Vec<RunResult> = wobble.iter().map(|&r| run(r, 50.0, 0)).collect();
    assert!(variant(&flat).drift.is_empty());
}
