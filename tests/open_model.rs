//! End-to-end: the open model at a high rate against `loadlab target` delivers its plan (every
//! planned arrival sent, within 1%, none dropped) and records how late each one started.

mod common;

use common::{exclusive, Target, BIN};
use serde_json::Value;
use std::process::Command;

/// High for a debug build on a 2-core CI machine, and ~1 s of load.
const RATE: f64 = 8_000.0;

#[test]
fn a_high_rate_is_delivered_within_one_percent_and_its_lag_recorded() {
    let _serial = exclusive();
    let target = Target::start(&[]);
    let url = format!("{}/api/ping", target.url);
    let dir = std::env::temp_dir().join(format!("loadlab-open-model-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let json = dir.join("run.json");
    let rate = format!("{RATE}/s");
    let out = Command::new(BIN)
        .args(["run", "--url", &url, "--rate", &rate, "--duration", "1s"])
        .args(["--no-progress", "--allow-saturated", "--json"])
        .arg(&json)
        .env("LOADLAB_RESULTS", dir.join("results"))
        .output()
        .expect("run loadlab");
    let text = std::fs::read_to_string(&json).unwrap_or_else(|e| {
        panic!(
            "no JSON written ({e}): {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let run: Value = serde_json::from_str(&text).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let summary = String::from_utf8_lossy(&out.stdout);

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
    // Latency counts from the intended time: never below the service time.
    assert!(run["latency_ms"]["p50"].as_f64() >= run["service_time_ms"]["p50"].as_f64());
}
