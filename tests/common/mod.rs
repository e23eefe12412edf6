//! Shared by the end-to-end tests: the binary, a `loadlab target` child process, and a lock
//! that keeps load tests from measuring each other's noise on a 2-core machine.

#![allow(dead_code)] // each test binary uses its own subset

pub mod imported;
pub mod undisturbed;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Mutex, MutexGuard};

pub const BIN: &str = env!("CARGO_BIN_EXE_loadlab");

static LOAD: Mutex<()> = Mutex::new(());

/// A scratch directory `<prefix>XXXXXX` in the system's temporary directory, removed with
/// everything in it when the returned guard is dropped, the test passed or failed: bind it to
/// a named variable (not `_`) that lives as long as its files are used.
pub fn scratch_dir(prefix: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(prefix)
        .tempdir()
        .expect("create a scratch directory")
}

/// A scratch directory standing in for examples/: its `data/` and `proto/` are links to the
/// examples' own, so a scenario written into it reads the same files by the same relative
/// paths, and no test writes into the source tree.
pub fn examples_scratch(prefix: &str) -> tempfile::TempDir {
    let dir = scratch_dir(prefix);
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    for sub in ["data", "proto"] {
        std::os::unix::fs::symlink(examples.join(sub), dir.path().join(sub))
            .expect("link the examples' data");
    }
    dir
}

/// The scenario files (`*.yaml`, not the tests' hidden `.test-*` copies) directly in `dir`,
/// sorted.
pub fn yaml_files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out: Vec<std::path::PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.extension().is_some_and(|e| e == "yaml")
                && !p.file_name().unwrap().to_string_lossy().starts_with('.')
        })
        .collect();
    out.sort();
    out
}

/// What a finished `loadlab` printed, for an assertion's message.
pub fn text(o: &Output) -> String {
    format!(
        "stdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// `loadlab <args> --results <results>`, run to its end.
pub fn loadlab_in(args: &[&str], results: &Path) -> Output {
    Command::new(BIN)
        .args(args)
        .arg("--results")
        .arg(results)
        .output()
        .expect("run loadlab")
}

/// `loadlab study <file> --target <target> --no-progress --results <results>`, to be run.
pub fn study_command(file: &Path, target: &str, results: &Path) -> Command {
    let mut study = Command::new(BIN);
    study
        .args([
            "study",
            file.to_str().unwrap(),
            "--target",
            target,
            "--no-progress",
        ])
        .arg("--results")
        .arg(results);
    study
}

/// Held by every test that generates load, so they run one at a time within a test binary.
pub fn exclusive() -> MutexGuard<'static, ()> {
    LOAD.lock().unwrap_or_else(|e| e.into_inner())
}

/// Spawns `command` (stdout and stderr piped) and waits, 20 s at most, for its stderr line
/// starting with `prefix` (`dashboard: `, `control: `): the child, the rest of that line, and
/// a channel of its later stderr lines. Without that line the child is killed and the test
/// fails.
pub fn spawn_announcing(
    mut command: Command,
    prefix: &str,
) -> (Child, String, std::sync::mpsc::Receiver<String>) {
    use std::time::{Duration, Instant};
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn loadlab");
    let (tx, rx) = std::sync::mpsc::channel();
    let stderr = child.stderr.take().expect("piped stderr");
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        match rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok(line) => {
                if let Some(rest) = line.strip_prefix(prefix) {
                    return (child, rest.trim().to_string(), rx);
                }
            }
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("loadlab printed no `{prefix}…` line");
            }
        }
    }
}

/// A `loadlab target --listen 127.0.0.1:0 <args>` child process, killed on drop.
pub struct Target {
    child: Child,
    pub url: String,
}

impl Target {
    pub fn start(args: &[&str]) -> Target {
        Target::start_on("127.0.0.1:0", args)
    }

    /// A target listening on `listen` (a fixed port: a restarted target keeps the URL, so
    /// runs against it keep their plan fingerprint).
    pub fn start_on(listen: &str, args: &[&str]) -> Target {
        let mut child = Command::new(BIN)
            .args(["target", "--listen", listen])
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start loadlab target");
        let mut line = String::new();
        let mut banner = BufReader::new(child.stdout.take().expect("piped stdout"));
        banner
            .read_line(&mut line)
            .expect("read the target's banner");
        // The rest of the banner (and anything later) is drained, as a terminal would.
        std::thread::spawn(move || std::io::copy(&mut banner, &mut std::io::sink()));
        let url = line
            .trim()
            .rsplit(' ')
            .next()
            .unwrap_or_default()
            .to_string();
        assert!(
            url.starts_with("http://127.0.0.1:") || url.starts_with("https://127.0.0.1:"),
            "unexpected banner: {line}"
        );
        Target { child, url }
    }
}

impl Drop for Target {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A run result (`run.json`) that is a valid measurement: on a quiet machine every run the
/// suite makes is one (only the tests about contention run hogs, and say so).
pub fn assert_valid(result: &serde_json::Value, what: &str) {
    assert_eq!(
        result["valid"], true,
        "{what}: {} (generator: {})",
        result["validity"], result["generator"]
    );
}

/// `run` (a run.json) matches the published run schema, docs/schema/run.v2.json.
pub fn assert_matches_run_schema(run: &serde_json::Value) {
    let schema_text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/docs/schema/run.v2.json"
    ))
    .unwrap();
    let schema: serde_json::Value = serde_json::from_str(&schema_text).unwrap();
    let validator = jsonschema::validator_for(&schema).expect("schema compiles");
    let errors: Vec<String> = validator
        .iter_errors(run)
        .map(|e| format!("{} at {}", e, e.instance_path))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
}

/// run.json's requests per (step, status).
pub fn status_counts(
    result: &serde_json::Value,
) -> std::collections::BTreeMap<(String, String), u64> {
    let mut out = std::collections::BTreeMap::new();
    for step in result["steps"].as_array().unwrap() {
        for (status, n) in step["status_codes"].as_object().unwrap() {
            let key = (step["name"].as_str().unwrap().to_string(), status.clone());
            out.insert(key, n.as_u64().unwrap());
        }
    }
    out
}

/// Checks `doc` against one of the repository's JSON schemas (`docs/schema/…`).
pub fn validate(schema_file: &str, doc: &serde_json::Value) {
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(schema_file)).unwrap(),
    )
    .unwrap();
    let validator = jsonschema::validator_for(&schema).expect("valid schema");
    let errors: Vec<String> = validator.iter_errors(doc).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{schema_file}: {errors:?}");
}

/// The one study in the store `results`: its directory and its study.json.
pub fn only_study(results: &Path) -> (std::path::PathBuf, serde_json::Value) {
    let dirs: Vec<std::path::PathBuf> = std::fs::read_dir(results.join("studies"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(dirs.len(), 1, "one study expected: {dirs:?}");
    let text = std::fs::read_to_string(dirs[0].join("study.json")).unwrap();
    (dirs[0].clone(), serde_json::from_str(&text).unwrap())
}
