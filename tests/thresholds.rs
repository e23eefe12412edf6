//! Thresholds on any percentile of any scope are evaluated from that scope's histogram in the
//! run record (`step.X.latency.p97`, `group.X.latency.p99.9`, `step.X.waiting.p42`), and pass
//! and fail on real runs.

mod common;

use common::{exclusive, Target, BIN};
use serde_json::Value;
use std::process::Command;

#[test]
fn unusual_percentiles_of_steps_and_groups_pass_and_fail_on_real_histograms() {
    let _serial = exclusive();
    let target = Target::start(&["--service-time", "5ms"]);
    let tmp = common::scratch_dir("loadlab-thresholds-");
    let dir = tmp.path();
    let file = dir.join("t.yaml");
    std::fs::write(
        &file,
        "load: { model: open, rate: 100/s, duration: 1s }\n\
         thresholds:\n\
         \x20 - step.ping.latency.p97 < 2s\n\
         \x20 - group.api.latency.p99.9 < 2s\n\
         \x20 - step.ping.service_time.p42 > 1ms\n\
         \x20 - waiting.p95 > 4ms\n\
         \x20 - step.ping.http_req_waiting.p42 > 4ms\n\
         \x20 - connect.max < 2s\n\
         \x20 - step.ping.latency.p97 < 2ms\n\
         steps:\n\
         \x20 - { name: ping, group: api, get: /api/ping }\n",
    )
    .unwrap();
    let json = dir.join("out.json");
    let out = Command::new(BIN)
        .args([
            "run",
            file.to_str().unwrap(),
            "--target",
            &target.url,
            "--no-progress",
            "--retry-invalid",
            "2",
        ])
        .arg("--json")
        .arg(&json)
        .arg("--results")
        .arg(dir.join("results"))
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "only the last threshold fails: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    let result: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let t = result["thresholds"].as_array().unwrap();
    let actual = |i: usize| {
        t[i]["actual"]
            .as_f64()
            .unwrap_or_else(|| panic!("no data for {}", t[i]["expr"]))
    };
    for (i, ok) in [
        (0, true),
        (1, true),
        (2, true),
        (3, true),
        (4, true),
        (5, true),
        (6, false),
    ] {
        assert_eq!(t[i]["ok"], ok, "{}", t[i]);
    }
    // The step's p97 comes from its own histogram: a 5 ms service time, not "no data".
    assert!((4.0..100.0).contains(&actual(0)), "{}", actual(0));
    assert_eq!(actual(0), actual(6));
    // The phases: the 5 ms are spent waiting for the first byte; any percentile of a step's
    // phase comes from its histogram; connects were timed.
    assert!(
        (4.0..100.0).contains(&actual(3)),
        "waiting p95 {}",
        actual(3)
    );
    assert!(
        (4.0..=actual(3)).contains(&actual(4)),
        "waiting p42 {}",
        actual(4)
    );
    assert!(
        actual(5) > 0.0 && actual(5) < 100.0,
        "connect max {}",
        actual(5)
    );
    assert!(actual(1) >= actual(0), "p99.9 ≥ p97");
    let summary = String::from_utf8_lossy(&out.stdout);
    assert!(summary.contains("step.ping.latency.p97 < 2ms"), "{summary}");
    let _ = std::fs::remove_dir_all(dir);
}
