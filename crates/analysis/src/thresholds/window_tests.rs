//! Table tests of the live judge on hand-made intervals: when a windowed threshold fails,
//! that its window's percentiles are exact (merged histograms), warm-up and grace, and the
//! end-of-run result (the worst window).

use super::*;
use loadlab_metrics::result::LoadInfo;
use loadlab_metrics::{Environment, ErrorKind, Outcome, Recorder, StepInfo};
use loadlab_record::{RecordMeta, Summarizer, RECORD_SCHEMA};

pub(crate) fn meta(steps: usize, slice_s: f64, warmup_s: f64) -> RecordMeta {
    RecordMeta {
        schema: RECORD_SCHEMA.into(),
        tool_version: "test".into(),
        name: "t".into(),
        scenario_file: None,
        target: None,
        start_unix_s: 1.0e9,
        warmup_s,
        slice_s,
        load: LoadInfo {
            model: loadlab_metrics::LoadModel::Open,
            planned_duration_s: 10.0,
            ..LoadInfo::default()
        },
        plan_hash: "h".into(),
        scenario: serde_json::json!({}),
        segment: None,
        steerable: false,
        origins: vec![],
        steps: (0..steps)
            .map(|i| StepInfo {
                name: format!("s{i}"),
                ..StepInfo::default()
            })
            .collect(),
        data_sets: vec![],
        thresholds: vec![],
        environment: Environment::default(),
        threads: 1,
        cores: 1,
        cpus_allowed: vec![],
        max_cpu_percent: 90.0,
        max_lag_ms: 10.0,
        host_timer: None,
        batch_window_ms: None,
        reads_at_wakeups: false,
        pid: 1,
        merged_from: None,
        clock: None,
        imported: None,
    }
}

/// Interval `index` of `slice_s`: one request per latency (ms) on step `index % steps`,
/// the first `failed` of them failed (503).
pub(crate) fn interval(
    index: u32,
    slice_s: f64,
    warmup: bool,
    steps: usize,
    latencies_ms: &[f64],
    failed: usize,
) -> IntervalRecord {
    let mut r = Recorder::new(steps);
    for (k, ms) in latencies_ms.iter().enumerate() {
        let us = (ms * 1000.0) as u64;
        let status = if k < failed { 503 } else { 200 };
        let o = Outcome {
            step: ((index as usize + k) % steps) as u16,
            latency_us: us,
            service_us: us,
            lag_us: Some(0),
            status,
            error: ErrorKind::from_status(status),
            ..Outcome::default()
        };
        r.begin(o.step);
        r.record(&o);
    }
    IntervalRecord {
        index,
        start_s: f64::from(index) * slice_s,
        length_s: slice_s,
        warmup,
        delta: r.take_interval(1, 0.0),
        resources: Vec::new(),
    }
}

fn threshold(text: &str) -> Threshold {
    Threshold::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"))
}

/// Feeds `intervals` to a judge of `exprs`; returns the judge and the first breach.
fn run(
    exprs: &[&str],
    meta: &RecordMeta,
    intervals: &[IntervalRecord],
) -> (WindowJudge, Option<ThresholdBreach>, Summarizer) {
    let mut judge = WindowJudge::new(exprs.iter().map(|e| threshold(e)).collect());
    judge.begin(meta);
    let mut summary = Summarizer::new(meta.steps.len());
    let mut first = None;
    for r in intervals {
        summary.add(r);
        if let Some(b) = judge.interval(r) {
            assert!(first.is_none(), "one breach only");
            first = Some(b);
        }
    }
    (judge, first, summary)
}

/// 0.1 s intervals, 10 requests each: 10 ms until `degrade_s`, 300 ms after.
fn degrading(until_s: f64, degrade_s: f64, warmup_s: f64) -> Vec<IntervalRecord> {
    let n = (until_s / 0.1).round() as u32;
    (0..n)
        .map(|i| {
            let t = f64::from(i) * 0.1;
            let ms = if t + 1e-9 >= degrade_s { 300.0 } else { 10.0 };
            interval(i, 0.1, t + 1e-9 < warmup_s, 1, &[ms; 10], 0)
        })
        .collect()
}

#[test]
fn when_a_windowed_threshold_breaks_table() {
    // (threshold, warm-up, expected breach time, expected value)
    let cases: &[(&str, f64, Option<f64>, f64)] = &[
        // One slow interval in ten is 10% slow: the p95 over 1 s is slow at once.
        ("latency.p95 < 100ms over 1s, abort", 0.0, Some(2.1), 300.0),
        // The median needs more than half of the window slow.
        ("latency.p50 < 100ms over 1s, abort", 0.0, Some(2.6), 300.0),
        // Over 2 s, the median waits for more than 1 s of slow intervals.
        ("latency.p50 < 100ms over 2s, abort", 0.0, Some(3.1), 300.0),
        // A window is judged once full: a degradation inside the first window is seen at its end.
        ("latency.p95 < 100ms over 3s, abort", 0.0, Some(3.0), 300.0),
        // A grace longer than the degradation delays the first judgement.
        (
            "latency.p95 < 100ms over 1s, abort after 2.5s",
            0.5,
            Some(3.0),
            300.0,
        ),
        // Without abort it never stops the run.
        ("latency.p95 < 100ms over 1s", 0.0, None, 0.0),
        // Bounds that hold never break.
        ("latency.p95 < 500ms over 1s, abort", 0.0, None, 0.0),
        ("requests.rate > 50 over 1s, abort", 0.5, None, 0.0),
        // The mean over the whole run so far (no window) crosses 100 ms later.
        ("latency.mean < 90ms, abort", 0.0, Some(2.8), 0.0),
    ];
    for (expr, warmup, at, value) in cases {
        let intervals = degrading(4.0, 2.0, *warmup);
        let (_, breach, _) = run(&[expr], &meta(1, 0.1, *warmup), &intervals);
        match (at, breach) {
            (None, None) => {}
            (Some(at), Some(b)) => {
                assert!((b.at_s - at).abs() < 1e-6, "{expr}: at {}", b.at_s);
                assert_eq!(b.threshold, *expr);
                if *value > 0.0 {
                    assert!(
                        (b.value - value).abs() < value * 0.01,
                        "{expr}: {}",
                        b.value
                    );
                }
                let window = threshold(expr).live.window.map(|w| w.as_secs_f64());
                assert_eq!(b.window_s, window, "{expr}");
            }
            (want, got) => panic!("{expr}: want {want:?}, got {got:?}"),
        }
    }
}

#[test]
fn a_window_merges_histograms_never_averages_percentiles() {
    // Interval k holds 1 request of 1000 ms and 99 of 1 ms; interval k+1, 100 of 1 ms...
    // Per-interval p99s averaged would say ~500 ms; the merged window's p99 is 1 ms.
    let m = meta(1, 1.0, 0.0);
    let intervals: Vec<_> = (0..4)
        .map(|i| {
            let mut ms = vec![1.0; 99];
            ms.push(if i % 2 == 0 { 1000.0 } else { 1.0 });
            interval(i, 1.0, false, 1, &ms, 0)
        })
        .collect();
    let (judge, _, _) = run(&["latency.p99 < 10ms over 2s, abort"], &m, &intervals);
    let s = &judge.states()[0];
    assert!(s.value.unwrap() < 1.1, "{:?}", s.value);
    // Over 2 s, 1 slow request in 200 is beyond the p99: below 10 ms, no breach.
    assert!(s.ok);
    // The p99.9 of the same window sees the slow one.
    let (judge, breach, _) = run(&["latency.p999 < 10ms over 2s, abort"], &m, &intervals);
    assert!(judge.states()[0].value.unwrap() > 990.0);
    assert_eq!(
        breach.unwrap().at_s,
        2.0,
        "the first full window holds a slow one"
    );
}

#[test]
fn warmup_is_never_judged_and_windows_start_after_it() {
    // Slow during the warm-up only: nothing breaks.
    let m = meta(1, 0.1, 1.0);
    let intervals: Vec<_> = (0..30)
        .map(|i| {
            let ms = if i < 10 { 900.0 } else { 10.0 };
            interval(i, 0.1, i < 10, 1, &[ms; 5], 0)
        })
        .collect();
    let (judge, breach, _) = run(&["latency.max < 100ms over 2s, abort"], &m, &intervals);
    assert!(breach.is_none());
    assert!(judge.states()[0].value.unwrap() < 11.0);
}

#[test]
fn error_rate_count_and_scope_over_a_window() {
    // Two steps; step 1's requests fail from interval 5 on.
    let m = meta(2, 1.0, 0.0);
    let intervals: Vec<_> = (0..10)
        .map(|i| interval(i, 1.0, false, 2, &[5.0; 10], if i >= 5 { 4 } else { 0 }))
        .collect();
    let (judge, breach, summary) = run(
        &[
            "http.errors < 10% over 2s, abort",
            "requests > 15 over 2s",
            "requests.rate > 9 over 3s",
            "http.errors < 50%",
        ],
        &m,
        &intervals,
    );
    let b = breach.unwrap();
    assert_eq!(b.at_s, 6.0);
    assert!(
        (b.value - 0.2).abs() < 1e-9,
        "4 of 20 failed over the 2 s window: {}",
        b.value
    );
    let states = judge.states();
    assert!((states[0].value.unwrap() - 0.4).abs() < 1e-9);
    assert_eq!(states[1].value, Some(20.0));
    assert!((states[2].value.unwrap() - 10.0).abs() < 1e-9);
    // The plain one has a current value over the whole run: 20 of 100.
    assert!((states[3].value.unwrap() - 0.2).abs() < 1e-9);
    assert!(
        !states[3].failed_before,
        "plain thresholds are judged at the end only"
    );
    // At the end: the windowed error rate reports its worst window (40%) and fails.
    let whole = summary.finish(&m, None);
    let results = judge.results(&whole);
    assert_eq!(results[0].actual, Some(0.4));
    assert!(!results[0].ok);
    assert!(results[1].ok && results[2].ok && results[3].ok);
}

#[test]
fn never_judged_windows_fall_back_to_the_whole_run() {
    let m = meta(1, 1.0, 0.0);
    let intervals: Vec<_> = (0..3)
        .map(|i| interval(i, 1.0, false, 1, &[200.0; 4], 0))
        .collect();
    let (judge, breach, summary) = run(
        &["latency.p95 < 100ms over 1s, abort after 10s"],
        &m,
        &intervals,
    );
    assert!(breach.is_none(), "still within its grace");
    assert!(!judge.states()[0].judged);
    let results = judge.results(&summary.finish(&m, None));
    assert!(!results[0].ok, "judged on the whole run at the end");
    assert!(results[0].actual.unwrap() > 190.0);
}
