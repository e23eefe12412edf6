//! End-to-end: a scenario piped to `loadlab validate -` and `loadlab run -`, as a script that
//! generates one would (`k6 run -` reads its script the same way).

mod common;

use common::{exclusive, Target, BIN};

use serde_json::Value;
use std::io::Write;
use std::process::{Command, Output, Stdio};

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// `loadlab <args>` with `input` on its standard input.
fn loadlab_fed(args: &[&str], input: &str) -> Output {
    let results = common::scratch_dir("loadlab-cli-results-");
    let mut child = Command::new(BIN)
        .args(args)
        .env("LOADLAB_RESULTS", results.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run loadlab");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    child.wait_with_output().expect("loadlab exits")
}

#[test]
fn a_scenario_on_standard_input_is_read_as_a_file() {
    let _serial = exclusive();
    let target = Target::start(&[]);
    let scenario = format!(
        "target: {}\nload: {{ model: closed, vus: 2, iterations: 10 }}\nsteps:\n  - get: /api/ping\n",
        target.url
    );
    let out = loadlab_fed(&["validate", "-"], &scenario);
    let said = String::from_utf8_lossy(&out.stdout).to_string();
    assert_eq!(out.status.code(), Some(0), "{said}{}", stderr(&out));
    assert!(said.starts_with("<stdin>: ok — 1 flow(s)"), "{said}");
    // A mistake is placed in the piped text as in a file.
    let out = loadlab_fed(&["validate", "-"], &format!("{scenario}  - bogus: 1\n"));
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).starts_with("error: <stdin>:5:5: steps[1]: unknown field `bogus`"),
        "{}",
        stderr(&out)
    );
    let dir = common::scratch_dir("loadlab-cli-");
    let path = dir.path().join("piped.json");
    let out = loadlab_fed(
        &[
            "run",
            "-",
            "--no-progress",
            "--json",
            path.to_str().unwrap(),
        ],
        &scenario,
    );
    let json: Value = std::fs::read(&path)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_else(|| panic!("no result: {}", stderr(&out)));
    assert_eq!(json["name"], "stdin");
    // Each of the 2 VUs runs its 10 iterations.
    assert_eq!(json["requests"]["total"], 20);
}
