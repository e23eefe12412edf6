//! End-to-end: `loadlab import` writes a scenario that `loadlab validate` accepts, and bad
//! input ends with one clear message and exit code 2. The scenario each importer writes from
//! the built-in target's flow runs against a fresh target with no errors, where a literal
//! replay of the recording fails: its tokens are new at each sign-in and its applications
//! belong to their creator, so only the correlated captures make the run work.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{exclusive, Target};
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_loadlab");

fn fixture(name: &str) -> String {
    format!(
        "{}/crates/import/tests/fixtures/{name}",
        env!("CARGO_MANIFEST_DIR")
    )
}

/// The path `name` in a scratch directory of its own, removed with whatever was written there
/// when this is dropped (the test passed or failed).
struct Scratch {
    path: PathBuf,
    _dir: tempfile::TempDir,
}

impl std::ops::Deref for Scratch {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.path
    }
}

impl AsRef<Path> for Scratch {
    fn as_ref(&self) -> &Path {
        &self.path
    }
}

fn scratch(name: &str) -> Scratch {
    let dir = common::scratch_dir("loadlab-import-");
    Scratch {
        path: dir.path().join(name),
        _dir: dir,
    }
}

fn loadlab(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .env("PASSWORD", "password")
        .output()
        .expect("run loadlab")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn imported_har_validates() {
    let out = scratch("har.yaml");
    let o = out.to_str().unwrap();
    let import = loadlab(&[
        "import",
        "har",
        &fixture("target-flow.har"),
        "-o",
        o,
        "--exclude-host",
        "google-analytics.com",
    ]);
    let stderr = text(&import.stderr);
    assert_eq!(import.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("kept 5 of 10 recorded requests"),
        "{stderr}"
    );
    assert!(
        stderr.contains("{{ token }} captured by `POST /api/auth/signin` ($.token)"),
        "{stderr}"
    );
    assert!(
        stderr.contains("{{ application_id }} captured by `POST /api/applications` ($.id)"),
        "{stderr}"
    );
    assert!(stderr.contains("export PASSWORD=..."), "{stderr}");
    assert!(
        stderr.contains(&format!("wrote {o} — check it with: loadlab validate {o}")),
        "{stderr}"
    );
    let validate = loadlab(&["validate", o]);
    assert_eq!(
        validate.status.code(),
        Some(0),
        "{}{}",
        text(&validate.stdout),
        text(&validate.stderr)
    );
    assert!(text(&validate.stdout).contains("5 request step(s)"));
}

#[test]
fn bad_input_exits_2_with_one_message() {
    let not_json = scratch("notes.har");
    std::fs::write(&not_json, "these are my notes, not a recording\n").unwrap();
    let o = loadlab(&["import", "har", not_json.to_str().unwrap()]);
    let stderr = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("notes.har:1:1: not valid JSON"), "{stderr}");
    assert!(stderr.contains("Save all as HAR"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");

    let o = loadlab(&["import", "har", "/no/such/file.har"]);
    let stderr = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("cannot read /no/such/file.har"), "{stderr}");

    let o = loadlab(&[
        "import",
        "artillery",
        &fixture("seed-001.artillery.yml"),
        "--include-host",
        "example.com",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("use them with `loadlab import har`"));

    let o = loadlab(&["import", "jmeter", &fixture("target-flow.har")]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("har, artillery, openapi, k6"));

    let o = loadlab(&["import", "k6", &fixture("target-flow.har")]);
    let stderr = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("is not a k6 script"), "{stderr}");
}

#[test]
fn imported_artillery_validates() {
    let out = scratch("seed-001.yaml");
    let o = out.to_str().unwrap();
    let import = loadlab(&[
        "import",
        "artillery",
        &fixture("seed-001.artillery.yml"),
        "--output",
        o,
    ]);
    let stderr = text(&import.stderr);
    assert_eq!(import.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("3 scenario(s) became flows with 4 request step(s)"),
        "{stderr}"
    );
    let validate = loadlab(&["validate", o]);
    let stdout = text(&validate.stdout);
    assert_eq!(
        validate.status.code(),
        Some(0),
        "{stdout}{}",
        text(&validate.stderr)
    );
    assert!(
        stdout.contains("3 flow(s), 4 request step(s), open model"),
        "{stdout}"
    );
}

#[test]
fn imported_openapi_validates_once_its_variables_are_set() {
    let out = scratch("petstore.yaml");
    let o = out.to_str().unwrap();
    let import = loadlab(&["import", "openapi", &fixture("petstore3.yaml"), "-o", o]);
    let stderr = text(&import.stderr);
    assert_eq!(import.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("export TOKEN=..."), "{stderr}");
    assert!(stderr.contains("export API_KEY=..."), "{stderr}");
    assert!(
        stderr.contains("(after setting the variables above)"),
        "{stderr}"
    );
    // Unset, the scenario names the variable it misses.
    let unset = Command::new(BIN)
        .args(["validate", o])
        .env_remove("TOKEN")
        .env_remove("API_KEY")
        .env_remove("PASSWORD")
        .output()
        .unwrap();
    assert_eq!(unset.status.code(), Some(2));
    assert!(text(&unset.stderr).contains("is not set"));
    let validate = Command::new(BIN)
        .args(["validate", o])
        .env("TOKEN", "t")
        .env("API_KEY", "k")
        .env("PASSWORD", "p")
        .output()
        .unwrap();
    let stdout = text(&validate.stdout);
    assert_eq!(
        validate.status.code(),
        Some(0),
        "{stdout}{}",
        text(&validate.stderr)
    );
    assert!(stdout.contains("3 flow(s), 19 request step(s)"), "{stdout}");
}

#[test]
fn without_output_the_scenario_goes_to_stdout() {
    let o = loadlab(&["import", "har", &fixture("target-flow.har")]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let stdout = text(&o.stdout);
    assert!(
        stdout.starts_with("# Imported from target-flow.har"),
        "{stdout}"
    );
    assert!(stdout.contains("capture: { token: $.token }"), "{stdout}");
    let stderr = text(&o.stderr);
    assert!(
        stderr.contains("wrote the scenario to standard output"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("# Imported"),
        "the scenario is not on stderr"
    );
}

/// docs/import.md shows what the importers print and write: the examples are checked against
/// the binary, so the page cannot drift from the code.
#[test]
fn docs_examples_are_what_the_importers_write() {
    let doc =
        std::fs::read_to_string(format!("{}/docs/import.md", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let blocks = |lang: &str| -> Vec<String> {
        doc.split(&format!("```{lang}\n"))
            .skip(1)
            .map(|b| b.split("```").next().unwrap().to_string())
            .collect()
    };
    let (yaml, printed) = (blocks("yaml"), blocks("text"));
    let dir = scratch("docs");
    std::fs::create_dir_all(&dir).unwrap();
    let run = |kind: &str, fixture_name: &str, as_name: &str, out: &str, extra: &[&str]| {
        std::fs::copy(fixture(fixture_name), dir.join(as_name)).unwrap();
        let mut args = vec!["import", kind, as_name, "-o", out];
        args.extend_from_slice(extra);
        let o = Command::new(BIN)
            .args(&args)
            .current_dir(&dir)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
        (
            text(&o.stderr),
            std::fs::read_to_string(dir.join(out)).unwrap(),
        )
    };
    let (stderr, written) = run(
        "har",
        "target-flow.har",
        "recording.har",
        "signin-flow.yaml",
        &[],
    );
    assert_eq!(printed[0], stderr);
    assert_eq!(yaml[0], written);
    let (stderr, written) = run(
        "artillery",
        "seed-001.artillery.yml",
        "seed-001.artillery.yml",
        "seed-001.yaml",
        &[],
    );
    assert_eq!(printed[1], stderr);
    assert_eq!(yaml[1], written);
    let (stderr, _) = run(
        "artillery",
        "features.artillery.yml",
        "shop.artillery.yml",
        "shop.yaml",
        &[],
    );
    assert!(stderr.contains(&printed[2]), "{stderr}");
    let (stderr, written) = run(
        "openapi",
        "petstore3.yaml",
        "petstore3.yaml",
        "petstore.yaml",
        &[],
    );
    assert_eq!(printed[3], stderr);
    let (head, tail) = yaml[2].split_once("      # …\n").unwrap();
    assert!(written.starts_with(head), "{written}");
    assert!(written.contains(tail), "{written}");
    let (stderr, written) = run(
        "k6",
        "seed-000.k6.js",
        "seed-000.k6.js",
        "seed-000.yaml",
        &[],
    );
    assert_eq!(printed[4], stderr);
    assert_eq!(yaml[3], written);
    let (stderr, _) = run("k6", "features.k6.js", "shop.k6.js", "shop.yaml", &[]);
    assert!(stderr.contains(&printed[5]), "{stderr}");
}

/// The token of a sign-in as `user` at `target_url` (a tiny HTTP/1.1 client, as `curl` would).
fn sign_in(target_url: &str, user: &str) -> String {
    let addr = target_url.trim_start_matches("http://");
    let body = format!(r#"{{"username":"{user}","password":"password"}}"#);
    let mut stream = TcpStream::connect(addr).expect("connect to the target");
    write!(
        stream,
        "POST /api/auth/signin HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut reply = String::new();
    stream.read_to_string(&mut reply).unwrap();
    let (_, json) = reply.split_once("\r\n\r\n").expect("a whole reply");
    let v: Value = serde_json::from_str(json).expect("a JSON body");
    v["token"].as_str().expect("a token").to_string()
}

/// `loadlab run FILE --target URL --json`, with `env` set: the exit code and the result.
fn run_against(file: &Path, target: &Target, env: &[(&str, &str)]) -> (Option<i32>, Value) {
    let json = file.with_extension("result.json");
    let _ = std::fs::remove_file(&json);
    let results = common::scratch_dir("loadlab-import-results-");
    let out = Command::new(BIN)
        .args(["run", file.to_str().unwrap(), "--target", &target.url])
        .args(["--json", json.to_str().unwrap(), "--no-progress", "-q"])
        .args(["--retry-invalid", "2"])
        .env("LOADLAB_RESULTS", results.path())
        .envs(env.iter().copied())
        .output()
        .expect("run loadlab");
    let text = std::fs::read_to_string(&json).unwrap_or_else(|e| {
        panic!(
            "{}: no result ({e}): {}{}",
            file.display(),
            text(&out.stdout),
            text(&out.stderr)
        )
    });
    (out.status.code(), serde_json::from_str(&text).unwrap())
}

/// A run that sent requests, all of them answered as the checks want, every step reached.
fn assert_no_errors(code: Option<i32>, result: &Value, what: &str) {
    assert_eq!(code, Some(0), "{what}: {}", result["errors"]);
    common::assert_valid(result, what);
    assert!(result["requests"]["total"].as_u64().unwrap() > 0, "{what}");
    assert_eq!(
        result["requests"]["failed"], 0,
        "{what}: errors {} statuses {}",
        result["errors"], result["status_codes"]
    );
    for step in result["steps"].as_array().unwrap() {
        assert!(
            step["requests"].as_u64().unwrap() > 0,
            "{what}: step {} never ran",
            step["name"]
        );
    }
}

/// How many responses had `status`.
fn answered(result: &Value, status: &str) -> u64 {
    result["status_codes"][status].as_u64().unwrap_or(0)
}

/// Imports `fixture_name` as `kind` and returns the scenario's text.
fn import(kind: &str, fixture_name: &str, out: &Path, extra: &[&str]) -> String {
    let mut args = vec!["import", kind];
    let fixture = fixture(fixture_name);
    args.push(&fixture);
    args.extend_from_slice(&["-o", out.to_str().unwrap()]);
    args.extend_from_slice(extra);
    let o = loadlab(&args);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    std::fs::read_to_string(out).unwrap()
}

/// The recorded token of `target-flow.har` (a target instance long gone issued it).
const RECORDED_TOKEN: &str = "user1.3a9d5c7e1f2b4d60.6f1c2a9e4b7d3c5a8e9f0a1b2c3d4e5f";

#[test]
fn imported_har_runs_against_a_fresh_target_where_a_literal_replay_fails() {
    let out = scratch("har-run.yaml");
    let scenario = import(
        "har",
        "target-flow.har",
        &out,
        &["--exclude-host", "google-analytics.com"],
    );
    assert!(scenario.contains("Bearer {{ token }}"), "{scenario}");
    assert!(scenario.contains("{{ application_id }}"), "{scenario}");
    // The decisions the import leaves to a person, made as a tester would: a short load of two
    // users instead of the recording's one user once, each VU its own user, no pauses.
    let decided = scenario
        .lines()
        .filter(|l| !l.trim_start().starts_with("- think:"))
        .map(|l| {
            if l.starts_with("load:") {
                "load: { model: closed, vus: 2, iterations: 5 }".to_string()
            } else {
                l.replace("username: user1", r#"username: "user{{ vu }}""#)
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    assert!(decided.contains("user{{ vu }}"), "{decided}");
    std::fs::write(&out, &decided).unwrap();

    let _serial = exclusive();
    let target = Target::start(&["--workers", "8", "--service-time", "5ms"]);
    let (code, result) = run_against(&out, &target, &[("PASSWORD", "password")]);
    assert_no_errors(code, &result, "the imported HAR");
    assert_eq!(result["requests"]["total"], 2 * 5 * 5);
    assert_eq!(answered(&result, "201"), 10, "{}", result["status_codes"]);

    // A literal replay: the recorded token is refused (another instance issued it).
    let literal = scratch("har-literal.yaml");
    std::fs::write(&literal, decided.replace("{{ token }}", RECORDED_TOKEN)).unwrap();
    let (_, result) = run_against(&literal, &target, &[("PASSWORD", "password")]);
    assert!(answered(&result, "401") > 0, "{}", result["status_codes"]);
    assert_eq!(answered(&result, "201"), 0, "{}", result["status_codes"]);

    // The recorded application id with a fresh token: user1 or user2 made application 1 in the
    // run above, and the other one is refused it.
    let literal_id = decided.replace("{{ application_id }}", "1");
    std::fs::write(&literal, literal_id).unwrap();
    let (_, result) = run_against(&literal, &target, &[("PASSWORD", "password")]);
    assert!(answered(&result, "403") > 0, "{}", result["status_codes"]);
}

#[test]
fn imported_artillery_runs_against_the_target_without_errors() {
    let out = scratch("artillery-run.yaml");
    let scenario = import("artillery", "target-flow.artillery.yml", &out, &[]);
    assert!(
        scenario.contains("capture: { token: $.token }"),
        "{scenario}"
    );
    assert!(
        scenario.contains("capture: { applicationId: $.id }"),
        "{scenario}"
    );
    assert!(
        scenario.contains("get: \"/api/applications/{{ applicationId }}\""),
        "{scenario}"
    );
    // Run as written: 20 arrivals/s for 1 s, each a user among 50 with its own application.
    let _serial = exclusive();
    let target = Target::start(&["--workers", "8", "--service-time", "5ms"]);
    // The script's literal password is read from the environment (never written out).
    let (code, result) = run_against(&out, &target, &[("PASSWORD", "password")]);
    assert_no_errors(code, &result, "the imported Artillery script");
    assert!(answered(&result, "201") >= 15, "{}", result["status_codes"]);
}

#[test]
fn imported_k6_runs_against_the_target_without_errors() {
    let out = scratch("k6-run.yaml");
    let scenario = import("k6", "target-flow.k6.js", &out, &[]);
    assert!(
        scenario.contains("capture: { token: $.token }"),
        "{scenario}"
    );
    assert!(scenario.contains("capture: { id: $.id }"), "{scenario}");
    assert!(
        scenario.contains("get: \"/api/applications/{{ id }}\""),
        "{scenario}"
    );
    let validate = loadlab(&["validate", out.to_str().unwrap()]);
    assert_eq!(
        validate.status.code(),
        Some(0),
        "{}",
        text(&validate.stderr)
    );
    // Run as written: 20 arrivals/s for 1 s (k6's constant-arrival-rate), each a user among 50
    // with its own application.
    let _serial = exclusive();
    let target = Target::start(&["--workers", "8", "--service-time", "5ms"]);
    // The script's literal password is read from the environment (never written out).
    let (code, result) = run_against(&out, &target, &[("PASSWORD", "password")]);
    assert_no_errors(code, &result, "the imported k6 script");
    assert!(answered(&result, "201") >= 15, "{}", result["status_codes"]);
}

#[test]
fn imported_openapi_runs_against_the_target_without_errors() {
    let out = scratch("openapi-run.yaml");
    let scenario = import("openapi", "target-api.openapi.yaml", &out, &[]);
    // The spec's links carry the created id to the read and the submit; its one operation
    // without security that answers a token is the sign-in the other flows start with.
    assert!(scenario.contains("capture: { id: $.id }"), "{scenario}");
    assert!(
        scenario.contains("get: \"/api/applications/{{ id }}\""),
        "{scenario}"
    );
    assert!(
        scenario.contains("capture: { token: $.token }"),
        "{scenario}"
    );
    assert!(scenario.contains("Bearer {{ token }}"), "{scenario}");
    assert!(!scenario.contains("env.TOKEN"), "{scenario}");
    // The load is the person's choice: 2 users, 6 iterations each, so that every flow runs.
    let decided: String = scenario
        .lines()
        .map(|l| {
            if l.starts_with("load:") {
                "load: { model: closed, vus: 2, iterations: 6 }\n".to_string()
            } else {
                format!("{l}\n")
            }
        })
        .collect();
    std::fs::write(&out, &decided).unwrap();

    let _serial = exclusive();
    let target = Target::start(&["--workers", "8", "--service-time", "5ms"]);
    let (code, result) = run_against(&out, &target, &[("PASSWORD", "password")]);
    assert_no_errors(code, &result, "the imported OpenAPI spec");
    assert_eq!(answered(&result, "201"), 4, "{}", result["status_codes"]);

    // The same scenario with a token of another instance (an earlier run's) is refused.
    let earlier = Target::start(&["--workers", "8", "--service-time", "5ms"]);
    let stale = sign_in(&earlier.url, "user1");
    drop(earlier);
    let literal = scratch("openapi-literal.yaml");
    std::fs::write(&literal, decided.replace("{{ token }}", &stale)).unwrap();
    let (_, result) = run_against(&literal, &target, &[("PASSWORD", "password")]);
    assert!(answered(&result, "401") > 0, "{}", result["status_codes"]);
    assert_eq!(answered(&result, "201"), 0, "{}", result["status_codes"]);
}

/// A HAR recorded by a real browser now, not written by hand: headless Chromium loads a page
/// whose script signs in, creates an application, reads and submits it
/// (`scripts/record_har.py`, python3's standard library only). Needs `/usr/bin/chromium` (or
/// `$CHROMIUM`), like the HTML report test: `scripts/install-test-deps.sh` installs it.
#[test]
fn har_recorded_by_headless_chromium_imports_and_runs() {
    let chromium = std::env::var_os("CHROMIUM")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/chromium"));
    assert!(
        chromium.exists(),
        "{} not found: the HAR recording test needs Chromium. Run `scripts/install-test-deps.sh` \
         (as root, or with sudo) to install it, or set CHROMIUM to its path.",
        chromium.display()
    );
    let har = scratch("chromium.har");
    let _serial = exclusive();
    let recorded_against = Target::start(&["--workers", "8", "--service-time", "5ms"]);
    let mut recorder = Command::new("python3")
        .arg(format!(
            "{}/scripts/record_har.py",
            env!("CARGO_MANIFEST_DIR")
        ))
        .args([
            "--api",
            &recorded_against.url,
            "--out",
            har.to_str().unwrap(),
        ])
        .arg("--chromium")
        .arg(&chromium)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start the recorder");
    let started = std::time::Instant::now();
    while recorder.try_wait().unwrap().is_none() {
        if started.elapsed() > std::time::Duration::from_secs(90) {
            // SIGTERM first: the recorder then closes Chromium and removes its profile.
            // SAFETY: signalling our own child process.
            unsafe { libc::kill(recorder.id() as libc::pid_t, libc::SIGTERM) };
            let asked = std::time::Instant::now();
            while recorder.try_wait().unwrap().is_none()
                && asked.elapsed() < std::time::Duration::from_secs(5)
            {
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            let _ = recorder.kill();
            let _ = recorder.wait();
            panic!("the recorder did not finish in 90 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let recorded = recorder.wait_with_output().unwrap();
    assert!(recorded.status.success(), "{}", text(&recorded.stderr));
    assert!(
        text(&recorded.stderr).contains("(done 200 201 200 200)"),
        "{}",
        text(&recorded.stderr)
    );
    drop(recorded_against);

    // The token the browser got, to replay literally below.
    let log: Value = serde_json::from_str(&std::fs::read_to_string(&har).unwrap()).unwrap();
    let signin = log["log"]["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| {
            e["request"]["url"]
                .as_str()
                .unwrap()
                .ends_with("/api/auth/signin")
        })
        .expect("the sign-in was recorded");
    let body: Value =
        serde_json::from_str(signin["response"]["content"]["text"].as_str().unwrap()).unwrap();
    let recorded_token = body["token"].as_str().unwrap().to_string();

    let out = scratch("chromium.yaml");
    let import = loadlab(&[
        "import",
        "har",
        har.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    let stderr = text(&import.stderr);
    assert_eq!(import.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("kept 5 of 6 recorded requests"), "{stderr}");
    assert!(
        stderr.contains("{{ token }} captured by `POST /api/auth/signin` ($.token)"),
        "{stderr}"
    );
    assert!(
        stderr.contains("{{ application_id }} captured by `POST /api/applications` ($.id)"),
        "{stderr}"
    );
    let scenario = std::fs::read_to_string(&out).unwrap();
    assert!(!scenario.contains(&recorded_token), "{scenario}");
    let decided = scenario
        .replace(
            "load: { model: closed, vus: 1, iterations: 1 }",
            "load: { model: closed, vus: 2, iterations: 3 }",
        )
        .replace("username: user3", r#"username: "user{{ vu }}""#);
    assert!(decided.contains("iterations: 3"), "{decided}");
    std::fs::write(&out, &decided).unwrap();

    let fresh = Target::start(&["--workers", "8", "--service-time", "5ms"]);
    let (code, result) = run_against(&out, &fresh, &[("PASSWORD", "password")]);
    assert_no_errors(code, &result, "the HAR Chromium recorded");
    assert_eq!(result["requests"]["total"], 2 * 3 * 5);

    let literal = scratch("chromium-literal.yaml");
    std::fs::write(&literal, decided.replace("{{ token }}", &recorded_token)).unwrap();
    let (_, result) = run_against(&literal, &fresh, &[("PASSWORD", "password")]);
    assert!(answered(&result, "401") > 0, "{}", result["status_codes"]);
    assert_eq!(answered(&result, "201"), 0, "{}", result["status_codes"]);
}
