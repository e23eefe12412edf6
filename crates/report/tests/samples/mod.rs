//! Deterministic runs, studies, a sweep, a capacity search and a comparison for the report
//! tests: built the way loadlab builds them (recorder-free, but the statistics come from
//! `loadlab-analysis`), with no clock and no randomness, so rendered reports are stable.

#![allow(dead_code)]

use loadlab_analysis::capacity::{CapacityResult, CapacitySettings, CapacityStep};
use loadlab_analysis::compare::{CompareOptions, CompareResult, CompareSide};
use loadlab_analysis::study::{self, RunSample, StudyResult, VariantStats};
use loadlab_metrics::result::{
    encode_histogram, GroupResult, Histograms, IntervalLatency, IntervalStats, Iterations,
    LagSummary, LatencySummary, LoadInfo, Requests, StepResult, ThresholdResult,
};
use loadlab_metrics::{Environment, ErrorKind, RunResult};
use loadlab_report::Runs;
use std::collections::BTreeMap;

pub fn environment() -> Environment {
    Environment {
        hostname: Some("bench-1".into()),
        os: "Linux 6.1.0-18-amd64".into(),
        arch: "x86_64".into(),
        cpu_model: Some("AMD EPYC 7B13".into()),
        cpus: 2,
        memory_bytes: Some(8 * 1024 * 1024 * 1024),
        ..Default::default()
    }
}

/// A latency summary and histogram of `n` requests around `scale` ms with a long tail.
fn latencies(scale: f64, n: u64, salt: u64) -> (LatencySummary, String) {
    let mut h = loadlab_metrics::new_histogram();
    for i in 0..n {
        let u = ((i * 7919 + salt * 104_729) % 1000) as f64 / 1000.0;
        let ms = scale * (0.4 + 1.6 * u * u * u + if i % 97 == 0 { 6.0 * u } else { 0.0 });
        h.record((ms * 1000.0).max(1.0) as u64).unwrap();
    }
    (LatencySummary::of(&h), encode_histogram(&h))
}

/// One closed-model run of `vus` VUs: `scale` sets its latency, `rate` its throughput.
pub fn run(name: &str, vus: u32, scale: f64, rate: f64, failed: u64, salt: u64) -> RunResult {
    let duration = 20.0;
    let total = (rate * duration) as u64;
    let (latency, enc) = latencies(scale, total.min(4000), salt);
    let (service, enc_s) = latencies(scale * 0.9, total.min(4000), salt);
    let intervals = run_intervals(vus, rate, failed, &latency, salt);
    let (errors, hints, examples) = timeout_errors(failed);
    let steps = run_steps(scale, total, salt);
    let groups = groups_of(&steps);
    RunResult {
        schema: loadlab_metrics::result::SCHEMA.into(),
        tool_version: "0.1.0".into(),
        name: name.into(),
        scenario_file: Some("permits.yaml".into()),
        target: Some("http://127.0.0.1:8080".into()),
        started_at: format!("2026-11-22T08:{:02}:00Z", salt % 60),
        valid: true,
        interrupted: false,
        duration_s: duration,
        warmup_s: 4.0,
        load: LoadInfo {
            model: loadlab_metrics::LoadModel::Closed,
            planned_duration_s: 24.0,
            max_vus: Some(vus),
            ..LoadInfo::default()
        },
        requests: Requests {
            total,
            ok: total - failed,
            failed,
            rate,
            warmup: (rate * 3.0) as u64,
            ..Default::default()
        },
        latency_ms: latency,
        service_time_ms: service,
        lag_ms: LagSummary::default(),
        errors,
        error_hints: hints,
        error_examples: examples,
        status_codes: [("200".to_string(), total - failed)].into_iter().collect(),
        iterations: Iterations {
            completed: total / 2,
            warmup: 0,
            ..Iterations::default()
        },
        steps,
        groups,
        thresholds: vec![
            ThresholdResult {
                expr: "latency.p95 < 2.8s".into(),
                actual: Some(latency.p95),
                ok: latency.p95 < 2800.0,
            },
            ThresholdResult {
                expr: "http.errors < 1%".into(),
                actual: Some(failed as f64 / total as f64),
                ok: (failed as f64 / total as f64) < 0.01,
            },
        ],
        generator: loadlab_metrics::result::Generator {
            cpu_percent: 31.0 + (salt % 7) as f64,
            cpu_seconds: 12.4,
            cores: 2,
            threads: 2,
            saturated: false,
            scheduler_lag_ms_p99: 0.35,
            batch_window_ms: None,
            reads_at_wakeups: false,
            max_rss_bytes: 40 * 1024 * 1024,
            ..Default::default()
        },
        intervals,
        histograms: Histograms {
            latency: enc,
            service_time: enc_s,
            ..Default::default()
        },
        environment: Some(environment()),
        ..Default::default()
    }
}

/// 24 one-second slices (4 of warm-up, ramping up over the first 3) with a deterministic
/// wobble; the `failed` requests all fall in slice 12.
fn run_intervals(
    vus: u32,
    rate: f64,
    failed: u64,
    latency: &LatencySummary,
    salt: u64,
) -> Vec<IntervalStats> {
    (0..24u32)
        .map(|t| {
            let warm = t < 4;
            let wobble = 1.0 + (((t as u64 + salt) * 37) % 11) as f64 / 50.0;
            let ramp = if t < 3 { (t + 1) as f64 / 3.0 } else { 1.0 };
            let reqs = (rate * ramp * wobble) as u64;
            IntervalStats {
                t: f64::from(t),
                warmup: warm,
                requests: reqs,
                failed: if t == 12 { failed.min(reqs) } else { 0 },
                rate: reqs as f64,
                latency_ms: IntervalLatency {
                    p50: latency.p50 * wobble,
                    p95: latency.p95 * wobble,
                    p99: latency.p99 * wobble,
                    max: latency.max,
                },
                active: (vus as f64 * ramp) as u64,
                length_s: 1.0,
                ..Default::default()
            }
        })
        .collect()
}

/// The errors, hints and examples of `failed` timeouts (none when nothing failed).
fn timeout_errors(
    failed: u64,
) -> (
    BTreeMap<String, u64>,
    BTreeMap<String, String>,
    BTreeMap<String, String>,
) {
    let mut errors = BTreeMap::new();
    let mut hints = BTreeMap::new();
    let mut examples = BTreeMap::new();
    if failed > 0 {
        errors.insert("timeout".to_string(), failed);
        hints.insert("timeout".to_string(), ErrorKind::Timeout.hint().to_string());
        examples.insert("timeout".to_string(), "no response within 10s".to_string());
    }
    (errors, hints, examples)
}

/// A login step in group `auth` (a fifth of the requests, slower) and an API step in `api`.
fn run_steps(scale: f64, total: u64, salt: u64) -> Vec<StepResult> {
    let step = |n: &str, g: &str, share: f64, sc: f64| {
        let (l, _) = latencies(scale * sc, (total as f64 * share) as u64, salt + 1);
        StepResult {
            name: n.to_string(),
            group: Some(g.to_string()),
            requests: (total as f64 * share) as u64,
            failed: 0,
            errors: BTreeMap::new(),
            status_codes: BTreeMap::new(),
            latency_ms: l,
            service_time_ms: l,
            checks: Vec::new(),
            ..Default::default()
        }
    };
    vec![
        step("POST /auth/login", "auth", 0.2, 1.4),
        step("GET /api/items", "api", 0.8, 0.9),
    ]
}

/// One group per step, with the step's figures.
fn groups_of(steps: &[StepResult]) -> Vec<GroupResult> {
    steps
        .iter()
        .map(|s| GroupResult {
            name: s.group.clone().unwrap(),
            requests: s.requests,
            failed: s.failed,
            latency_ms: s.latency_ms,
            service_time_ms: s.service_time_ms,
            ..Default::default()
        })
        .collect()
}

/// A variant's statistics over its runs `ids` (none excluded).
fn summarize(name: &str, ids: &[String], runs: &Runs) -> VariantStats {
    let samples: Vec<RunSample<'_>> = ids
        .iter()
        .map(|id| RunSample {
            id: id.clone(),
            result: &runs[id],
            excluded: false,
        })
        .collect();
    study::summarize_variant(name, &samples)
}

/// Seed 000's study: baseline (35 VUs) and stress (75 VUs), 10 runs each.
pub fn study() -> (StudyResult, Runs) {
    let mut runs = Runs::new();
    let mut variants = Vec::new();
    for (vi, (name, vus, scale, rate)) in [
        ("baseline", 35u32, 300.0, 27.5),
        ("stress", 75, 1200.0, 37.8),
    ]
    .into_iter()
    .enumerate()
    {
        let mut ids = Vec::new();
        for i in 0..10u64 {
            let salt = vi as u64 * 10 + i;
            let jitter = 1.0 + ((salt * 13) % 9) as f64 / 40.0;
            let r = run(
                "permits",
                vus,
                scale * jitter,
                rate / jitter.sqrt(),
                if vi == 1 && i == 3 { 4 } else { 0 },
                salt,
            );
            let id = format!("r{vi}{i:02}");
            runs.insert(id.clone(), r);
            ids.push(id);
        }
        variants.push(summarize(name, &ids, &runs));
    }
    let comparisons = study::compare_study(
        &variants,
        &[(0, 1)],
        &study::default_compare_metrics(),
        &CompareOptions::default(),
    );
    let degradation = vec![study::degradation(&variants[0], &variants[1])];
    let s = StudyResult {
        schema: study::STUDY_SCHEMA.into(),
        tool_version: "0.1.0".into(),
        id: "s20261122-080000-abcd".into(),
        name: "permits".into(),
        scenario_file: Some("permits.yaml".into()),
        started_at: "2026-11-22T08:00:00Z".into(),
        finished_at: "2026-11-22T08:09:00Z".into(),
        repeat: 10,
        order: "interleaved".into(),
        cooldown_s: 2.0,
        equivalence: 0.0,
        compare_on: Default::default(),
        alpha: 0.05,
        min_runs: 5,
        family_size: loadlab_analysis::compare::family_size(&comparisons),
        interrupted: false,
        warnings: vec![],
        variants,
        comparisons,
        degradation,
        sweep: None,
        plan_hash: None,
        retry_invalid: 2,
        warmup_runs: 0,
        planned_runs: 0,
        run_log: vec![],
        rounds: None,
        imported_from: Vec::new(),
    };
    (s, runs)
}

/// Seed 002's concurrency sweep: 10..75 VUs, 3 runs each, saturating near 50.
pub fn sweep() -> (StudyResult, Runs) {
    let mut runs = Runs::new();
    let mut variants = Vec::new();
    let levels = [10u32, 20, 30, 40, 50, 60, 75];
    for (li, &vus) in levels.iter().enumerate() {
        let n = vus as f64;
        let x = 40.0 * n / (1.0 + 0.03 * (n - 1.0) + 0.0004 * n * (n - 1.0));
        let mut ids = Vec::new();
        for i in 0..3u64 {
            let salt = li as u64 * 3 + i;
            let j = 1.0 + ((salt * 7) % 5) as f64 / 100.0;
            let r = run("transactions", vus, 1000.0 * n / x * j, x / j, 0, salt);
            let id = format!("w{li}{i}");
            runs.insert(id.clone(), r);
            ids.push(id);
        }
        variants.push(summarize(&format!("vus={vus}"), &ids, &runs));
    }
    let points: Vec<(f64, &VariantStats)> = levels
        .iter()
        .zip(&variants)
        .map(|(l, v)| (*l as f64, v))
        .collect();
    let sweep = study::analyze_sweep(study::LoadKind::Vus, &points);
    let s = StudyResult {
        schema: study::STUDY_SCHEMA.into(),
        tool_version: "0.1.0".into(),
        id: "s20261122-090000-beef".into(),
        name: "transactions".into(),
        scenario_file: None,
        started_at: "2026-11-22T09:00:00Z".into(),
        finished_at: "2026-11-22T09:30:00Z".into(),
        repeat: 3,
        order: "sequential".into(),
        cooldown_s: 1.0,
        equivalence: 0.0,
        compare_on: Default::default(),
        alpha: 0.05,
        min_runs: 5,
        family_size: 0,
        interrupted: false,
        warnings: vec![],
        variants,
        comparisons: vec![],
        degradation: vec![],
        sweep: Some(sweep),
        plan_hash: None,
        retry_invalid: 2,
        warmup_runs: 0,
        planned_runs: 0,
        run_log: vec![],
        rounds: None,
        imported_from: Vec::new(),
    };
    (s, runs)
}

pub fn capacity() -> CapacityResult {
    let step = |rate: f64, passed: bool, phase: &str, i: usize| CapacityStep {
        rate,
        passed,
        run: format!("c{i}"),
        phase: phase.into(),
        achieved_rate: if passed {
            rate * 0.995
        } else {
            rate.min(420.0)
        },
        p95_ms: if passed {
            20.0 + rate / 20.0
        } else {
            900.0 + rate
        },
        error_rate: if passed { 0.0 } else { 0.02 },
        reasons: if passed {
            vec![]
        } else {
            vec!["latency.p95 < 250ms: actual 1.30s".into()]
        },
        retried: false,
        interrupted: false,
    };
    let steps = vec![
        step(50.0, true, "bracket", 0),
        step(100.0, true, "bracket", 1),
        step(200.0, true, "bracket", 2),
        step(400.0, true, "bracket", 3),
        step(800.0, false, "bracket", 4),
        step(600.0, false, "bisect", 5),
        step(500.0, false, "bisect", 6),
        step(450.0, true, "bisect", 7),
        step(475.0, false, "bisect", 8),
        step(450.0, true, "confirm", 9),
        step(450.0, true, "confirm", 10),
        step(450.0, true, "confirm", 11),
    ];
    CapacityResult {
        schema: loadlab_analysis::capacity::CAPACITY_SCHEMA.into(),
        tool_version: "0.1.0".into(),
        id: "c20261122-100000-cafe".into(),
        name: "checkout".into(),
        scenario_file: Some("checkout.yaml".into()),
        started_at: "2026-11-22T10:00:00Z".into(),
        finished_at: "2026-11-22T10:06:00Z".into(),
        slo: vec![
            "latency.p95 < 250ms".into(),
            "http.errors < 1%".into(),
            "achieved ≥ 98% of offered".into(),
        ],
        settings: CapacitySettings {
            start: 50.0,
            hold_s: 20.0,
            warmup_s: 5.0,
            precision: 0.05,
            confirm: 3,
            max: 100_000.0,
        },
        max_rate: Some(450.0),
        bracket: [Some(450.0), Some(475.0)],
        steps,
        interrupted: false,
        warnings: vec![],
        highest_passed: Some(450.0),
        plan_hash: None,
    }
}

/// A search stopped by Ctrl-C in its fourth step: 50, 100 and 200/s had passed.
pub fn interrupted_capacity() -> CapacityResult {
    let mut c = capacity();
    c.steps.truncate(3);
    c.max_rate = None;
    c.bracket = [Some(200.0), None];
    c.interrupted = true;
    c.highest_passed = Some(200.0);
    c.finished_at = "2026-11-22T10:01:40Z".into();
    c
}

pub fn comparison() -> CompareResult {
    let (s, _) = study();
    CompareResult {
        schema: loadlab_analysis::compare::COMPARE_SCHEMA.into(),
        tool_version: "0.1.0".into(),
        baseline: CompareSide {
            kind: "study".into(),
            id: s.id.clone(),
            label: "baseline".into(),
            runs: 10,
            made_by: None,
        },
        variant: CompareSide {
            kind: "study".into(),
            id: s.id.clone(),
            label: "stress".into(),
            runs: 10,
            made_by: None,
        },
        equivalence: 0.0,
        alpha: 0.05,
        min_runs: 5,
        family_size: s.family_size,
        fail_on_regression: Some(0.05),
        regressions: loadlab_analysis::compare::regressions(&s.comparisons, 0.05),
        one_run: None,
        comparisons: s.comparisons,
        warnings: vec![],
    }
}
