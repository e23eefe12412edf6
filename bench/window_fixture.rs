//! A run's metadata and its intervals for measuring the live threshold judge without a run:
//! 1 s intervals of `steps` steps, 200 requests a step and interval, latencies spread over
//! 1–500 ms, 2 failed per interval. Shared by bench/window_judge_cost.rs and the analysis
//! crate's cost test, so the figure quoted and the figure tested are of the same work.

use loadlab_metrics::result::LoadInfo;
use loadlab_metrics::{Environment, ErrorKind, LoadModel, Outcome, Recorder, StepInfo};
use loadlab_record::{IntervalRecord, RecordMeta, Summarizer, RECORD_SCHEMA};

pub fn meta(steps: usize) -> RecordMeta {
    RecordMeta {
        schema: RECORD_SCHEMA.into(),
        tool_version: "bench".into(),
        name: "window cost".into(),
        scenario_file: None,
        target: None,
        start_unix_s: 1.0e9,
        warmup_s: 0.0,
        slice_s: 1.0,
        load: LoadInfo {
            model: LoadModel::Open,
            planned_duration_s: 600.0,
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
                group: (i % 2 == 0).then(|| "even".to_string()),
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

/// `count` intervals of 1 s (see the module's doc).
pub fn intervals(steps: usize, count: u32) -> Vec<IntervalRecord> {
    let mut rng = 7u64;
    let mut next = move || {
        rng = rng
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        1 + (rng >> 33) % 500_000
    };
    (0..count)
        .map(|index| {
            let mut r = Recorder::new(steps);
            for k in 0..200 * steps {
                let us = next();
                let status = if k < 2 { 503 } else { 200 };
                let o = Outcome {
                    step: (k % steps) as u16,
                    latency_us: us,
                    service_us: us * 9 / 10,
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
                start_s: f64::from(index),
                length_s: 1.0,
                warmup: false,
                delta: r.take_interval(1, 0.0),
                resources: Vec::new(),
            }
        })
        .collect()
}

/// What judging a window cost when it folded it afresh: the window's intervals
/// folded into a new summary, and the summary finished.
pub fn fold(meta: &RecordMeta, window: &[IntervalRecord]) -> loadlab_metrics::RunResult {
    let mut s = Summarizer::new(meta.steps.len());
    for r in window {
        s.add(r);
    }
    s.finish(meta, None)
}
