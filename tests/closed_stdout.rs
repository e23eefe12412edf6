//! `loadlab run … | head`: a reader that leaves before the summary is printed must not turn a
//! valid, stored run into exit 3 with "Broken pipe" on the terminal (git and ripgrep say
//! nothing either); the exit status stays the run's verdict.

mod common;

use common::{exclusive, Target, BIN};
use std::process::{Command, Stdio};

#[test]
fn a_closed_stdout_keeps_the_runs_verdict_and_says_nothing() {
    let _serial = exclusive();
    let target = Target::start(&[]);
    let results = common::scratch_dir("loadlab-closed-stdout-");
    let url = format!("{}/api/ping", target.url);
    let mut child = Command::new(BIN)
        .args(["run", "--url", &url, "--rate", "20/s", "--duration", "1s"])
        .args(["--no-progress", "--results"])
        .arg(results.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start loadlab run");
    // The reader goes away before anything is printed (`| head -0`).
    drop(child.stdout.take());
    let out = child.wait_with_output().expect("wait for loadlab run");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let run_dir = std::fs::read_dir(results.path().join("runs"))
        .expect("the run is stored")
        .next()
        .expect("one run")
        .unwrap()
        .path();
    let stored: serde_json::Value =
        serde_json::from_slice(&std::fs::read(run_dir.join("run.json")).unwrap()).unwrap();
    // The host may disturb the run (exit 3, invalid): the status must be that verdict,
    // whichever it is, and not an error of its own.
    let verdict = if stored["valid"] == true { 0 } else { 3 };
    assert_eq!(out.status.code(), Some(verdict), "{stderr}");
    assert!(!stderr.contains("Broken pipe"), "{stderr}");
    assert!(!stderr.contains("cannot write"), "{stderr}");
}
