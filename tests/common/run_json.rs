//! Running `loadlab run` on a scenario written for the test and reading what it wrote
//! (run.json), plus the plain HTTP/1.1 GET the protocol tests read servers' own counts with.
//! A run the host disturbed is made again (`common::undisturbed`); a test that compares a
//! server's own counts with the run's gets a server made afresh for each attempt
//! ([`run_fresh`]).
#![allow(dead_code)] // each test binary uses its own subset

use crate::common::undisturbed::until_undisturbed;
use serde_json::Value;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// `loadlab run <yaml> --json`, made again while the host disturbs it: the last attempt's exit
/// code, run.json and the command's output.
pub fn run(dir: &Path, yaml: &str) -> (Option<i32>, Value, String) {
    until_undisturbed("loadlab run", || run_once(dir, yaml, &[]))
}

/// [`run`] of `scenario(&servers)` against servers `start` makes afresh for each attempt: the
/// last attempt's exit code, run.json, output and servers, whose own counts are that
/// attempt's alone.
pub fn run_fresh<S>(
    dir: &Path,
    start: impl FnMut() -> S,
    scenario: impl Fn(&S) -> String,
) -> (Option<i32>, Value, String, S) {
    run_fresh_with(dir, &[], start, scenario)
}

/// [`run_fresh`] with `flags` after the scenario (e.g. `--http2-client wire`).
pub fn run_fresh_with<S>(
    dir: &Path,
    flags: &[&str],
    mut start: impl FnMut() -> S,
    scenario: impl Fn(&S) -> String,
) -> (Option<i32>, Value, String, S) {
    let (code, result, (text, servers)) = until_undisturbed("loadlab run", || {
        let servers = start();
        let (code, result, text) = run_once(dir, &scenario(&servers), flags);
        (code, result, (text, servers))
    });
    (code, result, text, servers)
}

/// `first` for a run's first attempt, then what `again` starts for each later one (a server
/// a test has already started to learn it can).
pub fn first_then<S>(first: S, again: impl Fn() -> Option<S>) -> impl FnMut() -> S {
    let mut first = Some(first);
    move || {
        first
            .take()
            .unwrap_or_else(|| again().expect("the server started once already"))
    }
}

fn run_once(dir: &Path, yaml: &str, flags: &[&str]) -> (Option<i32>, Value, String) {
    let path = dir.join("s.yaml");
    std::fs::write(&path, yaml).unwrap();
    let json = dir.join("run.json");
    let _ = std::fs::remove_file(&json);
    let out = Command::new(crate::common::BIN)
        .arg("run")
        .arg(&path)
        .args(flags)
        .args(["--no-progress", "--quiet", "--json"])
        .arg(&json)
        .env("LOADLAB_RESULTS", dir.join("results"))
        .output()
        .expect("run loadlab");
    let text = crate::common::text(&out);
    let result = std::fs::read_to_string(&json)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(Value::Null);
    (out.status.code(), result, text)
}

/// The step named `name` in run.json.
pub fn step<'a>(result: &'a Value, name: &str) -> &'a Value {
    result["steps"]
        .as_array()
        .and_then(|s| s.iter().find(|s| s["name"] == name))
        .unwrap_or_else(|| panic!("no step `{name}` in {}", result["steps"]))
}

/// A count (0 when absent).
pub fn n(v: &Value) -> u64 {
    v.as_u64().unwrap_or(0)
}

/// A plain HTTP/1.1 GET on loopback (`Connection: close`): the body.
pub fn http_get(addr: &str, path: &str) -> String {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    text.split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default()
}

/// The value of a Prometheus counter (with its labels, if any, as written) in `/metrics`.
pub fn metric(text: &str, name: &str) -> u64 {
    text.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.trim().parse().ok())
        .unwrap_or_else(|| panic!("no {name} in /metrics"))
}

/// `loadlab report <dir>/run.json -o r.md`: the Markdown report of the run `run` wrote there.
pub fn report_md(dir: &Path) -> String {
    let md = dir.join("r.md");
    let out = Command::new(crate::common::BIN)
        .arg("report")
        .arg(dir.join("run.json"))
        .arg("-o")
        .arg(&md)
        .output()
        .expect("loadlab report");
    assert!(out.status.success(), "{}", crate::common::text(&out));
    std::fs::read_to_string(&md).unwrap()
}
