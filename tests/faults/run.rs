//! Runs the real binary against a fault server and reads its JSON result.
//!
//! These tests are about protocols and faults, not about the host: a run the binary calls
//! invalid because the host held it up (`host_contended`, `cpu_stolen`, `host_disturbed`, the
//! reasons a study retries, and `scheduler_late` at these tests' low rates) is made again, as
//! `loadlab run --retry-invalid 2` would, with the servers' counts cleared first; every
//! attempt's reasons are printed. Any other invalid run, and the last disturbed one, is
//! returned as it is for the test to judge.

use serde_json::Value;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

const RUN_LIMIT: Duration = Duration::from_secs(20);

/// Held for every run, so the tests' runs go one at a time: most of them expect a valid
/// measurement, which a generator sharing two cores with other tests' generators and servers
/// is not (a test binary runs its tests on parallel threads).
static ONE_RUN_AT_A_TIME: Mutex<()> = Mutex::new(());

pub struct Run {
    pub status: ExitStatus,
    pub stderr: String,
    pub stdout: String,
    pub json: Option<Value>,
    pub elapsed: Duration,
}

impl Run {
    pub fn code(&self) -> i32 {
        self.status.code().unwrap_or(-1)
    }
    pub fn json(&self) -> &Value {
        self.json
            .as_ref()
            .unwrap_or_else(|| panic!("no JSON result written\n{}", self.describe()))
    }
    pub fn u(&self, pointer: &str) -> u64 {
        self.json()
            .pointer(pointer)
            .and_then(Value::as_u64)
            .unwrap_or(0)
    }
    pub fn f(&self, pointer: &str) -> f64 {
        self.json()
            .pointer(pointer)
            .and_then(Value::as_f64)
            .unwrap_or_else(|| panic!("no number at {pointer}\n{}", self.describe()))
    }
    pub fn total(&self) -> u64 {
        self.u("/requests/total")
    }
    pub fn ok(&self) -> u64 {
        self.u("/requests/ok")
    }
    pub fn failed(&self) -> u64 {
        self.u("/requests/failed")
    }
    pub fn err(&self, kind: &str) -> u64 {
        self.u(&format!("/errors/{kind}"))
    }
    pub fn error_sum(&self) -> u64 {
        self.json()
            .get("errors")
            .and_then(Value::as_object)
            .map(|m| m.values().filter_map(Value::as_u64).sum())
            .unwrap_or(0)
    }
    pub fn describe(&self) -> String {
        let short = |v: &Value, k: &str| v.get(k).map(|x| x.to_string()).unwrap_or_default();
        let summary = match &self.json {
            Some(v) => format!(
                "requests={} errors={} examples={} status_codes={} service_time_ms={} valid={} invalid_reasons={}",
                short(v, "requests"),
                short(v, "errors"),
                short(v, "error_examples"),
                short(v, "status_codes"),
                short(v, "service_time_ms"),
                short(v, "valid"),
                short(&v["validity"], "reasons"),
            ),
            None => "no JSON".into(),
        };
        format!(
            "exit={:?} elapsed={:?}\n{summary}\n--- stderr ---\n{}\n--- stdout ---\n{}",
            self.status.code(),
            self.elapsed,
            self.stderr,
            self.stdout
        )
    }
    /// The messages of an exit-3 run whose every invalidity reason is the host's (empty for
    /// any other run).
    pub fn host_disturbance(&self) -> Vec<String> {
        match &self.json {
            Some(v) => crate::undisturbed::host_reasons(self.status.code(), v),
            None => Vec::new(),
        }
    }
    /// The reasons this harness makes a run again for: the host's, and the scheduler's being
    /// late (at these tests' few hundred requests a second the generator is nearly idle, so
    /// a late scheduler is the host's doing too; seen on a host with both cores busy).
    pub fn timing_disturbance(&self) -> Vec<String> {
        let host = self.host_disturbance();
        if !host.is_empty() || self.status.code() != Some(3) {
            return host;
        }
        let reasons = self
            .json
            .as_ref()
            .and_then(|v| v["validity"]["reasons"].as_array().cloned())
            .unwrap_or_default();
        let late = |r: &Value| {
            ["scheduler_late"]
                .iter()
                .chain(crate::undisturbed::HOST_KINDS.iter())
                .any(|k| r["kind"] == *k)
        };
        if reasons.is_empty() || !reasons.iter().all(late) {
            return Vec::new();
        }
        reasons
            .iter()
            .map(|r| format!("{}: {}", r["kind"], r["message"]))
            .collect()
    }

    pub fn assert_no_panic(&self) {
        assert!(
            !self.stderr.contains("panicked"),
            "the binary panicked\n{}",
            self.describe()
        );
    }
}

/// A scratch directory `loadlab-faults-<prefix>XXXXXX` in the system's temporary directory,
/// removed with everything in it when the returned guard is dropped (pass or fail): keep it
/// bound to a named variable for as long as its files are used.
pub fn scratch_dir(prefix: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("loadlab-faults-{prefix}"))
        .tempdir()
        .expect("create a scratch directory")
}

fn json_path(dir: &Path, test: &str) -> PathBuf {
    dir.join(format!("{test}.json"))
}

/// A results directory of the run's own, unless a test asks for its own: removed when the
/// returned guard is dropped.
pub fn results_dir() -> tempfile::TempDir {
    scratch_dir("results-")
}

/// Runs `loadlab run --url URL <load> --duration 1s ... --json <unique file>`.
pub fn run_loadlab(test: &str, url: &str, load: &[&str], timeout: &str) -> Run {
    let mut args: Vec<String> = vec!["run".into(), "--url".into(), url.into()];
    args.extend(load.iter().map(|s| s.to_string()));
    args.extend(["--duration", "1s", "--timeout", timeout].map(String::from));
    run_args(test, args, results_dir().path(), &[])
}

/// Runs `loadlab <args> --no-progress --json <unique file>` with runs stored in `results` and
/// the extra environment `env`; killed after `RUN_LIMIT`. Made again (at most `ATTEMPTS` in
/// all) while the host disturbs it.
pub fn run_args(test: &str, mut args: Vec<String>, results: &Path, env: &[(&str, &str)]) -> Run {
    let _one_run_at_a_time = ONE_RUN_AT_A_TIME
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    // The JSON result's directory, removed when the run returns (or panics).
    let json_dir = scratch_dir("json-");
    let json = json_path(json_dir.path(), test);
    args.extend(["--no-progress", "--json"].map(String::from));
    args.push(json.to_string_lossy().into_owned());
    let mut attempt = 1;
    loop {
        let run = run_once(&json, &args, results, env);
        let host_reasons = run.timing_disturbance();
        if host_reasons.is_empty() || attempt == crate::undisturbed::ATTEMPTS {
            return run;
        }
        eprintln!(
            "{test}: attempt {attempt} invalid for the host's reasons, made again: {host_reasons:?}"
        );
        // The test compares its servers' counts with the last attempt's.
        crate::server::clear_servers_started_here();
        attempt += 1;
    }
}

fn run_once(json: &Path, args: &[String], results: &Path, env: &[(&str, &str)]) -> Run {
    let _ = std::fs::remove_file(json);
    let started = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_loadlab"))
        .args(args)
        .env("LOADLAB_RESULTS", results)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn loadlab");
    // Drain the pipes on threads so a chatty child cannot block.
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let out_t = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let err_t = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for loadlab") {
            break status;
        }
        if started.elapsed() > RUN_LIMIT {
            let _ = child.kill();
            let status = child.wait().unwrap();
            panic!(
                "loadlab {args:?} did not finish within {RUN_LIMIT:?} (killed: {status:?})\nstderr: {}",
                err_t.join().unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let elapsed = started.elapsed();
    let stdout = out_t.join().unwrap_or_default();
    let stderr = err_t.join().unwrap_or_default();
    let json_value = std::fs::read_to_string(json).ok().map(|text| {
        serde_json::from_str::<Value>(&text)
            .unwrap_or_else(|e| panic!("result JSON does not parse: {e}\n{text}"))
    });
    let _ = std::fs::remove_file(json);
    let run = Run {
        status,
        stderr,
        stdout,
        json: json_value,
        elapsed,
    };
    run.assert_no_panic();
    if let Some(v) = &run.json {
        assert_eq!(
            v.get("schema").and_then(Value::as_str),
            Some("loadlab.run.v2"),
            "{}",
            run.describe()
        );
    }
    run
}

/// Checks the bookkeeping every valid run must satisfy.
pub fn assert_consistent(run: &Run) {
    assert_eq!(
        run.ok() + run.failed(),
        run.total(),
        "ok + failed != total\n{}",
        run.describe()
    );
    assert_eq!(
        run.error_sum(),
        run.failed(),
        "sum of error kinds != failed\n{}",
        run.describe()
    );
}

/// A valid run (exit 0: errors alone do not fail a run) in which every request, at least one,
/// failed with error kind `kind`.
pub fn assert_every_request_failed_as(run: &Run, kind: &str) {
    assert_eq!(
        run.code(),
        0,
        "a valid run with only errors exits 0\n{}",
        run.describe()
    );
    assert_consistent(run);
    assert!(run.total() > 0, "no request completed\n{}", run.describe());
    assert_eq!(run.ok(), 0, "{}", run.describe());
    assert_eq!(
        run.err(kind),
        run.total(),
        "every request should fail as {kind}\n{}",
        run.describe()
    );
}
