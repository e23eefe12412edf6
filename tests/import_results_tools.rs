//! End-to-end with the real tools: vegeta and oha (installed by
//! scripts/install-load-tools.sh) load `loadlab target`, their outputs are imported, and the
//! runs agree with the target's own count and with the tools' own reports; an imported
//! vegeta run is compared with a native loadlab run at the same rate. Ten k6 outputs of one
//! test (k6's documented JSON format, generated here: k6's licence keeps it off the test
//! machines) become a study in one command, and runs imported out of order form a history
//! in the order they were made.

mod common;

use common::imported::import;
use common::{exclusive, text, Target, BIN};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A tool installed by scripts/install-load-tools.sh (or named by `env`).
fn tool(name: &str, env: &str) -> PathBuf {
    if let Some(p) = std::env::var_os(env) {
        return PathBuf::from(p);
    }
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(std::env::var("HOME").unwrap()).join(".cache"));
    let path = cache.join("loadlab-test-deps/bin").join(name);
    assert!(
        path.is_file(),
        "{name} is not installed: run scripts/install-load-tools.sh (or set {env})"
    );
    path
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The ids of the store's runs.
fn run_ids(results: &Path) -> std::collections::BTreeSet<String> {
    match std::fs::read_dir(results.join("runs")) {
        Ok(entries) => entries
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect(),
        Err(_) => Default::default(),
    }
}

/// The one run made since `before` was listed: its id and run.json.
fn new_run(results: &Path, before: &std::collections::BTreeSet<String>) -> (String, Value) {
    let new: Vec<String> = run_ids(results).difference(before).cloned().collect();
    assert_eq!(new.len(), 1, "one new run expected: {new:?}");
    let id = new[0].clone();
    let run = read_json(&results.join("runs").join(&id).join("run.json"));
    (id, run)
}

/// The target's count of `/api/ping` answered 200.
fn target_pings(url: &str) -> u64 {
    let client = loadlab_http_client::client(std::time::Duration::from_secs(5), "test").unwrap();
    let body = loadlab_http_client::send(client.get(format!("{url}/metrics")))
        .unwrap()
        .text()
        .unwrap();
    body.lines()
        .find(|l| l.starts_with("http_requests_total{route=\"/api/ping\",code=\"200\"}"))
        .and_then(|l| l.rsplit(' ').next()?.parse().ok())
        .unwrap_or(0)
}

/// `got` (ms, from the imported histogram) is, within HDR precision, one of the samples at
/// or next to rank `i` of `sorted` (ms): tools differ on which side of a rank they read.
fn assert_at_rank(got: f64, sorted: &[f64], i: usize, what: &str) {
    let lo = i.saturating_sub(1);
    let hi = (i + 1).min(sorted.len() - 1);
    let ok = sorted[lo..=hi]
        .iter()
        .any(|&v| (got - v).abs() <= v * 1e-3 + 1e-3);
    assert!(ok, "{what}: {got} ms is not one of {:?}", &sorted[lo..=hi]);
}

#[test]
fn vegeta_results_import_with_the_targets_count_and_compare_with_a_native_run() {
    let _guard = exclusive();
    let vegeta = tool("vegeta", "LOADLAB_TEST_VEGETA");
    let target = Target::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let ping = format!("{}/api/ping", target.url);
    let before = target_pings(&target.url);
    let bin = dir.path().join("results.bin");
    let attack = Command::new(&vegeta)
        .args(["attack", "-rate=200", "-duration=1s", "-output"])
        .arg(&bin)
        .stdin(
            std::fs::File::open(write(dir.path(), "targets.txt", &format!("GET {ping}\n")))
                .unwrap(),
        )
        .output()
        .unwrap();
    assert!(attack.status.success(), "{}", text(&attack));
    let answered = target_pings(&target.url) - before;
    let json = dir.path().join("results.json");
    let csv = dir.path().join("results.csv");
    for (to, path) in [("json", &json), ("csv", &csv)] {
        let encode = Command::new(&vegeta)
            .args(["encode", &format!("--to={to}"), "--output"])
            .arg(path)
            .arg(&bin)
            .output()
            .unwrap();
        assert!(encode.status.success(), "{}", text(&encode));
    }
    let report = Command::new(&vegeta)
        .args(["report", "-type=json"])
        .arg(&bin)
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&report.stdout).unwrap();
    let results = dir.path().join("store");
    let before = run_ids(&results);
    let out = import(
        &results,
        &[
            "vegeta-json",
            json.to_str().unwrap(),
            "--name",
            "ping",
            "--tool-version",
            "12.13.0",
        ],
    );
    assert!(out.status.success(), "{}", text(&out));
    let (imported_id, run) = new_run(&results, &before);
    assert_eq!(
        run["requests"]["total"].as_u64().unwrap(),
        answered,
        "the target's count"
    );
    assert_eq!(
        run["requests"]["total"], report["requests"],
        "vegeta's count"
    );
    assert_eq!(run["status_codes"]["200"].as_u64().unwrap(), answered);
    assert_eq!(run["load"]["model"], "open");
    assert_eq!(run["imported"]["tool"], "vegeta");
    // Exact against the requests themselves; vegeta's own report estimates its quantiles
    // with a t-digest, so it agrees within a few percent.
    let mut latencies: Vec<f64> = std::fs::read_to_string(&json)
        .unwrap()
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["latency"]
                .as_f64()
                .unwrap()
                / 1e6
        })
        .collect();
    latencies.sort_by(f64::total_cmp);
    let n = latencies.len();
    for (q, key, vegeta_key) in [
        (0.5, "p50", "50th"),
        (0.95, "p95", "95th"),
        (0.99, "p99", "99th"),
    ] {
        let got = run["latency_ms"][key].as_f64().unwrap();
        assert_at_rank(
            got,
            &latencies,
            ((q * n as f64).ceil() as usize).max(1) - 1,
            key,
        );
        // vegeta's t-digest interpolates between the samples around the rank.
        let theirs = report["latencies"][vegeta_key].as_f64().unwrap() / 1e6;
        let i = ((q * n as f64).ceil() as usize).max(1) - 1;
        let (lo, hi) = (
            latencies[i.saturating_sub(2)],
            latencies[(i + 2).min(n - 1)],
        );
        assert!(
            theirs >= lo * 0.99 && theirs <= hi * 1.01,
            "{key}: vegeta says {theirs} ms, the samples there are {lo}..{hi} ms"
        );
    }
    // The CSV encoding gives the same run.
    let before = run_ids(&results);
    let out = import(
        &results,
        &["vegeta-csv", csv.to_str().unwrap(), "--name", "ping-csv"],
    );
    assert!(out.status.success(), "{}", text(&out));
    let (_, from_csv) = new_run(&results, &before);
    assert_eq!(from_csv["requests"]["total"], run["requests"]["total"]);
    assert_eq!(
        from_csv["histograms"]["latency"],
        run["histograms"]["latency"]
    );

    // A native run at the same rate, compared with the imported one: a verdict, both tools named.
    let before = run_ids(&results);
    let native = Command::new(BIN)
        .args([
            "run",
            "--url",
            &ping,
            "--rate",
            "200/s",
            "--duration",
            "1s",
            "--no-progress",
            "--results",
        ])
        .arg(&results)
        .output()
        .unwrap();
    // On a busy machine the native run may be judged invalid (exit 3): it is still a stored
    // run to compare with.
    assert!(
        matches!(native.status.code(), Some(0 | 3)),
        "{}",
        text(&native)
    );
    let (native_id, _) = new_run(&results, &before);
    let compare = Command::new(BIN)
        .args(["compare", &native_id, &imported_id, "--results"])
        .arg(&results)
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&compare.stdout);
    assert!(
        compare.status.code().is_some_and(|c| c <= 1),
        "{}",
        text(&compare)
    );
    assert!(
        shown.contains("vegeta 12.13.0 (imported)") && shown.contains("loadlab"),
        "{}",
        text(&compare)
    );
    assert!(shown.contains("latency"), "{shown}");
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn oha_results_import_with_the_targets_count_and_its_percentiles() {
    let _guard = exclusive();
    let oha = tool("oha", "LOADLAB_TEST_OHA");
    let target = Target::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("oha.db");
    let before = target_pings(&target.url);
    let run = Command::new(&oha)
        .args([
            "-n",
            "400",
            "-c",
            "4",
            "--no-tui",
            "--output-format",
            "json",
            "--db-url",
        ])
        .arg(&db)
        .arg(format!("{}/api/ping", target.url))
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", text(&run));
    let answered = target_pings(&target.url) - before;
    let summary: Value = serde_json::from_slice(&run.stdout).unwrap();
    let results = dir.path().join("store");
    let out = import(
        &results,
        &["oha-sqlite", db.to_str().unwrap(), "--name", "oha-ping"],
    );
    assert!(out.status.success(), "{}", text(&out));
    let (_, imported) = new_run(&results, &Default::default());
    assert_eq!(imported["requests"]["total"].as_u64().unwrap(), answered);
    assert_eq!(answered, 400);
    // What oha leaves out of its database is said on the run.
    assert!(
        imported["notes"]
            .to_string()
            .contains("oha stores only the requests that got a response"),
        "{}",
        imported["notes"]
    );
    assert_eq!(
        imported["status_codes"]["200"],
        summary["statusCodeDistribution"]["200"]
    );
    // oha reads the sorted durations at index floor(p × n): compare at that rank.
    let conn_durations = durations_of(&db);
    for (q, key, theirs) in [
        (0.5, "p50", "p50"),
        (0.95, "p95", "p95"),
        (0.99, "p99", "p99"),
    ] {
        let got = imported["latency_ms"][key].as_f64().unwrap();
        let oha_ms = summary["latencyPercentiles"][theirs].as_f64().unwrap() * 1e3;
        // oha reads the sample at index ⌊p·n⌋, HDR the one at rank ⌈p·n⌉: the same sample or
        // the next one up, each within HDR precision.
        let i = (q * conn_durations.len() as f64) as usize;
        assert!(
            (oha_ms - conn_durations[i]).abs() <= 1e-3,
            "{key}: oha {oha_ms} is not sample {i}"
        );
        assert_at_rank(got, &conn_durations, i, key);
    }
}

/// The durations (ms) of an oha database, sorted.
fn durations_of(db: &Path) -> Vec<f64> {
    let out = Command::new("python3")
        .arg("-c")
        .arg("import sqlite3,sys; print('\\n'.join(str(r[0]) for r in sqlite3.connect(sys.argv[1]).execute('select duration from oha')))")
        .arg(db)
        .output()
        .unwrap();
    let mut v: Vec<f64> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| l.parse::<f64>().unwrap() * 1e3)
        .collect();
    v.sort_by(f64::total_cmp);
    v
}

/// A k6 JSON output of `n` requests to one URL, starting at `start_s` (Unix seconds), with
/// latencies drawn around `center_ms` (a deterministic sequence), as k6 writes them.
fn k6_output(path: &Path, start_s: u64, n: usize, center_ms: f64, seed: u64) -> Vec<f64> {
    use std::fmt::Write;
    let mut out = String::new();
    out.push_str("{\"type\":\"Metric\",\"data\":{\"name\":\"http_req_duration\",\"type\":\"trend\",\"contains\":\"time\",\"thresholds\":[],\"submetrics\":null},\"metric\":\"http_req_duration\"}\n");
    let mut x = seed;
    let mut values = Vec::new();
    for i in 0..n {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let u = (x >> 11) as f64 / (1u64 << 53) as f64;
        let v = center_ms * (0.5 + u) + if i % 50 == 0 { center_ms * 3.0 } else { 0.0 };
        let t_us = start_s * 1_000_000 + (i as u64) * 20_000;
        let (secs, micros) = (t_us / 1_000_000, t_us % 1_000_000);
        let time = format!("{}.{micros:06}000Z", rfc3339_seconds(secs));
        let tags = "{\"expected_response\":\"true\",\"group\":\"\",\"method\":\"GET\",\"name\":\"http://127.0.0.1:8080/api/ping\",\"proto\":\"HTTP/1.1\",\"scenario\":\"default\",\"status\":\"200\",\"url\":\"http://127.0.0.1:8080/api/ping\"}";
        let _ = writeln!(out, "{{\"metric\":\"http_reqs\",\"type\":\"Point\",\"data\":{{\"time\":\"{time}\",\"value\":1,\"tags\":{tags}}}}}");
        let _ = writeln!(out, "{{\"metric\":\"http_req_duration\",\"type\":\"Point\",\"data\":{{\"time\":\"{time}\",\"value\":{v:.6},\"tags\":{tags}}}}}");
        let _ = writeln!(out, "{{\"metric\":\"http_req_waiting\",\"type\":\"Point\",\"data\":{{\"time\":\"{time}\",\"value\":{:.6},\"tags\":{tags}}}}}", v * 0.9);
        if i % 25 == 0 {
            let _ = writeln!(out, "{{\"metric\":\"vus\",\"type\":\"Point\",\"data\":{{\"time\":\"{time}\",\"value\":10,\"tags\":null}}}}");
        }
        values.push((v * 1000.0).round() / 1000.0);
    }
    std::fs::write(path, out).unwrap();
    values.sort_by(f64::total_cmp);
    values
}

/// `2026-01-01T00:00:00` of Unix seconds (UTC).
fn rfc3339_seconds(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// k6's own percentile of sorted values (its trend sink: linear between the closest ranks).
fn k6_percentile(sorted: &[f64], p: f64) -> f64 {
    let pos = p * (sorted.len() - 1) as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64)
}

#[test]
fn ten_k6_outputs_become_a_study_in_one_command() {
    let dir = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    let mut p95s = Vec::new();
    for i in 0..10u64 {
        let f = dir.path().join(format!("checkout-{i:02}.json"));
        // Run 7 is slow: the study must call it an outlier.
        let center = if i == 7 { 40.0 } else { 10.0 + i as f64 * 0.1 };
        let values = k6_output(&f, 1_780_000_000 + i * 3600, 500, center, i + 1);
        p95s.push(k6_percentile(&values, 0.95));
        files.push(f.to_str().unwrap().to_string());
    }
    let results = dir.path().join("store");
    let mut args = vec!["k6-json".to_string()];
    args.extend(files.iter().cloned());
    args.extend(["--name".into(), "checkout".into(), "--study".into()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = import(&results, &args);
    assert!(out.status.success(), "{}", text(&out));
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(
        shown.contains("study ") && shown.contains("stored"),
        "{shown}"
    );
    assert!(shown.contains("report:"), "{shown}");
    let (study_dir, study) = common::only_study(&results);
    let variant = &study["variants"][0];
    assert_eq!(variant["runs"].as_array().unwrap().len(), 10);
    // Each run's p95 is k6's own p95 of the same file within HDR precision (k6 interpolates
    // between ranks; the histogram reads one: allow one rank's width).
    for (run_id, want) in variant["runs"].as_array().unwrap().iter().zip(&p95s) {
        let run = read_json(
            &results
                .join("runs")
                .join(run_id.as_str().unwrap())
                .join("run.json"),
        );
        let got = run["latency_ms"]["p95"].as_f64().unwrap();
        assert!(
            (got - want).abs() <= want * 0.02,
            "p95 {got} against k6's {want}"
        );
    }
    let metrics = &variant["metrics"];
    let p95 = metrics
        .as_object()
        .unwrap()
        .iter()
        .find(|(k, _)| k.contains("p95") && !k.contains("step"))
        .map(|(_, v)| v)
        .unwrap_or_else(|| panic!("no p95 metric: {metrics}"));
    assert!(p95["median_ci"][0].as_f64().is_some(), "{p95}");
    assert!(p95["cv"].as_f64().unwrap() > 0.0, "{p95}");
    let mut sorted = p95s.clone();
    sorted.sort_by(f64::total_cmp);
    let median = (sorted[4] + sorted[5]) / 2.0;
    assert!(
        (p95["median"].as_f64().unwrap() - median).abs() <= median * 0.02,
        "{p95} vs {median}"
    );
    let outliers = p95["outliers"].to_string();
    assert!(
        outliers.contains(variant["runs"][7].as_str().unwrap()),
        "run 7 is the outlier: {outliers}"
    );
    let report = std::fs::read_to_string(study_dir.join("report.md")).unwrap();
    assert!(
        report.contains("95% CI") || report.contains("CI"),
        "report lacks CIs"
    );
    assert!(report.contains("CV"), "report lacks the CV");
}

#[test]
fn imported_runs_form_a_history_in_the_order_they_were_made() {
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("store");
    // Imported newest first: the history orders them by when they ran.
    for (i, day) in [(0, 3u64), (1, 1), (2, 2)] {
        let f = dir.path().join(format!("nightly-{i}.json"));
        k6_output(
            &f,
            1_780_000_000 + day * 86_400,
            200,
            10.0 * day as f64,
            day,
        );
        let out = import(
            &results,
            &["k6-json", f.to_str().unwrap(), "--name", "nightly"],
        );
        assert!(out.status.success(), "{}", text(&out));
    }
    let out = Command::new(BIN)
        .args([
            "history",
            "nightly",
            "--runs",
            "--metric",
            "latency_ms.p50",
            "--results",
        ])
        .arg(&results)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let shown = String::from_utf8_lossy(&out.stdout);
    let days: Vec<usize> = ["2026-05-29", "2026-05-30", "2026-05-31"]
        .iter()
        .map(|d| {
            shown
                .find(d)
                .unwrap_or_else(|| panic!("{d} missing: {shown}"))
        })
        .collect();
    assert!(days[0] < days[1] && days[1] < days[2], "{shown}");
}

/// An oha database with no row (oha stores only answered requests: every one refused) says
/// so, instead of asking whether the file is an oha database.
#[test]
fn an_empty_oha_database_says_why_it_is_empty() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("refused.db");
    let made = Command::new("python3")
        .arg("-c")
        .arg("import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('create table oha (url text, start real, start_latency_correction real, end real, duration real, status integer, len_bytes integer, run integer)'); c.commit()")
        .arg(&db)
        .output()
        .unwrap();
    assert!(made.status.success(), "{}", text(&made));
    let out = import(
        &dir.path().join("store"),
        &["oha-sqlite", db.to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("oha stores only the requests that got a response"),
        "{}",
        text(&out)
    );
}
