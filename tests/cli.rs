//! End-to-end: the `loadlab` binary against `loadlab target`, as a user runs it.

mod common;

use common::{exclusive, Target, BIN};

use serde_json::Value;
use std::io::Write;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn loadlab(args: &[&str]) -> Output {
    // Stored runs go to a scratch directory, not the working tree, removed once loadlab exits.
    let results = common::scratch_dir("loadlab-cli-results-");
    Command::new(BIN)
        .args(args)
        .env("LOADLAB_RESULTS", results.path())
        .output()
        .expect("run loadlab")
}

/// `loadlab run <args> --json …`: each caller wants a valid measurement (exit 0, or 1 for its
/// thresholds), so a run the host disturbed is made again, as a user would
/// (`--retry-invalid 2`, every attempt's reason printed on stderr).
fn run_json(args: &[&str], name: &str) -> (Output, Value) {
    assert_eq!(args.first(), Some(&"run"));
    let dir = common::scratch_dir("loadlab-cli-");
    let json = dir.path().join(format!("{name}.json"));
    let mut all: Vec<&str> = args.to_vec();
    let json_text = json.to_string_lossy().to_string();
    all.extend([
        "--json",
        &json_text,
        "--no-progress",
        // As many attempts as tests/common/undisturbed.rs gives a run a shared VM holds up.
        "--retry-invalid",
        "4",
    ]);
    let out = loadlab(&all);
    let text = std::fs::read_to_string(&json).unwrap_or_else(|e| {
        panic!(
            "no JSON written ({e}); stdout: {} stderr: {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let _ = std::fs::remove_file(&json);
    (out, serde_json::from_str(&text).expect("valid JSON"))
}

/// A file `loadlab-cli-XXXXXX-<name>` in the system's temporary directory, removed when the
/// returned path is dropped.
fn write_scenario(name: &str, text: &str) -> tempfile::TempPath {
    let mut file = tempfile::Builder::new()
        .prefix("loadlab-cli-")
        .suffix(&format!("-{name}"))
        .tempfile()
        .unwrap();
    file.write_all(text.as_bytes()).unwrap();
    file.into_temp_path()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn flag_mode_closed_model() {
    let _serial = exclusive();
    let target = Target::start(&["--service-time", "5ms"]);
    let url = format!("{}/api/ping", target.url);
    let (out, json) = run_json(
        &["run", "--url", &url, "--vus", "4", "--duration", "1s"],
        "closed",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(json["schema"], "loadlab.run.v2");
    assert_eq!(json["load"]["model"], "closed");
    let total = json["requests"]["total"].as_u64().unwrap();
    // 4 VUs × ~1 s / ~5 ms each: a few hundred requests, none failed.
    assert!((100..=900).contains(&total), "total {total}");
    assert_eq!(json["requests"]["failed"], 0);
    assert!(json["latency_ms"]["p50"].as_f64().unwrap() >= 5.0);
    assert_eq!(json["status_codes"]["200"].as_u64().unwrap(), total);
    common::assert_valid(&json, "closed model");
    let summary = String::from_utf8_lossy(&out.stdout);
    assert!(summary.contains("p95="), "{summary}");
}

#[test]
fn flag_mode_open_model_delivers_the_plan() {
    let _serial = exclusive();
    let target = Target::start(&[]);
    let url = format!("{}/api/ping", target.url);
    let (out, json) = run_json(
        &["run", "--url", &url, "--rate", "300/s", "--duration", "1s"],
        "open",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let total = json["requests"]["total"].as_f64().unwrap();
    assert!((total - 300.0).abs() <= 6.0, "within 2% of plan: {total}");
    assert_eq!(json["iterations"]["dropped"], 0);
    assert_eq!(json["load"]["model"], "open");
    assert!(json["lag_ms"]["p99"].as_f64().unwrap() < 20.0);
}

/// `--rate`/`--vus` and `--duration` override a scenario file's load, as k6's flags override
/// a script's options (never ignored: the file's 8 s ramp must not run instead); what cannot
/// apply is refused with exit 2, naming the flag.
#[test]
fn load_flags_override_a_scenario_files_load() {
    let _serial = exclusive();
    let target = Target::start(&[]);
    let file = write_scenario(
        "staged.yaml",
        &format!(
            "target: {}\nload:\n  model: open\n  stages:\n    - {{ duration: 4s, rate: 10/s, ramp_to: 400/s }}\n    - {{ duration: 4s, rate: 400/s }}\nflows:\n  - name: f\n    steps:\n      - get: /api/ping\n",
            target.url
        ),
    );
    let path = file.to_string_lossy().to_string();
    let (out, json) = run_json(
        &["run", &path, "--rate", "100/s", "--duration", "1s"],
        "override",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let total = json["requests"]["total"].as_f64().unwrap();
    assert!((total - 100.0).abs() <= 3.0, "100/s for 1s: {total}");
    assert_eq!(json["load"]["planned_duration_s"].as_f64(), Some(1.0));

    for (args, flag) in [
        (vec!["--duration", "1s"], "--duration"),
        (vec!["-X", "POST"], "--method"),
        (vec!["--vus", "2", "--rate", "5/s"], "--rate"),
    ] {
        let mut all = vec!["run", path.as_str()];
        all.extend(args.iter().copied());
        let out = loadlab(&all);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(
            err.contains(flag) && err.lines().count() <= 3,
            "{args:?}: {err}"
        );
    }
    let _ = std::fs::remove_file(&file);
}

#[test]
fn warmup_flag_leaves_the_first_part_out_of_the_statistics() {
    let _serial = exclusive();
    let target = Target::start(&[]);
    let url = format!("{}/api/ping", target.url);
    let (out, json) = run_json(
        &[
            "run",
            "--url",
            &url,
            "--rate",
            "200/s",
            "--duration",
            "2s",
            "--warmup",
            "1s",
        ],
        "warmup",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(json["warmup_s"].as_f64(), Some(1.0));
    // 200/s for 2 s: the first second's requests are counted as warm-up, the second's measured.
    let warmup = json["requests"]["warmup"].as_f64().unwrap();
    let measured = json["requests"]["total"].as_f64().unwrap();
    assert!((warmup - 200.0).abs() <= 10.0, "warm-up requests {warmup}");
    assert!(
        (measured - 200.0).abs() <= 10.0,
        "measured requests {measured}"
    );
    assert_eq!(json["iterations"]["dropped"], 0);
}

#[test]
fn requests_flag_bounds_the_run() {
    let _serial = exclusive();
    let target = Target::start(&[]);
    let url = format!("{}/health", target.url);
    let (out, json) = run_json(
        &["run", "--url", &url, "--vus", "3", "--requests", "50"],
        "requests",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(json["requests"]["total"], 50);
}

const FILE_SCENARIO: &str = "\
name: file mode
load:
  model: closed
  stages: [ {duration: 300ms, vus: 4}, {duration: 900ms, vus: 4} ]
warmup: 200ms
thresholds:
  - http.errors < 1%
  - latency.p95 < THRESHOLD
  - group.api.latency.p99 < 2s
  - requests.rate > 10
flows:
  - name: main
    weight: 3
    steps:
      - { name: ping, group: api, get: /api/ping }
      - { think: 10ms }
  - name: health
    weight: 1
    steps:
      - { name: health, get: /health }
";

#[test]
fn file_mode_thresholds_pass_and_fail() {
    let _serial = exclusive();
    let target = Target::start(&["--service-time", "5ms"]);
    let pass = write_scenario("pass.yaml", &FILE_SCENARIO.replace("THRESHOLD", "1s"));
    let (out, json) = run_json(
        &["run", pass.to_str().unwrap(), "--target", &target.url],
        "pass",
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        stderr(&out)
    );
    assert_eq!(json["thresholds"].as_array().unwrap().len(), 4);
    assert!(json["thresholds"]
        .as_array()
        .unwrap()
        .iter()
        .all(|t| t["ok"] == true));
    assert!(
        json["requests"]["warmup"].as_u64().unwrap() > 0,
        "warm-up requests are counted apart"
    );
    let steps = json["steps"].as_array().unwrap();
    let ping = steps.iter().find(|s| s["name"] == "ping").unwrap();
    let health = steps.iter().find(|s| s["name"] == "health").unwrap();
    let ratio = ping["requests"].as_f64().unwrap() / health["requests"].as_f64().unwrap();
    assert!((2.5..=3.5).contains(&ratio), "weights 3:1, got {ratio}");
    assert_eq!(json["groups"][0]["name"], "api");

    let fail = write_scenario("fail.yaml", &FILE_SCENARIO.replace("THRESHOLD", "1ms"));
    let (out, json) = run_json(
        &["run", fail.to_str().unwrap(), "--target", &target.url],
        "fail",
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let failed: Vec<&Value> = json["thresholds"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["ok"] == false)
        .collect();
    assert_eq!(failed.len(), 1);
    assert_eq!(failed[0]["expr"], "latency.p95 < 1ms");
    assert!(failed[0]["actual"].as_f64().unwrap() >= 5.0);
    let summary = String::from_utf8_lossy(&out.stdout);
    assert!(summary.contains("✗ latency.p95 < 1ms"), "{summary}");
}

#[test]
fn burst_model_releases_the_count() {
    let _serial = exclusive();
    let target = Target::start(&[]);
    let file = write_scenario(
        "burst.yaml",
        "load: {model: burst, count: 200}\nsteps: [ { get: /api/ping } ]\n",
    );
    let (out, json) = run_json(
        &["run", file.to_str().unwrap(), "--target", &target.url],
        "burst",
    );
    assert!(matches!(out.status.code(), Some(0)), "{}", stderr(&out));
    assert_eq!(json["requests"]["total"], 200);
    assert_eq!(json["load"]["count"], 200);
}

#[test]
fn bad_input_exits_2_with_a_message() {
    let bad_yaml = write_scenario(
        "bad.yaml",
        "load:\n  model: closed\n  vus: 2\n  duration: 10x\nsteps: [ {get: /a} ]\n",
    );
    let unknown = write_scenario(
        "unknown.yaml",
        "therholds: []\nload: {model: closed, vus: 1, duration: 1s}\nsteps: [ {get: /a} ]\n",
    );
    let bad_yaml_s = bad_yaml.to_string_lossy().to_string();
    let unknown_s = unknown.to_string_lossy().to_string();
    let cases: Vec<(Vec<&str>, String)> = vec![
        (vec!["run", "--bogus"], "--bogus".into()),
        (
            vec![
                "run",
                "--url",
                "http://127.0.0.1:1/",
                "--vus",
                "1",
                "--duration",
                "10x",
            ],
            "invalid value '10x' for '--duration <DURATION>': invalid duration `10x`".into(),
        ),
        (
            vec!["run", "--url", "notaurl", "--vus", "1", "--duration", "1s"],
            "--url: invalid URL `notaurl`".into(),
        ),
        (
            vec!["run", "--url", "http://127.0.0.1:1/", "--duration", "1s"],
            "--vus".into(),
        ),
        (
            vec!["run", &bad_yaml_s],
            format!("{bad_yaml_s}:4:13: load.duration: invalid duration `10x`"),
        ),
        (
            vec!["run", &unknown_s],
            format!(
                "{unknown_s}:1:1: unknown field `therholds`\n  hint: did you mean `thresholds`?"
            ),
        ),
        (
            vec!["run", "/nonexistent/scenario.yaml"],
            "cannot read scenario file /nonexistent/scenario.yaml".into(),
        ),
        (vec!["run"], "nothing to run".into()),
        (
            vec![
                "run",
                "--url",
                "http://127.0.0.1:1/",
                "--rate",
                "10/s",
                "--duration",
                "2s",
                "--warmup",
                "2s",
            ],
            "--warmup: the warm-up (2s) is not shorter than the run (2s): nothing would be measured\n  hint: use a shorter --warmup or a longer --duration".into(),
        ),
        (vec!["target", "--listen", "nonsense"], "--listen".into()),
    ];
    for (args, needle) in cases {
        let out = loadlab(&args);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains(&needle),
            "{args:?}: expected `{needle}` in:\n{err}"
        );
        assert!(
            !err.contains("panicked") && !err.contains("RUST_BACKTRACE"),
            "{args:?}: {err}"
        );
    }
}

#[test]
fn validate_checks_without_sending() {
    let file = write_scenario("valid.yaml", &FILE_SCENARIO.replace("THRESHOLD", "1s"));
    let out = loadlab(&["validate", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let said = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(said.contains("ok — 2 flow(s), 2 request step(s)"), "{said}");
    assert!(said.contains("1.2s planned"), "{said}");
    // A run that ends when its iterations are done is only bounded by its max_duration.
    let file = write_scenario(
        "iterations.yaml",
        "name: counted
target: http://127.0.0.1:9
load: { model: closed, vus: 2, iterations: 5, max_duration: 2m }
steps:
  - { get: /a }
",
    );
    let out = loadlab(&["validate", file.to_str().unwrap()]);
    let said = String::from_utf8_lossy(&out.stdout).to_string();
    assert_eq!(out.status.code(), Some(0), "{said}{}", stderr(&out));
    assert!(
        said.contains("at most 2m (ends when its work is done)"),
        "{said}"
    );
}

#[test]
fn connection_refused_exits_2_quickly() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/");
    let started = Instant::now();
    let out = loadlab(&[
        "run",
        "--url",
        &url,
        "--vus",
        "2",
        "--duration",
        "30s",
        "--no-progress",
    ]);
    // Bad input, as a wrong URL is: nothing was measured, and the fix is the target's.
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(started.elapsed() < Duration::from_secs(5));
    let err = stderr(&out);
    assert!(
        err.contains("cannot connect") && err.contains("connection refused"),
        "{err}"
    );
    assert!(!err.contains("panicked"));
}

#[test]
fn run_result_matches_the_committed_schema() {
    let _serial = exclusive();
    let target = Target::start(&["--error-rate", "0.2"]);
    let url = format!("{}/api/ping", target.url);
    let (_, json) = run_json(
        &["run", "--url", &url, "--rate", "100/s", "--duration", "1s"],
        "schema",
    );
    assert!(json["errors"]["http_5xx"].as_u64().unwrap() > 0);
    assert!(json["error_hints"]["http_5xx"]
        .as_str()
        .unwrap()
        .contains("5xx"));
    let schema_text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/docs/schema/run.v2.json"
    ))
    .unwrap();
    let schema: Value = serde_json::from_str(&schema_text).unwrap();
    let validator = jsonschema::validator_for(&schema).expect("schema compiles");
    let errors: Vec<String> = validator
        .iter_errors(&json)
        .map(|e| format!("{} at {}", e, e.instance_path))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
}

#[test]
fn demo_runs_end_to_end() {
    let _serial = exclusive();
    // The demo is a short study ending in a report (see tests/demo.rs for its content).
    let results = tempfile::tempdir().unwrap();
    let dir = results.path().to_str().unwrap();
    let out = loadlab(&["demo", "--no-progress", "--results", dir]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        stderr(&out)
    );
    let summary = String::from_utf8_lossy(&out.stdout);
    assert!(summary.contains("Open the report: "), "{summary}");
}

#[test]
fn ctrl_c_stops_gracefully_and_keeps_the_partial_result() {
    let _serial = exclusive();
    let target = Target::start(&[]);
    let url = format!("{}/api/ping", target.url);
    let dir = common::scratch_dir("loadlab-cli-");
    let json = dir.path().join("interrupted.json");
    let results = dir.path().join("interrupted-results");
    let child = Command::new(BIN)
        .args([
            "run",
            "--url",
            &url,
            "--rate",
            "50/s",
            "--duration",
            "30s",
            "--no-progress",
        ])
        .arg("--json")
        .arg(&json)
        .arg("--results")
        .arg(&results)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    let started = Instant::now();
    // SAFETY: sending SIGINT to our own child process.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert!(started.elapsed() < Duration::from_secs(5), "stops promptly");
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let result: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(result["interrupted"], true);
    assert_eq!(result["valid"], false);
    let total = result["requests"]["total"].as_u64().unwrap();
    assert!((40..=120).contains(&total), "about 1.5 s of 50/s: {total}");
    assert_eq!(result["validity"]["reasons"][0]["kind"], "interrupted");
    assert_eq!(result["stop"], "signal");
    assert!(result["validity"]["reasons"][0]["message"]
        .as_str()
        .unwrap()
        .contains("SIGINT"));
    let _ = std::fs::remove_file(&json);
    let _ = std::fs::remove_dir_all(&results);
}

#[test]
fn failed_checks_are_named_in_the_result_and_summary() {
    let _serial = exclusive();
    let target = Target::start(&["--service-time", "2ms"]);
    let file = write_scenario(
        "checks.yaml",
        "load: {model: open, rate: 50/s, duration: 1s}\nsteps:\n  - name: ping\n    get: /api/ping\n    check: {status: 201, body_contains: pong}\n",
    );
    let (out, json) = run_json(
        &["run", file.to_str().unwrap(), "--target", &target.url],
        "checks",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let step = &json["steps"][0];
    let requests = step["requests"].as_u64().unwrap();
    assert!(requests >= 45, "{requests}");
    assert_eq!(step["failed"].as_u64().unwrap(), requests);
    let checks = step["checks"].as_array().unwrap();
    assert_eq!(checks.len(), 2, "{checks:?}");
    let status = checks
        .iter()
        .find(|c| c["check"].as_str().unwrap().contains("201"))
        .unwrap();
    assert_eq!(status["failed"].as_u64().unwrap(), requests);
    let body = checks
        .iter()
        .find(|c| c["check"].as_str().unwrap().contains("pong"))
        .unwrap();
    assert_eq!(body["failed"], 0);
    let summary = String::from_utf8_lossy(&out.stdout);
    assert!(summary.contains("2 checked, 1 failing"), "{summary}");
}

#[test]
fn a_warmup_that_outlasts_an_iterations_load_measures_nothing_and_says_so() {
    let _serial = exclusive();
    let target = Target::start(&[]);
    let file = write_scenario(
        "counted.yaml",
        &format!(
            "target: {}\nload: {{ model: closed, vus: 2, iterations: 10 }}\nsteps:\n  - get: /api/ping\n",
            target.url
        ),
    );
    let out = loadlab(&[
        "run",
        file.to_str().unwrap(),
        "--warmup",
        "2s",
        "--no-progress",
        "--retry-invalid",
        "2",
    ]);
    let said = String::from_utf8_lossy(&out.stdout).to_string();
    assert_eq!(out.status.code(), Some(3), "{said}{}", stderr(&out));
    assert!(
        said.contains("nothing was measured: the load ended within the 2 s warm-up, which took all its 20 request(s)"),
        "{said}"
    );
    // Made again, it would end the same way: --retry-invalid does not.
    assert!(
        !stderr(&out).contains("running it again"),
        "{}",
        stderr(&out)
    );
}
