//! `--out KIND=DEST` end to end: json and csv rows, Prometheus remote write into a real
//! Prometheus (queried back: counts equal the run's), OTLP into a receiver that decodes it,
//! and receivers that are down or stall without slowing the run or touching its record.

mod common;
#[path = "common/receiver.rs"]
mod receiver;

use common::undisturbed::until_undisturbed;
use common::{exclusive, status_counts as counts, text, Target, BIN};
use loadlab_live::outputs::otlp_proto::ExportMetricsServiceRequest;
use prost::Message;
use receiver::Receiver;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

const SCENARIO: &str = "name: live-out
load: { model: open, rate: 60/s, duration: 2s }
flows:
  - name: api
    weight: 3
    steps: [ { name: ping, get: /api/ping } ]
  - name: other
    weight: 1
    steps: [ { name: nothing, get: /nothing-here } ]
";

/// Runs the scenario against a fresh target with `args`, made again while the host disturbs
/// the run (`fresh` readies the receivers for each attempt; the files are written anew):
/// the last attempt's output, run.json and duration.
fn run(dir: &Path, args: &[&str], fresh: impl Fn()) -> (Output, Value, Duration) {
    let file = dir.join("s.yaml");
    std::fs::write(&file, SCENARIO).unwrap();
    let json = dir.join("run.json");
    let (_, result, (out, took)) = until_undisturbed("live outputs", || {
        fresh();
        let target = Target::start(&[]);
        let _ = std::fs::remove_file(&json);
        let started = Instant::now();
        let out = Command::new(BIN)
            .arg("run")
            .arg(&file)
            .args(["--target", &target.url, "--no-progress", "--results"])
            .arg(dir.join("results"))
            .arg("--json")
            .arg(&json)
            .args(args)
            .output()
            .unwrap();
        let took = started.elapsed();
        let result = std::fs::read_to_string(&json)
            .map(|t| serde_json::from_str(&t).unwrap())
            .unwrap_or(Value::Null);
        (out.status.code(), result, (out, took))
    });
    (out, result, took)
}

#[test]
fn json_and_csv_have_a_row_per_interval_and_step() {
    let _lock = exclusive();
    let dir = tempfile::tempdir().unwrap();
    let (jsonl, csv) = (dir.path().join("live.jsonl"), dir.path().join("live.csv"));
    let args = [
        format!("--out=json={}", jsonl.display()),
        format!("--out=csv={}", csv.display()),
    ];
    let (out, result, _) = run(dir.path(), &[&args[0], &args[1]], || {});
    assert!(out.status.success(), "{}", text(&out));
    let rows: Vec<Value> = std::fs::read_to_string(&jsonl)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let all: u64 = rows
        .iter()
        .filter(|r| r["step"] == "*")
        .map(|r| r["requests"].as_u64().unwrap())
        .sum();
    assert_eq!(
        all,
        result["requests"]["total"].as_u64().unwrap(),
        "{rows:?}"
    );
    let mut by_step: BTreeMap<(String, String), u64> = BTreeMap::new();
    for r in rows.iter().filter(|r| r["step"] != "*") {
        for (status, n) in r["statuses"].as_object().unwrap() {
            let key = (r["step"].as_str().unwrap().to_string(), status.clone());
            *by_step.entry(key).or_default() += n.as_u64().unwrap();
        }
    }
    assert_eq!(by_step, counts(&result));
    let intervals = rows.iter().filter(|r| r["step"] == "*").count();
    assert!(intervals >= 2, "{intervals} intervals");
    assert_eq!(
        rows.len(),
        intervals * 3,
        "a row for all steps, then one per step"
    );
    let csv = std::fs::read_to_string(&csv).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines[0], loadlab_live::outputs::csv::HEADER);
    assert_eq!(lines.len(), rows.len() + 1);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(&format!(
            "output json ({}): {intervals} intervals sent",
            jsonl.display()
        )),
        "{stdout}"
    );
}

#[test]
fn otlp_reaches_a_receiver_with_the_runs_counts() {
    let _lock = exclusive();
    let dir = tempfile::tempdir().unwrap();
    let rx = Receiver::start("/v1/metrics", false);
    let (out, result, _) = run(dir.path(), &[&format!("--out=otlp={}", rx.url)], || {
        rx.clear()
    });
    assert!(out.status.success(), "{}", text(&out));
    let got = rx.requests();
    assert!(got.len() >= 2, "{} exports", got.len());
    assert_eq!(got[0].path, "/v1/metrics");
    assert_eq!(
        got[0].header("content-type"),
        Some("application/x-protobuf")
    );
    let last = ExportMetricsServiceRequest::decode(&got.last().unwrap().body[..]).unwrap();
    let rm = &last.resource_metrics[0];
    let attr = |kvs: &[loadlab_live::outputs::otlp_proto::KeyValue], k: &str| {
        kvs.iter()
            .find(|kv| kv.key == k)
            .and_then(|kv| kv.value.clone()?.string_value)
    };
    let resource = &rm.resource.as_ref().unwrap().attributes;
    assert_eq!(attr(resource, "service.name").as_deref(), Some("loadlab"));
    let metrics = &rm.scope_metrics[0].metrics;
    let requests = metrics
        .iter()
        .find(|m| m.name == "loadlab.http.requests")
        .unwrap();
    let sum = requests.sum.as_ref().unwrap();
    assert!(sum.is_monotonic);
    let mut seen = BTreeMap::new();
    for p in &sum.data_points {
        let key = (
            attr(&p.attributes, "step").unwrap(),
            attr(&p.attributes, "status").unwrap(),
        );
        seen.insert(key, p.as_double.unwrap() as u64);
    }
    assert_eq!(seen, counts(&result));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(&format!(
            "output otlp ({}): {} intervals sent",
            rx.url,
            got.len()
        )),
        "{stdout}"
    );
}

#[test]
fn a_down_or_stalled_receiver_costs_the_run_nothing() {
    let _lock = exclusive();
    let dir = tempfile::tempdir().unwrap();
    let down = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}/api/v1/write", l.local_addr().unwrap())
    };
    let stall = Receiver::start("/v1/metrics", true);
    let (out, result, took) = run(
        dir.path(),
        &[
            &format!("--out=prometheus-rw={down}"),
            &format!("--out=otlp={}", stall.url),
        ],
        || {},
    );
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        result["requests"]["total"].as_u64().unwrap() >= 100,
        "{result}"
    );
    // 2 s planned + 2 s flush bound + start-up and storing.
    assert!(took < Duration::from_secs(7), "took {took:?}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = |kind: &str| {
        stdout
            .lines()
            .find(|l| l.starts_with(&format!("output {kind} ")))
            .unwrap_or_else(|| panic!("no {kind} line in {stdout}"))
            .to_string()
    };
    let prom = line("prometheus-rw");
    assert!(
        prom.contains(": 0 intervals sent") && prom.contains("failed"),
        "{prom}"
    );
    assert!(prom.to_lowercase().contains("refused"), "{prom}");
    let otlp = line("otlp");
    assert!(
        otlp.contains(": 0 intervals sent") && otlp.contains("failed"),
        "{otlp}"
    );
}

#[test]
fn bad_outputs_are_bad_input() {
    let out = Command::new(BIN)
        .args([
            "run",
            "--url",
            "http://127.0.0.1:9/",
            "--out",
            "influx=http://x",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--out") && err.contains("unknown output kind `influx`"),
        "{err}"
    );
    assert!(err.contains("json, csv, prometheus-rw, otlp"), "{err}");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("s.yaml");
    std::fs::write(
        &file,
        format!("{SCENARIO}outputs:\n  - json: live.jsonl\n  - otlp: localhost:4318\n"),
    )
    .unwrap();
    let out = Command::new(BIN).arg("run").arg(&file).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("s.yaml:12:") && err.contains("outputs[1]") && err.contains("http://"),
        "{err}"
    );
}
