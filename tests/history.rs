//! `loadlab history` end to end: labelled short runs against the built-in target, whose
//! service time is raised half-way (the target restarted on the same port, so the runs keep
//! one plan), then `history --json`: one series per metric, the labels, and the change point
//! at the first slow run. Runs are paced (`--rate`, half a second each) so they are valid on a
//! quiet 2-core machine.

mod common;

use common::{exclusive, Target, BIN};
use std::path::Path;
use std::process::Command;

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn run(results: &Path, url: &str, commit: &str) {
    let out = Command::new(BIN)
        .args(["run", "--url", url, "--rate", "40/s", "--duration", "500ms"])
        .args([
            "--no-progress",
            "--quiet",
            "--label",
            &format!("commit={commit}"),
        ])
        .arg("--results")
        .arg(results)
        .env("LOADLAB_LABELS", "branch=main")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "run {commit}: {:?}\n{}{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn history(results: &Path, args: &[&str]) -> std::process::Output {
    Command::new(BIN)
        .arg("history")
        .args(args)
        .arg("--results")
        .arg(results)
        .output()
        .unwrap()
}

#[test]
fn a_slower_target_is_one_change_point_with_its_commit() {
    let _guard = exclusive();
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results");
    let listen = format!("127.0.0.1:{}", free_port());
    let url = format!("http://{listen}/api/ping");
    {
        let _fast = Target::start_on(&listen, &["--service-time", "1ms"]);
        for i in 0..5 {
            run(&results, &url, &format!("c{i}"));
        }
    }
    {
        let _slow = Target::start_on(&listen, &["--service-time", "15ms"]);
        for i in 5..10 {
            run(&results, &url, &format!("c{i}"));
        }
    }
    // A `--url` test is named by its method and URL.
    let name = format!("GET {url}");

    let json = dir.path().join("history.json");
    let out = history(
        &results,
        &[
            &name,
            "--metric",
            "latency_ms.p50",
            "--json",
            json.to_str().unwrap(),
        ],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let h: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(h["schema"], "loadlab.history.v1");
    assert_eq!(h["series"].as_array().unwrap().len(), 1, "{stdout}");
    let points = h["series"][0]["points"].as_array().unwrap();
    assert_eq!(points.len(), 10, "{stdout}");
    assert_eq!(points[3]["labels"]["commit"], "c3");
    assert_eq!(
        points[3]["labels"]["branch"], "main",
        "LOADLAB_LABELS is stored"
    );
    let cps = h["change_points"].as_array().unwrap();
    assert_eq!(cps.len(), 1, "{stdout}");
    assert_eq!(cps[0]["index"], 5);
    assert_eq!(cps[0]["labels"]["commit"], "c5");
    assert_eq!(cps[0]["verdict"], "slower");
    assert!(cps[0]["change"].as_f64().unwrap() > 1.0, "{}", cps[0]);
    assert!(stdout.contains("change points:"), "{stdout}");

    // Filtered by label: only the fast commits, no change.
    let out = history(
        &results,
        &[&name, "--label", "commit=c1", "--metric", "latency_ms.p50"],
    );
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("no change point"));

    // Bad input: exit 2 naming the fix.
    let out = history(&results, &["no-such-scenario"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("names in the store"));
    let out = history(&results, &[&name, "--metric", "latency_ms.p42"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--metric latency_ms.p42"));
}
