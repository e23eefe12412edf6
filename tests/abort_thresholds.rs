//! A threshold over a window marked `abort` stops a run whose target degrades halfway, within
//! the window plus one interval of the degradation showing; the partial result is stored with
//! `stop: threshold` and `aborted_by_threshold`, and the command exits 1. The same scenario
//! against a target that does not degrade runs to its end and exits 0. The requests in flight
//! at the abort finish (a drain): none is counted `interrupted`, so an error-rate threshold
//! beside the abort does not fail because of the abort itself.

mod common;

use common::undisturbed::until_undisturbed;
use common::{exclusive, text, Target, BIN};
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

/// 4 s planned at 50/s (intervals of 0.1 s): p95 below 200 ms over every 1 s window (the
/// target answers in 5 ms, then 300 ms).
const SCENARIO: &str = "load: { model: open, rate: 50/s, duration: 4s }\n\
thresholds:\n\
\x20 - { metric: latency.p95, over: 1s, below: 200ms, abort: true }\n\
\x20 - latency.p50 < 10s\n\
steps:\n\
\x20 - { name: ping, get: /api/ping }\n";

const EXPR: &str = "latency.p95 < 200ms over 1s, abort";

/// A scratch directory holding `s.yaml`, removed when the returned guard is dropped.
fn workdir_with(name: &str, scenario: &str) -> tempfile::TempDir {
    let dir = common::scratch_dir(&format!("loadlab-abort-{name}-"));
    std::fs::write(dir.path().join("s.yaml"), scenario).unwrap();
    dir
}

/// The built-in target answering in 5 ms, then in 300 ms from 1 s after its first request.
fn degrading_target() -> Target {
    Target::start(&[
        "--service-time",
        "5ms",
        "--degrade-after",
        "1s",
        "--degraded-service-time",
        "300ms",
    ])
}

fn run(dir: &Path, target: &str) -> Output {
    Command::new(BIN)
        .args([
            "run",
            dir.join("s.yaml").to_str().unwrap(),
            "--target",
            target,
        ])
        .arg("--no-progress")
        .arg("--results")
        .arg(dir.join("results"))
        .arg("--summary")
        .arg(dir.join("summary.md"))
        .output()
        .expect("run loadlab")
}

/// The scenario run against a target made afresh (a degrading one remembers its first
/// request), again from scratch while the host disturbs it; the run's output, work
/// directory, `loadlab runs` listing and run.json.
fn run_undisturbed(
    name: &str,
    scenario: &str,
    target: impl Fn() -> Target,
) -> (Output, tempfile::TempDir, String, Value) {
    let (_, run_json, (out, dir, listing)) = until_undisturbed(name, || {
        let target = target();
        let dir = workdir_with(name, scenario);
        let out = run(dir.path(), &target.url);
        let (listing, r) = only_run(dir.path());
        (out.status.code(), r, (out, dir, listing))
    });
    (out, dir, listing, run_json)
}

/// The only run of the store and its run.json, as `loadlab runs` lists it.
fn only_run(dir: &Path) -> (String, Value) {
    let o = Command::new(BIN)
        .arg("runs")
        .arg("--results")
        .arg(dir.join("results"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let listing = String::from_utf8_lossy(&o.stdout).to_string();
    let id = listing
        .lines()
        .find(|l| l.starts_with('r'))
        .and_then(|l| l.split_whitespace().next())
        .unwrap_or_else(|| panic!("no run listed:\n{listing}"))
        .to_string();
    let json = dir.join("results").join("runs").join(&id).join("run.json");
    let run: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    (listing, run)
}

#[test]
fn a_window_that_fails_stops_a_degrading_run_within_the_window_plus_one_interval() {
    let _serial = exclusive();
    let (out, dir, listing, r) = run_undisturbed("degrades", SCENARIO, degrading_target);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("aborted: stopped at") && stdout.contains(EXPR),
        "{stdout}"
    );
    assert_eq!(r["stop"], "threshold", "{listing}");
    assert_eq!(r["interrupted"], false);
    let b = &r["aborted_by_threshold"];
    assert_eq!(b["threshold"], EXPR);
    assert_eq!(b["window_s"], 1.0);
    // The p95 of the failing window is one of the slow responses (300 ms service time).
    let value = b["value"].as_f64().unwrap();
    assert!((250.0..2000.0).contains(&value), "{b}");
    // Slow responses complete from 1.3 s on (degraded at 1 s, 300 ms each); a 1 s window
    // judged every 0.1 s interval sees them within the window plus one interval. The upper
    // bound leaves room for a busy machine: the run was planned for 4 s.
    let at = b["at_s"].as_f64().unwrap();
    assert!((1.0..=2.4).contains(&at), "stopped at {at} s: {b}");
    // The load stopped at once: no request started more than an interval or two after the
    // breach (50/s from 0 s on); those in flight then finished within a few of their 300 ms.
    let measured = r["duration_s"].as_f64().unwrap();
    assert!(
        measured <= at + 3.0,
        "measured {measured} s, breach at {at} s"
    );
    assert!(
        measured >= at - 0.11,
        "measured {measured} s, breach at {at} s"
    );
    // The partial result is kept: requests until the abort, thresholds judged.
    let total = r["requests"]["total"].as_u64().unwrap();
    assert!((40..=130).contains(&total), "{total} requests");
    assert!(
        total as f64 <= 50.0 * (at + 0.35) + 1.0,
        "{total} requests: sent after the breach at {at} s"
    );
    let t = r["thresholds"].as_array().unwrap();
    assert_eq!(t[0]["expr"], EXPR);
    assert_eq!(t[0]["ok"], false);
    assert!(
        t[0]["actual"].as_f64().unwrap() >= value,
        "the worst window: {}",
        t[0]
    );
    assert_eq!(
        t[1]["ok"], true,
        "plain thresholds are judged on the partial run: {}",
        t[1]
    );
    // The Markdown summary says which threshold stopped the run.
    let md = std::fs::read_to_string(dir.path().join("summary.md")).unwrap();
    assert!(md.contains("stopped at") && md.contains(EXPR), "{md}");
    // The published run schema describes an aborted run (`stop: threshold`, its breach).
    common::assert_matches_run_schema(&r);
}

#[test]
fn the_same_thresholds_let_a_steady_run_complete() {
    let _serial = exclusive();
    // 50 ms: well under the bound, and long beside the lag a busy host adds to each send.
    let (out, _dir, _, r) = run_undisturbed("steady", SCENARIO, || {
        Target::start(&["--service-time", "50ms"])
    });
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(r["stop"], "completed");
    assert!(
        r.get("aborted_by_threshold").is_none_or(Value::is_null),
        "{r}"
    );
    let t = &r["thresholds"][0];
    assert_eq!(t["ok"], true, "{t}");
    assert!(t["actual"].as_f64().unwrap() < 200.0, "{t}");
}

#[test]
fn requests_in_flight_at_an_abort_finish_and_do_not_fail_an_error_rate_threshold() {
    let _serial = exclusive();
    // At the abort about 15 requests are in flight (50/s, 300 ms each): cut off, they were
    // `interrupted` failures, and `http.errors < 1%` failed because of the abort itself.
    let (out, _dir, listing, r) = run_undisturbed(
        "drain",
        "load: { model: open, rate: 50/s, duration: 4s }\n\
thresholds:\n\
\x20 - latency.p95 < 200ms over 1s, abort\n\
\x20 - http.errors < 1%\n\
steps:\n\
\x20 - { name: ping, get: /api/ping }\n",
        degrading_target,
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert_eq!(r["stop"], "threshold", "{listing}");
    let requests = &r["requests"];
    assert_eq!(requests["interrupted"], 0, "{requests}");
    assert_eq!(requests["failed"], 0, "{requests}");
    assert!(
        r["errors"].as_object().is_none_or(|e| e.is_empty()),
        "{}",
        r["errors"]
    );
    // Every request sent got its answer: the slow ones after the abort are in the latency.
    assert_eq!(r["latency_ms"]["count"], requests["total"], "{requests}");
    assert!(r["latency_ms"]["max"].as_f64().unwrap() >= 250.0);
    let t = r["thresholds"].as_array().unwrap();
    assert_eq!(t[0]["ok"], false, "{}", t[0]);
    assert_eq!(t[1]["expr"], "http.errors < 1%");
    assert_eq!(t[1]["ok"], true, "the abort failed no request: {}", t[1]);
    assert_eq!(t[1]["actual"], 0.0, "{}", t[1]);
}

#[test]
fn a_threshold_abort_ends_one_run_of_a_study_and_the_next_runs_still() {
    let _serial = exclusive();
    // Slow from the start: every run of the study breaches its window and is aborted.
    let target = Target::start(&["--service-time", "300ms"]);
    let tmp = workdir_with(
        "study",
        "load: { model: open, rate: 50/s, duration: 4s }\n\
thresholds:\n\
\x20 - latency.p95 < 200ms over 1s, abort\n\
steps:\n\
\x20 - { name: ping, get: /api/ping }\n\
study:\n\
\x20 repeat: 2\n",
    );
    let dir = tmp.path();
    let out = common::study_command(&dir.join("s.yaml"), &target.url, &dir.join("results"))
        .output()
        .unwrap();
    let runs_dir = dir.join("results").join("runs");
    let runs: Vec<Value> = std::fs::read_dir(&runs_dir)
        .unwrap_or_else(|e| panic!("{}: {e}\n{}", runs_dir.display(), text(&out)))
        .map(|e| {
            let json = e.unwrap().path().join("run.json");
            serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap()
        })
        .collect();
    // Before a run's abort stayed in the run, it stopped the study: the second run ended at
    // once as if by a signal.
    assert!(runs.len() >= 2, "{} run(s)\n{}", runs.len(), text(&out));
    for r in &runs {
        assert_eq!(r["stop"], "threshold", "{}", text(&out));
        assert!(r["signal"].is_null(), "{}", r["signal"]);
        assert!(
            r["requests"]["total"].as_u64().unwrap() >= 40,
            "{}",
            r["requests"]
        );
    }
    assert_ne!(out.status.code(), Some(2), "{}", text(&out));
}
