//! End to end: `loadlab capacity` finds the capacity of a target whose capacity is known
//! (4 workers × 10 ms fixed service time = 400 req/s) under `latency.p95 < 50ms`.

mod common;

use common::{Target, BIN};

use serde_json::Value;
use std::path::Path;
use std::process::Command;

#[test]
fn capacity_of_a_known_target_is_found() {
    let target = Target::start(&[
        "--workers",
        "4",
        "--service-time",
        "10ms",
        "--service-dist",
        "fixed",
    ]);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("cap.yaml");
    std::fs::write(
        &file,
        format!(
            "name: cap\ntarget: {}\nload: {{ model: open, stages: [ {{ duration: 1s, rate: 10/s }} ] }}\n\
             thresholds: [ latency.p95 < 50ms ]\nflows:\n  - name: api\n    steps: [ {{ get: /api/ping }} ]\n\
             capacity: {{ start: 100/s, hold: 30s, warmup: 5s, precision: 5%, confirm: 3 }}\n",
            target.url
        ),
    )
    .unwrap();
    let json = dir.path().join("capacity.json");
    // Short steps (flags override the section): the answer is still bounded by the target.
    let out = Command::new(BIN)
        .args([
            "capacity",
            file.to_str().unwrap(),
            "--hold",
            "2s",
            "--warmup",
            "1s",
            "--precision",
            "10%",
            "--confirm",
            "2",
            "--json",
            json.to_str().unwrap(),
        ])
        .env("LOADLAB_RESULTS", dir.path().join("results"))
        .output()
        .unwrap();
    let said = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.status.code(), Some(0), "{said}");
    let cap: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/schema/capacity.v1.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator.iter_errors(&cap).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(cap["schema"], "loadlab.capacity.v1");
    assert_eq!(cap["settings"]["hold_s"], 2.0);
    let max = cap["max_rate"].as_f64().expect("a capacity was found");
    assert!((250.0..=400.0).contains(&max), "capacity {max}: {said}");
    let steps = cap["steps"].as_array().unwrap();
    let confirms: Vec<&Value> = steps.iter().filter(|s| s["phase"] == "confirm").collect();
    assert!(confirms.len() >= 2);
    assert!(
        steps.iter().any(|s| s["passed"] == false),
        "the bracket has a failing end"
    );
    for s in steps {
        assert!(s["run"].as_str().unwrap().starts_with('r'));
    }
    assert!(said.contains("capacity:"), "{said}");
    // How long it takes: a step's length up front, the time left once the bracket is found.
    assert!(said.contains("each step takes 3s"), "{said}");
    let bisecting = said
        .lines()
        .find(|l| l.contains("[bisect ]") || l.contains("[confirm]"))
        .expect("a bisection or confirmation step");
    assert!(bisecting.contains("left, about "), "{bisecting}");
}
