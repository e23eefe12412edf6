//! The k6-like breakdown end to end against `loadlab target`: connect, TLS handshake,
//! waiting (time to first byte) and receiving per request over HTTP/1.1, TLS and h2c, with
//! bytes, iteration duration and VUs max, in `run.json` and the terminal summary.

mod common;

use common::{exclusive, Target, BIN};
use serde_json::Value;
use std::process::Command;

/// Runs `loadlab run <args>` for about a second; returns the summary printed and `run.json`.
fn run(args: &[&str]) -> (String, Value) {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let out = Command::new(BIN)
        .arg("run")
        .args(args)
        .args(["--vus", "4", "--duration", "1s", "--no-progress"])
        .args(["--retry-invalid", "2"])
        .arg("--json")
        .arg(&json)
        .env("LOADLAB_RESULTS", dir.path().join("results"))
        .output()
        .expect("run loadlab");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(
        out.status.code(),
        Some(0),
        "loadlab {args:?}\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    (stdout, r)
}

fn f(v: &Value, path: &str) -> f64 {
    v.pointer(path)
        .and_then(Value::as_f64)
        .unwrap_or_else(|| panic!("no number at {path} in {v:#}"))
}

/// What every run's breakdown must say, whatever the protocol.
fn assert_consistent(r: &Value, tls: bool, what: &str) {
    assert_eq!(
        f(r, "/requests/failed"),
        0.0,
        "{what}: {}",
        r["error_examples"]
    );
    let requests = f(r, "/requests/total");
    assert!(requests > 20.0, "{what}: {requests} requests");
    let opened: f64 = r["origins"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|o| o["connections"].as_object().unwrap().values())
        .map(|n| n.as_f64().unwrap())
        .sum();
    assert!(opened >= 1.0, "{what}");
    let p = &r["phases_ms"];
    // Connect and TLS count the requests that opened a connection: one per connection.
    assert_eq!(f(p, "/connect/count"), opened, "{what}: {p:#}");
    if tls {
        assert_eq!(f(p, "/tls_handshake/count"), opened, "{what}");
        assert!(f(p, "/tls_handshake/p50") > 0.0, "{what}");
    } else {
        assert!(
            p.get("tls_handshake").is_none(),
            "{what}: no TLS, no handshake"
        );
    }
    // Every answered request has its waiting and receiving, and together they are at most
    // its service time (means add exactly; medians nearly, as receiving is tiny here).
    for phase in ["waiting", "receiving"] {
        assert_eq!(
            f(p, &format!("/{phase}/count")),
            requests,
            "{what}: {phase}"
        );
    }
    let service = &r["service_time_ms"];
    let tolerance = 1.01; // HDR buckets: 3 significant digits
    assert!(
        f(p, "/waiting/mean") + f(p, "/receiving/mean") <= f(service, "/mean") * tolerance,
        "{what}: means {p:#} vs {service:#}"
    );
    assert!(
        f(p, "/waiting/p50") + f(p, "/receiving/p50") <= f(service, "/p50") * tolerance + 0.01,
        "{what}: medians {p:#} vs {service:#}"
    );
    // The target takes 5 ms before it answers: that is time to first byte.
    assert!(f(p, "/waiting/p50") >= 4.9, "{what}: {p:#}");
    // The same per step, and the histograms are there for exact merges.
    assert_eq!(r["steps"][0]["phases_ms"], *p, "{what}: one step");
    for h in ["connect", "waiting", "receiving", "iteration_duration"] {
        assert!(
            r["histograms"][h].as_str().is_some_and(|s| !s.is_empty()),
            "{what}: {h}"
        );
    }
    // k6's data_sent/_received, iteration_duration and vus_max.
    assert!(f(r, "/bytes/received") >= requests * 2.0, "{what}");
    assert!(f(r, "/bytes/received_per_s") > 0.0 && f(r, "/bytes/sent_per_s") > 0.0);
    let iterations = &r["iterations"];
    assert_eq!(
        f(iterations, "/duration_ms/count"),
        f(iterations, "/completed"),
        "{what}"
    );
    assert!(
        f(iterations, "/duration_ms/p50") >= f(service, "/min"),
        "{what}"
    );
    assert_eq!(f(r, "/vus_max"), 4.0, "{what}");
}

#[test]
fn every_request_says_where_its_time_went() {
    let _serial = exclusive();
    let target = Target::start(&["--service-time", "5ms"]);
    let url = format!("{}/api/ping", target.url);
    let (summary, r) = run(&["--url", &url]);
    assert_consistent(&r, false, "http/1.1");
    // HTTP/1.1 counts the bytes on the wire: at least a status line and a head per response.
    assert!(f(&r, "/bytes/received") >= f(&r, "/requests/total") * 40.0);
    // Keep-alive: one connection per VU, so 4 connects for all the requests.
    assert_eq!(f(&r, "/phases_ms/connect/count"), 4.0);
    for label in [
        "  connect ...........: p50=",
        "  waiting (ttfb) ....: p50=",
        "  receiving .........: p50=",
        "  iteration duration : p50=",
        "  vus max ...........: 4",
        "  data ..............: ",
    ] {
        assert!(summary.contains(label), "no `{label}` in\n{summary}");
    }
    assert!(summary.contains("(4 connections opened)"), "{summary}");

    let (_, r) = run(&["--url", &url, "--http2"]);
    assert_consistent(&r, false, "h2c");

    let tls = Target::start(&["--tls", "--service-time", "5ms"]);
    let (summary, r) = run(&["--url", &format!("{}/api/ping", tls.url), "--insecure"]);
    assert_consistent(&r, true, "TLS");
    assert!(summary.contains("  tls handshake .....: p50="), "{summary}");
}
