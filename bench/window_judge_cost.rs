//! What the live threshold judge costs the engine's coordinator per interval: a 30 s window
//! of 1 s intervals, 10 steps, 200 requests a step and interval (bench/window_fixture.rs), for
//! one, three and plain thresholds, next to folding the window afresh into a summary (what
//! judging once cost). Prints µs per judgement (mean over the intervals after the window
//! filled). `cargo run --release -p loadlab-analysis --example window_judge_cost`.

#[path = "window_fixture.rs"]
mod window_fixture;

use loadlab_analysis::thresholds::ThresholdWatch;
use loadlab_record::Summarizer;
use loadlab_scenario::Threshold;
use std::time::{Duration, Instant};

const STEPS: usize = 10;
const WINDOW: usize = 30;
const INTERVALS: u32 = 150;

fn main() {
    let meta = window_fixture::meta(STEPS);
    let intervals = window_fixture::intervals(STEPS, INTERVALS);
    let cases: [&[&str]; 3] = [
        &["latency.p95 < 10s over 30s, abort"],
        &[
            "latency.p95 < 10s over 30s, abort",
            "step.s3.latency.p99 < 10s over 30s",
            "http.errors < 50% over 30s",
        ],
        &["latency.p95 < 10s"],
    ];
    for exprs in cases {
        let thresholds: Vec<Threshold> = exprs
            .iter()
            .map(|e| Threshold::parse(e).expect("valid threshold"))
            .collect();
        let watch = ThresholdWatch::new(&thresholds);
        let mut observer = watch.observer();
        observer.begin(&meta);
        let mut summary = Summarizer::new(STEPS);
        let (mut spent, mut judged) = (Duration::ZERO, 0u32);
        for (k, r) in intervals.iter().enumerate() {
            summary.add(r);
            let start = Instant::now();
            let _ = observer.interval(r, &summary);
            if k >= WINDOW {
                spent += start.elapsed();
                judged += 1;
            }
        }
        println!(
            "{exprs:?}: {:.0} µs per interval",
            spent.as_secs_f64() * 1e6 / f64::from(judged)
        );
    }
    let start = Instant::now();
    let folds = 20;
    for k in 0..folds {
        std::hint::black_box(window_fixture::fold(&meta, &intervals[k..k + WINDOW]));
    }
    println!(
        "folding a 30 s window into a fresh summary: {:.0} µs",
        start.elapsed().as_secs_f64() * 1e6 / folds as f64
    );
}
