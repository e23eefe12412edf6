//! The live threshold judge against folding each window afresh into a summary (what it did
//! before it kept running windows): the same value for every kind of threshold to the last
//! bit, at a small fraction of the cost. Both are measured in the same test, interleaved, so a
//! busy machine slows both alike.

#[path = "../../../bench/window_fixture.rs"]
mod window_fixture;

use loadlab_analysis::thresholds::{evaluate, ThresholdWatch};
use loadlab_record::Summarizer;
use loadlab_scenario::Threshold;
use std::time::{Duration, Instant};

fn thresholds(exprs: &[&str]) -> Vec<Threshold> {
    exprs
        .iter()
        .map(|e| Threshold::parse(e).unwrap_or_else(|err| panic!("{e}: {err}")))
        .collect()
}

#[test]
fn every_window_value_equals_the_fresh_fold_of_its_intervals() {
    let steps = 3;
    let meta = window_fixture::meta(steps);
    let intervals = window_fixture::intervals(steps, 14);
    let ts = thresholds(&[
        "latency.p95 < 10s over 3s",
        "latency.p97 < 10s over 3s",
        "latency.p999 < 10s over 3s",
        "latency.p100 < 10s over 3s",
        "latency.mean < 10s over 5s",
        "latency.min < 10s over 5s",
        "latency.max < 10s over 5s",
        "service_time.p99 < 10s over 2s",
        "step.s1.latency.p50 < 10s over 4s",
        "step.s2.requests > 1 over 4s",
        "step.nope.latency.p50 < 10s over 4s",
        "group.even.latency.p90 < 10s over 2s",
        "group.even.http.errors < 50% over 3s",
        "http.errors < 50% over 2s",
        "requests > 1 over 3s",
        "failed < 100 over 3s",
        "requests.rate > 1 over 4s",
        "waiting.p90 < 10s over 2s",
        "latency.p95 < 10s, abort",
        "requests.rate > 1",
    ]);
    let watch = ThresholdWatch::new(&ts);
    let mut observer = watch.observer();
    observer.begin(&meta);
    let mut summary = Summarizer::new(steps);
    for (k, r) in intervals.iter().enumerate() {
        summary.add(r);
        let _ = observer.interval(r, &summary);
        let end_s = r.start_s + r.length_s;
        for (t, state) in ts.iter().zip(watch.states()) {
            let window_s = t.live.window.map(|w| w.as_secs_f64());
            if window_s.is_some_and(|w| end_s + 1e-6 < w) {
                assert!(!state.judged, "{}: judged before its window filled", t.expr);
                continue;
            }
            let from = window_s.map_or(0.0, |w| end_s - w - 1e-6);
            let first = intervals[..=k]
                .iter()
                .position(|i| i.start_s >= from)
                .unwrap();
            let fresh = window_fixture::fold(&meta, &intervals[first..=k]);
            let want = evaluate(std::slice::from_ref(t), &fresh)[0].actual;
            assert_eq!(state.value, want, "{} after {end_s} s", t.expr);
        }
    }
    // Every kind above had data except the unknown step and the phase nobody measured.
    let states = watch.states();
    let unjudged: Vec<&str> = ts
        .iter()
        .zip(&states)
        .filter(|(_, s)| !s.judged)
        .map(|(t, _)| t.expr.as_str())
        .collect();
    assert_eq!(
        unjudged,
        [
            "step.nope.latency.p50 < 10s over 4s",
            "waiting.p90 < 10s over 2s"
        ]
    );
}

/// A 30 s window of 1 s intervals, 10 steps, 200 requests a step and interval: judging one
/// interval must cost a small fraction of folding the window into a fresh summary (it cost
/// about as much, ~61 ms a judgement in a debug build, when it did that).
#[test]
fn judging_an_interval_costs_a_fraction_of_folding_the_window_afresh() {
    let (steps, window) = (10, 30);
    let meta = window_fixture::meta(steps);
    let intervals = window_fixture::intervals(steps, 40);
    let ts = thresholds(&[
        "latency.p95 < 10s over 30s, abort",
        "step.s3.latency.p99 < 10s over 30s",
        "http.errors < 50% over 30s",
    ]);
    let watch = ThresholdWatch::new(&ts);
    let mut observer = watch.observer();
    observer.begin(&meta);
    let mut summary = Summarizer::new(steps);
    let (mut judging, mut folding) = (Duration::ZERO, Duration::ZERO);
    for (k, r) in intervals.iter().enumerate() {
        summary.add(r);
        let start = Instant::now();
        let _ = observer.interval(r, &summary);
        let spent = start.elapsed();
        if k + 1 >= window {
            judging += spent;
            let start = Instant::now();
            std::hint::black_box(window_fixture::fold(&meta, &intervals[k + 1 - window..=k]));
            folding += start.elapsed();
        }
    }
    assert!(watch.states().iter().all(|s| s.judged));
    eprintln!("judging {judging:?}, folding {folding:?} (over the same intervals)");
    assert!(
        judging * 5 < folding,
        "judging took {judging:?}, folding the windows afresh {folding:?}"
    );
}
