//! Closed-model latency compensated for coordinated omission, end to end: 10 VUs paced at
//! 100 ms against the built-in target stalling for 0.5 s. The raw latency hides the stall
//! below p95 (each VU sent one request into it and waited); the compensated one shows the
//! sends the schedule would have made meanwhile. It equals, within the histograms'
//! precision, wrk2's correction written out here from the raw histogram and the schedule, and
//! a threshold on it fails the run where the same bound on the raw latency passes. Without
//! a pace the schedule is inferred from the first iterations. Two segments merged give the
//! correction of the merged raw histogram.

mod common;

use common::{assert_matches_run_schema, assert_valid, exclusive, text, Target, BIN};
use serde_json::Value;
use std::path::PathBuf;
use std::process::Command;

/// A scratch directory removed when the returned guard is dropped.
fn workdir(name: &str) -> tempfile::TempDir {
    common::scratch_dir(&format!("loadlab-compensation-{name}-"))
}

/// Runs `scenario` against `target`; returns the exit code and run.json.
fn run(dir: &std::path::Path, target: &Target, scenario: &str) -> (i32, Value) {
    std::fs::write(dir.join("s.yaml"), scenario).unwrap();
    let out = Command::new(BIN)
        .arg("run")
        .arg(dir.join("s.yaml"))
        .args([
            "--target",
            &target.url,
            "--no-progress",
            "--retry-invalid",
            "2",
        ])
        .arg("--json")
        .arg(dir.join("run.json"))
        .arg("--results")
        .arg(dir.join("results"))
        .output()
        .unwrap();
    let json = std::fs::read_to_string(dir.join("run.json"))
        .unwrap_or_else(|_| panic!("no run.json\n{}", text(&out)));
    (
        out.status.code().unwrap_or(-1),
        serde_json::from_str(&json).unwrap(),
    )
}

fn decode(encoded: &str) -> loadlab_metrics::LatencyHistogram {
    loadlab_metrics::result::decode_histogram(encoded).expect("a histogram")
}

/// wrk2's correction, by hand: every recorded latency above the interval also stands for the
/// sends at latency − interval, − 2·interval, … while they are at least the interval.
fn corrected_by_hand(raw: &loadlab_metrics::LatencyHistogram, interval_us: u64) -> Vec<u64> {
    let mut values = Vec::new();
    for v in raw.iter_recorded() {
        let value = raw.highest_equivalent(v.value_iterated_to());
        for _ in 0..v.count_at_value() {
            values.push(value);
            let mut missed = value.saturating_sub(interval_us);
            while value > interval_us && missed >= interval_us {
                values.push(missed);
                missed -= interval_us;
            }
        }
    }
    values.sort_unstable();
    values
}

/// The nearest-rank percentile of sorted µs values, in ms.
fn percentile_ms(sorted: &[u64], q: f64) -> f64 {
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1] as f64 / 1e3
}

/// `run`'s compensated latency is wrk2's correction of its raw histogram on `interval_us`:
/// the same count, and p50/p90/p95/p99 within the histograms' precision.
fn assert_corrected_by_hand(run: &Value, interval_us: u64) {
    let raw = decode(run["histograms"]["latency"].as_str().unwrap());
    let by_hand = corrected_by_hand(&raw, interval_us);
    let compensated = &run["latency_compensated_ms"];
    assert_eq!(compensated["count"].as_u64().unwrap(), by_hand.len() as u64);
    for (label, q) in [("p50", 0.5), ("p90", 0.9), ("p95", 0.95), ("p99", 0.99)] {
        let (got, want) = (
            compensated[label].as_f64().unwrap(),
            percentile_ms(&by_hand, q),
        );
        assert!(
            (got - want).abs() <= 2e-3 * want + 0.002,
            "{label}: {got} ms against {want} ms by hand"
        );
    }
}

#[test]
fn a_stall_hidden_by_the_closed_model_shows_in_the_compensated_latency() {
    let _load = exclusive();
    // Stalls from 1.5 s to 2 s after the first request (the next one would be after the run).
    let target = Target::start(&["--stall-every", "2s", "--stall-for", "500ms"]);
    let tmp = workdir("paced");
    let dir = tmp.path();
    let (code, r) = run(
        dir,
        &target,
        "load: { model: closed, vus: 10, duration: 3s, pace: 100ms }\n\
         steps: [ { name: ping, get: /api/ping } ]\n\
         thresholds:\n\
         \x20 - latency.p90 < 100ms\n\
         \x20 - latency_compensated.p90 < 100ms\n",
    );
    assert_valid(&r, "paced run");
    assert_matches_run_schema(&r);
    let summary = format!("{:#}", r["compensation"]);
    assert_eq!(r["load"]["pace_ms"], 100.0, "{summary}");
    assert_eq!(r["compensation"]["source"], "pace", "{summary}");
    assert_eq!(r["compensation"]["interval_ms"], 100.0, "{summary}");
    // Paced: at most 10 iterations a second per VU (30 a VU over 3 s), fewer with the stall.
    let total = r["requests"]["total"].as_u64().unwrap();
    assert!((200..=310).contains(&total), "{total} requests");
    // Each VU waited out the stall once: about 10 of the requests, under 5% of them.
    let raw_p90 = r["latency_ms"]["p90"].as_f64().unwrap();
    let raw_max = r["latency_ms"]["max"].as_f64().unwrap();
    assert!(raw_p90 < 50.0, "raw p90 {raw_p90} ms");
    assert!(raw_max > 300.0, "the stall was not hit: max {raw_max} ms");
    // The schedule's missed sends fill the tail: the compensated p90 sits inside the stall.
    let compensated = &r["latency_compensated_ms"];
    let p90 = compensated["p90"].as_f64().unwrap();
    assert!(p90 > 100.0, "compensated p90 {p90} ms (raw {raw_p90} ms)");
    assert!(
        r["compensation"]["ratio"].as_f64().unwrap() > 5.0,
        "{summary}"
    );
    // Independently: wrk2's correction of the raw histogram, within HDR precision.
    assert_corrected_by_hand(&r, 100_000);
    // The step carries it too, and the threshold on it fails where the raw one passes.
    assert_eq!(
        r["steps"][0]["latency_compensated_ms"]["p90"],
        compensated["p90"]
    );
    let thresholds = r["thresholds"].as_array().unwrap();
    assert_eq!(thresholds[0]["ok"], true, "{thresholds:?}");
    assert_eq!(thresholds[1]["ok"], false, "{thresholds:?}");
    assert_eq!(code, 1, "a failed threshold exits 1");
}

#[test]
fn without_a_pace_the_schedule_is_inferred_from_the_first_iterations() {
    let _load = exclusive();
    let target = Target::start(&["--service-time", "20ms"]);
    let tmp = workdir("inferred");
    let dir = tmp.path();
    let (code, r) = run(
        dir,
        &target,
        "load: { model: closed, vus: 2, duration: 1500ms }\n\
         steps: [ { get: /api/ping }, { think: 30ms } ]\n",
    );
    assert_eq!(code, 0, "{:#}", r["validity"]);
    assert_valid(&r, "unpaced run");
    let c = &r["compensation"];
    assert_eq!(c["source"], "inferred", "{c:#}");
    assert!(c["inferred_from"].as_u64().unwrap() >= 20, "{c:#}");
    // One iteration: 20 ms of service and 30 ms of thought.
    let interval = c["interval_ms"].as_f64().unwrap();
    assert!((45.0..80.0).contains(&interval), "{c:#}");
    // A steady target: nothing outlasts the schedule, so nothing changes.
    assert_eq!(
        r["latency_compensated_ms"]["p99"], r["latency_ms"]["p99"],
        "{c:#}"
    );
    // The open model has no schedule to compensate for.
    let (_, open) = run(
        dir,
        &target,
        "load: { model: open, rate: 20/s, duration: 1s }\nsteps: [ { get: /api/ping } ]\n",
    );
    assert!(
        open.get("compensation").is_none(),
        "{:#}",
        open["compensation"]
    );
    assert!(open.get("latency_compensated_ms").is_none());
}

#[test]
fn segments_merged_are_compensated_like_one_run() {
    let _load = exclusive();
    let target = Target::start(&["--stall-every", "2s", "--stall-for", "500ms"]);
    let tmp = workdir("segments");
    let dir = tmp.path();
    std::fs::write(
        dir.join("s.yaml"),
        format!(
            "target: {}
load: {{ model: closed, vus: 4, duration: 3s, pace: 100ms }}
steps: [ {{ get: /api/ping }} ]
",
            target.url
        ),
    )
    .unwrap();
    // Both segments start together, a whole second at least two seconds ahead.
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let at = loadlab_metrics::result::rfc3339(
        std::time::UNIX_EPOCH + std::time::Duration::from_secs(now + 3),
    );
    let children: Vec<_> = (0..2)
        .map(|i| {
            Command::new(BIN)
                .arg("run")
                .arg(dir.join("s.yaml"))
                .args(["--quiet", "--no-progress", "--segment", &format!("{i}/2")])
                .args(["--start-at", &at, "--results"])
                .arg(dir.join("results"))
                .spawn()
                .unwrap()
        })
        .collect();
    for mut c in children {
        assert!(c.wait().unwrap().success(), "a segment failed");
    }
    let runs: Vec<PathBuf> = std::fs::read_dir(dir.join("results/runs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(runs.len(), 2);
    let out = Command::new(BIN)
        .arg("merge")
        .args(&runs)
        .arg("--json")
        .arg(dir.join("merged.json"))
        .arg("--results")
        .arg(dir.join("results"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let merged: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("merged.json")).unwrap()).unwrap();
    assert_eq!(
        merged["compensation"]["source"], "pace",
        "{:#}",
        merged["compensation"]
    );
    assert_corrected_by_hand(&merged, 100_000);
    // The stall was in it: the merge did not lose the correction.
    let count = |key: &str| merged[key]["count"].as_u64();
    assert!(count("latency_compensated_ms") > count("latency_ms"));
}

#[test]
fn a_pace_is_checked_like_any_field() {
    let tmp = workdir("bad-pace");
    let dir = tmp.path();
    for (yaml, want) in [
        (
            "load: { model: closed, vus: 1, duration: 1s, pace: 0s }\n",
            "`pace` must be above zero",
        ),
        (
            "load: { model: open, rate: 1/s, duration: 1s, pace: 1s }\n",
            "`pace` does not apply to the open model",
        ),
    ] {
        std::fs::write(
            dir.join("s.yaml"),
            format!("target: http://127.0.0.1:9\n{yaml}steps: [ {{ get: / }} ]\n"),
        )
        .unwrap();
        let out = Command::new(BIN)
            .args(["run", "--no-progress"])
            .arg(dir.join("s.yaml"))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{}", text(&out));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains(want) && stderr.contains("load.pace"),
            "{stderr}"
        );
    }
}

/// `--pace` paces `--vus` from the command line: 4 VUs at 50 ms for 1 s send about 80
/// requests, the schedule is the declared one, and `--pace` with `--rate` is refused.
#[test]
fn the_pace_flag_paces_virtual_users_from_the_command_line() {
    let _load = exclusive();
    let target = Target::start(&[]);
    let tmp = workdir("pace-flag");
    let dir = tmp.path();
    let url = format!("{}/api/ping", target.url);
    let json = dir.join("run.json");
    let out = Command::new(BIN)
        .args(["run", "--url", &url, "--vus", "4", "--pace", "50ms"])
        .args(["--duration", "1s", "--no-progress", "--retry-invalid", "2"])
        .arg("--json")
        .arg(&json)
        .arg("--results")
        .arg(dir.join("results"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let r: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_valid(&r, "paced run");
    assert_eq!(r["load"]["pace_ms"], 50.0, "{}", r["load"]);
    assert_eq!(r["compensation"]["source"], "pace", "{}", r["compensation"]);
    let total = r["requests"]["total"].as_u64().unwrap();
    // 4 VUs × 20 slots; the last slot of each may fall at the end.
    assert!((72..=84).contains(&total), "{total} requests");
    let out = Command::new(BIN)
        .args(["run", "--url", &url, "--rate", "10/s", "--pace", "50ms"])
        .args(["--duration", "1s", "--no-progress"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--pace") && stderr.contains("--vus"),
        "{stderr}"
    );
}
