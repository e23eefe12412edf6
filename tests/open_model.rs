//! End-to-end: the open model at a high rate against `loadlab target` delivers its plan (every
//! planned arrival sent, within 1%, none dropped) and records how late each one started.

mod common;

use common::{exclusive, Target, BIN};
use serde_json::Value;
use std::process::Command;

/// High for a debug build on a 2-core CI machine, and ~1 s of load.
const RATE: f64 = 8_000.0;

/// Runs loadlab with `args` (plus `--json`); returns the summary and the run's JSON.
fn run_json(args: &[&str]) -> (String, Value) {
    let dir = common::scratch_dir("loadlab-open-model-");
    let json = dir.path().join("run.json");
    let out = Command::new(BIN)
        .arg("run")
        .args(args)
        .args(["--no-progress", "--retry-invalid", "2", "--json"])
        .arg(&json)
        .env("LOADLAB_RESULTS", dir.path().join("results"))
        .output()
        .expect("run loadlab");
    let text = std::fs::read_to_string(&json).unwrap_or_else(|e| {
        panic!(
            "no JSON written ({e}): {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        serde_json::from_str(&text).unwrap(),
    )
}

#[test]
fn a_high_rate_is_delivered_within_one_percent_and_its_lag_recorded() {
    let _serial = exclusive();
    let target = Target::start(&[]);
    let url = format!("{}/api/ping", target.url);
    let rate = format!("{RATE}/s");
    let (summary, run) = run_json(&["--url", &url, "--rate", &rate, "--duration", "1s"]);

    let total = run["requests"]["total"].as_f64().unwrap();
    assert!(
        (total - RATE).abs() <= RATE * 0.01,
        "{total} requests sent of {RATE} planned\n{summary}"
    );
    assert_eq!(run["iterations"]["dropped"], 0, "{summary}");
    assert_eq!(run["requests"]["failed"], 0, "{summary}");
    // Lag is recorded for every arrival, and the batch window it trades against is reported.
    let lag = &run["lag_ms"];
    assert!(lag["max"].as_f64().unwrap() > 0.0, "{lag}");
    assert!(
        run["histograms"]["lag"].is_string(),
        "the full lag histogram is kept"
    );
    assert!(lag["p99"].as_f64().unwrap() <= lag["max"].as_f64().unwrap());
    assert_eq!(run["generator"]["batch_window_ms"].as_f64(), Some(0.8));
    assert!(run["generator"]["scheduler_lag_ms_p99"].as_f64().is_some());
    assert!(summary.contains("batch window 800µs"), "{summary}");
    // At this rate responses are read when the scheduler wakes for arrivals.
    assert_eq!(run["generator"]["reads_at_wakeups"], true, "{summary}");
    assert!(
        summary.contains("responses read at its wake-ups"),
        "{summary}"
    );
    // Latency counts from the intended time: never below the service time.
    assert!(run["latency_ms"]["p50"].as_f64() >= run["service_time_ms"]["p50"].as_f64());
    // A run this short is recorded in 100 ms slices, so its charts still draw a curve; each
    // slice holds enough requests to be its own window.
    // (A last short one holds the drain after the arrivals stopped.)
    let planned: Vec<&Value> = run["intervals"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["t"].as_f64().unwrap() < 0.999)
        .collect();
    assert_eq!(planned.len(), 10, "{:?}", run["intervals"]);
    assert!(planned
        .iter()
        .all(|s| (s["length_s"].as_f64().unwrap() - 0.1).abs() < 0.002));
    let windows = run["windows"].as_array().unwrap();
    assert_eq!(
        windows.len(),
        run["intervals"].as_array().unwrap().len(),
        "{windows:?}"
    );
}

/// `load.batch_window` sets how late dense arrivals may start together, and
/// `--batch-window` overrides it: a 5 ms window puts the median arrival milliseconds late
/// (not late for validity: the window is the allowance), a window of 0 starts each at its own
/// time. The
/// record and the summary say which window the run used.
#[test]
fn the_batch_window_is_the_files_or_the_flags_and_the_lag_follows_it() {
    let _serial = exclusive();
    let target = Target::start(&[]);
    let dir = common::scratch_dir("loadlab-batch-window-");
    let file = dir.path().join("windowed.yaml");
    std::fs::write(
        &file,
        format!(
            "target: {}\nload: {{ model: open, rate: 1000/s, duration: 1s, batch_window: 5ms }}\n\
             flows:\n  - name: ping\n    steps:\n      - get: /api/ping\n",
            target.url
        ),
    )
    .unwrap();
    let file = file.to_str().unwrap();
    let (wide_summary, wide) = run_json(&[file]);
    let (exact_summary, exact) = run_json(&[file, "--batch-window", "0"]);
    assert_eq!(wide["generator"]["batch_window_ms"].as_f64(), Some(5.0));
    assert!(
        wide_summary.contains("batch window 5.00ms"),
        "{wide_summary}"
    );
    assert_eq!(exact["generator"]["batch_window_ms"].as_f64(), Some(0.0));
    for (summary, run) in [(&wide_summary, &wide), (&exact_summary, &exact)] {
        assert_eq!(run["iterations"]["dropped"], 0, "{summary}");
        assert_eq!(run["requests"]["failed"], 0, "{summary}");
        // The window is the allowance for send lag: batching alone never makes a run late.
        // (Other reasons, a busy CI machine's, are the retries' business.)
        let reasons = run["validity"]["reasons"].as_array().unwrap();
        assert!(
            !reasons.iter().any(|r| r["kind"] == "scheduler_late"),
            "{summary}"
        );
    }
    let lag_p50 = |run: &Value| run["lag_ms"]["p50"].as_f64().unwrap();
    // Arrivals 1 ms apart, started 5 ms after the first of each batch: 2–3 ms late at the
    // median; the same machine starting each on its own is late by its wake-up only.
    assert!(lag_p50(&wide) >= 1.5, "{wide_summary}");
    assert!(
        lag_p50(&exact) + 1.0 < lag_p50(&wide),
        "window 0: lag p50 {} ms, window 5ms: {} ms",
        lag_p50(&exact),
        lag_p50(&wide)
    );
    // A closed load has no arrivals to group: the flag is refused, naming it.
    let out = Command::new(BIN)
        .args([
            "run",
            "--url",
            &target.url,
            "--vus",
            "1",
            "--duration",
            "1s",
        ])
        .args(["--batch-window", "0", "--no-progress"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--batch-window") && err.contains("--rate"),
        "{err}"
    );
}

/// Responses read at the scheduler's next wake-up (sparse arrivals: up to 2 ms after they
/// came) still end when their bytes arrived: the client's service time stays within a
/// fraction of a millisecond of the time the server says it took, where the moment of the
/// read would add a millisecond or more.
#[test]
fn responses_read_at_a_later_wake_up_are_timed_when_they_arrived() {
    responses_timed_when_they_arrived(&[]);
}

/// The same over h2c with the own HTTP/2 client: its connection is read at the wake-ups too,
/// and each response's head and end are the kernel's receive stamps of their frames.
#[test]
fn h2c_responses_read_at_a_later_wake_up_are_timed_when_they_arrived() {
    responses_timed_when_they_arrived(&["--http2"]);
}

fn responses_timed_when_they_arrived(extra: &[&str]) {
    let _serial = exclusive();
    let target = Target::start(&["--service-time", "5ms", "--service-dist", "fixed"]);
    let url = format!("{}/api/ping", target.url);
    let mut args = vec!["--url", &url, "--rate", "100/s", "--duration", "1s"];
    args.extend_from_slice(extra);
    let (summary, run) = run_json(&args);
    assert_eq!(run["generator"]["reads_at_wakeups"], true, "{summary}");
    assert_eq!(run["requests"]["failed"], 0, "{summary}");
    let client = run["service_time_ms"]["p50"].as_f64().unwrap();
    let server = run["server_latency_ms"]["p50"].as_f64().unwrap();
    assert!(server >= 5.0, "{summary}");
    assert!(
        client >= server && client - server < 0.6,
        "service time p50 {client} ms against the server's {server} ms\n{summary}"
    );
    // The first byte came with the rest: waiting is the service time, receiving nothing.
    // (Medians of two distributions differ by a little on a busy host: 0.10 ms was seen;
    // a head read at the later wake-up would put a millisecond or more between them.)
    let waiting = run["phases_ms"]["waiting"]["p50"].as_f64().unwrap();
    assert!((client - waiting).abs() < 0.3, "{summary}");
}
