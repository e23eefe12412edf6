//! The run record survives what ends runs early: SIGTERM, SIGHUP, SIGINT (once and twice),
//! SIGKILL of a run and of a study, a full disk, unwritable result paths. After each,
//! `runs`, `report` and (for a study) `--resume` work, and request counts agree with what
//! the server itself counted.

mod common;
#[allow(dead_code)]
#[path = "faults/server.rs"]
mod server;

use common::{exclusive, text, BIN};
use serde_json::Value;
use server::{Conn, Server};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Answers every request after 5 ms, keep-alive.
fn ok_handler(c: &mut Conn) {
    while c.read_request() {
        std::thread::sleep(Duration::from_millis(5));
        if !c.respond(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok") {
            return;
        }
    }
}

/// Reads a request and never answers it.
fn hang_handler(c: &mut Conn) {
    if c.read_request() {
        c.sleep_until_stopped();
    }
}

/// A scratch directory removed when the returned guard is dropped.
fn scratch(name: &str) -> tempfile::TempDir {
    common::scratch_dir(&format!("loadlab-record-{name}-"))
}

fn spawn(args: &[&str], results: &Path) -> Child {
    Command::new(BIN)
        .args(args)
        .arg("--results")
        .arg(results)
        .arg("--no-progress")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start loadlab")
}

fn loadlab(args: &[&str], results: &Path) -> Output {
    common::loadlab_in(args, results)
}

fn signal(child: &Child, sig: libc::c_int) {
    // SAFETY: sending a signal to our own child process.
    unsafe { libc::kill(child.id() as libc::pid_t, sig) };
}

/// The only run in the store, as `runs` lists it, and its run.json.
fn only_run(results: &Path) -> (String, Value) {
    let o = loadlab(&["runs"], results);
    assert!(o.status.success(), "{}", text(&o));
    let listing = String::from_utf8_lossy(&o.stdout).to_string();
    let line = listing
        .lines()
        .find(|l| l.starts_with('r'))
        .unwrap_or_else(|| panic!("no run listed:\n{listing}"));
    let id = line.split_whitespace().next().unwrap().to_string();
    assert!(line.contains("interrupted"), "{listing}");
    let json = results.join("runs").join(&id).join("run.json");
    let run: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    (id, run)
}

/// Waits (at most 20 s) until the server has seen `n` requests: the run is under way.
fn wait_for_requests(server: &Server, n: u64) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while server.requests() < n {
        assert!(
            Instant::now() < deadline,
            "the run never got going: {} requests",
            server.requests()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A 30 s run at 50/s against an answering server, sent `signals` once the server has seen
/// `seen` requests: the server, the run's results directory and what the run printed.
fn signalled_run(
    name: &str,
    seen: u64,
    signals: &[libc::c_int],
) -> (Server, tempfile::TempDir, Output) {
    let server = Server::start(ok_handler);
    let results = scratch(name);
    let url = server.url("/");
    let child = spawn(
        &["run", "--url", &url, "--rate", "50/s", "--duration", "30s"],
        results.path(),
    );
    wait_for_requests(&server, seen);
    for &sig in signals {
        signal(&child, sig);
    }
    let out = child.wait_with_output().unwrap();
    (server, results, out)
}

fn all_requests(run: &Value) -> u64 {
    run["requests"]["total"].as_u64().unwrap() + run["requests"]["warmup"].as_u64().unwrap()
}

fn report_works(id: &str, results: &Path) {
    let o = loadlab(&["report", id, "--quiet"], results);
    assert!(o.status.success(), "report {id}: {}", text(&o));
}

#[test]
fn sigterm_sighup_and_sigint_stop_a_run_and_keep_its_result() {
    let _serial = exclusive();
    for (sig, name) in [
        (libc::SIGTERM, "SIGTERM"),
        (libc::SIGHUP, "SIGHUP"),
        (libc::SIGINT, "SIGINT"),
    ] {
        let server = Server::start(ok_handler);
        let tmp = scratch(&name.to_lowercase());
        let results = tmp.path();
        let url = server.url("/");
        let child = spawn(
            &["run", "--url", &url, "--rate", "50/s", "--duration", "30s"],
            results,
        );
        wait_for_requests(&server, 40);
        let sent = Instant::now();
        signal(&child, sig);
        let out = child.wait_with_output().unwrap();
        assert!(
            sent.elapsed() < Duration::from_secs(3),
            "{name}: stops promptly"
        );
        assert_eq!(out.status.code(), Some(3), "{name}: {}", text(&out));
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            stdout.contains("partial result stored as run"),
            "{name}: the summary is printed\n{stdout}"
        );
        let (id, run) = only_run(results);
        assert_eq!(run["stop"], "signal", "{name}");
        assert_eq!(run["validity"]["reasons"][0]["kind"], "interrupted");
        assert!(run["validity"]["reasons"][0]["message"]
            .as_str()
            .unwrap()
            .contains(name));
        let ours = all_requests(&run);
        let theirs = server.requests();
        assert!(ours >= 40, "{name}: {ours}\n{}", text(&out));
        assert!(
            ours.abs_diff(theirs) <= 2,
            "{name}: we count {ours}, the server {theirs}"
        );
        report_works(&id, results);
        let _ = std::fs::remove_dir_all(results);
    }
}

#[test]
fn requests_hanging_at_a_signal_are_counted_as_interrupted() {
    let _serial = exclusive();
    let server = Server::start(hang_handler);
    let tmp = scratch("hang");
    let results = tmp.path();
    let url = server.url("/");
    let child = spawn(
        &[
            "run",
            "--url",
            &url,
            "--vus",
            "20",
            "--duration",
            "30s",
            "--timeout",
            "60s",
        ],
        results,
    );
    wait_for_requests(&server, 20);
    std::thread::sleep(Duration::from_millis(200));
    signal(&child, libc::SIGINT);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    let (_, run) = only_run(results);
    assert_eq!(server.requests(), 20, "each VU sent one request");
    assert_eq!(all_requests(&run), 20, "{run}");
    assert_eq!(run["requests"]["interrupted"], 20);
    assert_eq!(run["errors"]["interrupted"], 20);
    assert_eq!(
        run["latency_ms"]["count"], 0,
        "no latency for requests never answered"
    );
    let _ = std::fs::remove_dir_all(results);
}

#[test]
fn open_model_requests_hanging_at_a_signal_are_counted_every_time() {
    // The last interval was taken as soon as the run was cancelled, before the worker counted
    // what was still in flight: at 50/s against a server that never answers, Ctrl-C reported
    // 0 requests whenever an interval boundary came within the worker's 50 ms wait for the
    // cancellation (6 runs of 6 signalled 3 s after the start). Repeated, signalled at five
    // points of the last 50 ms before the first boundary, to catch the race.
    let _serial = exclusive();
    let server = Server::start(hang_handler);
    for (attempt, signal_at_ms) in [955u64, 965, 975, 985, 995].into_iter().enumerate() {
        let tmp = scratch(&format!("hang-open-{attempt}"));
        let results = tmp.path();
        let before = server.requests();
        let child = spawn(
            &[
                "run",
                "--url",
                &server.url("/"),
                "--rate",
                "50/s",
                "--duration",
                "30s",
                "--timeout",
                "60s",
            ],
            results,
        );
        // The first arrival is sent at the run's start: signal just before its first second ends.
        wait_for_requests(&server, before + 1);
        let first = Instant::now();
        std::thread::sleep(Duration::from_millis(signal_at_ms).saturating_sub(first.elapsed()));
        signal(&child, libc::SIGINT);
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(3), "{}", text(&out));
        let (_, run) = only_run(results);
        let sent = server.requests() - before;
        let counted = all_requests(&run);
        // The server counts a request once it has read it; one sent in the last instant may
        // not be read yet.
        assert!(
            counted >= sent && counted <= sent + 2,
            "signalled at {signal_at_ms} ms: {counted} counted, {sent} reached the server; requests {}",
            run["requests"]
        );
        assert_eq!(
            run["requests"]["interrupted"].as_u64(),
            Some(counted),
            "{}",
            run["requests"]
        );
        assert_eq!(
            run["errors"]["interrupted"].as_u64(),
            Some(counted),
            "{}",
            run["errors"]
        );
        let _ = std::fs::remove_dir_all(results);
    }
}

#[test]
fn a_second_signal_quits_at_once_and_the_record_still_holds_the_run() {
    let _serial = exclusive();
    let (server, tmp, out) = signalled_run("twice", 130, &[libc::SIGINT, libc::SIGINT]);
    let results = tmp.path();
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    let (id, run) = only_run(results);
    let ours = all_requests(&run);
    let theirs = server.requests();
    assert!(
        ours <= theirs + 2,
        "never more than was sent: {ours} vs {theirs}"
    );
    assert!(
        ours + 60 >= theirs,
        "at most the last second is lost: {ours} vs {theirs}"
    );
    assert!(ours >= 70, "at least the flushed seconds: {ours}");
    report_works(&id, results);
    let _ = std::fs::remove_dir_all(results);
}

#[test]
fn a_killed_run_is_listed_as_interrupted_with_what_its_record_held() {
    let _serial = exclusive();
    let (server, tmp, out) = signalled_run("kill", 180, &[libc::SIGKILL]);
    let results = tmp.path();
    assert_eq!(out.status.code(), None, "killed");
    let (id, run) = only_run(results);
    assert_eq!(run["stop"], "crashed");
    assert_eq!(run["interrupted"], true);
    let ours = all_requests(&run);
    let theirs = server.requests();
    assert!(
        (theirs.saturating_sub(60)..=theirs + 2).contains(&ours),
        "all but the last second of {theirs}: {ours}"
    );
    let o = loadlab(&["runs", "show", &id], results);
    assert!(o.status.success(), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("partial result"));
    report_works(&id, results);
    let _ = std::fs::remove_dir_all(results);
}

const STUDY: &str = "
name: killed
load: { model: open, rate: 40/s, duration: 1s }
steps: [ { name: ping, get: /api/ping } ]
study:
  repeat: 3
  variants:
    - { name: a }
    - { name: b, load: { model: open, rate: 60/s, duration: 1s } }
";

#[test]
fn a_killed_study_can_be_reported_and_resumed() {
    let _serial = exclusive();
    let target = common::Target::start(&[]);
    let tmp = scratch("study");
    let results = tmp.path();
    let file = results.join("study.yaml");
    std::fs::write(&file, STUDY).unwrap();
    let mut child = common::study_command(&file, &target.url, results)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Kill it while the fourth run is going.
    let stderr = BufReader::new(child.stderr.take().unwrap());
    let mut seen = String::new();
    for line in stderr.lines() {
        let line = line.unwrap();
        seen.push_str(&line);
        seen.push('\n');
        if line.starts_with("[4/6]") {
            std::thread::sleep(Duration::from_millis(300));
            signal(&child, libc::SIGKILL);
            break;
        }
    }
    let _ = child.wait();
    let id = seen
        .lines()
        .find(|l| l.starts_with("study killed ("))
        .and_then(|l| l.split(['(', ')']).nth(1))
        .unwrap_or_else(|| panic!("no study id in:\n{seen}"))
        .to_string();
    let o = loadlab(&["runs", "studies"], results);
    let listing = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(listing.contains("interrupted (resumable)"), "{listing}");
    assert!(listing.contains("3/6 runs"), "{listing}");
    // The partial study is reported and compared as it is.
    report_works(&id, results);
    // The run that was killed is in the store, interrupted.
    let o = loadlab(&["runs"], results);
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("interrupted"),
        "{}",
        text(&o)
    );
    // A changed file cannot be resumed.
    std::fs::write(&file, STUDY.replace("60/s", "70/s")).unwrap();
    let o = loadlab(
        &[
            "study",
            file.to_str().unwrap(),
            "--target",
            &target.url,
            "--resume",
            &id,
        ],
        results,
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("changed since study"));
    std::fs::write(&file, STUDY).unwrap();
    let o = loadlab(
        &[
            "study",
            file.to_str().unwrap(),
            "--target",
            &target.url,
            "--resume",
            &id,
            "--no-progress",
        ],
        results,
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains("3 to run (resumed: 3 done)"), "{stderr}");
    // Only the missing slots (one the host disturbed is made again under its own number:
    // "[6/6] b (re-run 1 of an invalid run)").
    let slots: std::collections::BTreeSet<&str> = stderr
        .lines()
        .filter_map(|l| Some(l.strip_prefix('[')?.split_once(']')?.0))
        .collect();
    assert_eq!(
        slots,
        ["4/6", "5/6", "6/6"].into_iter().collect(),
        "only the missing runs: {stderr}"
    );
    let study: Value = serde_json::from_str(
        &std::fs::read_to_string(results.join("studies").join(&id).join("study.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(study["interrupted"], false);
    for v in study["variants"].as_array().unwrap() {
        assert_eq!(v["runs"].as_array().unwrap().len(), 3, "{v}");
    }
    let _ = std::fs::remove_dir_all(results);
}

/// `setrlimit(RLIMIT_FSIZE)` in the child: writes past `bytes` fail as a full disk would.
fn with_file_limit(cmd: &mut Command, bytes: u64) {
    use std::os::unix::process::CommandExt;
    // SAFETY: setrlimit is async-signal-safe and only affects the child.
    unsafe {
        cmd.pre_exec(move || {
            let limit = libc::rlimit {
                rlim_cur: bytes,
                rlim_max: bytes,
            };
            if libc::setrlimit(libc::RLIMIT_FSIZE, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// A small tmpfs at `dir` when this machine allows mounting one (root), so the disk really
/// fills; `false` when it cannot be mounted.
fn small_disk(dir: &Path) -> bool {
    Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=128k", "tmpfs"])
        .arg(dir)
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

#[test]
fn a_full_disk_never_loses_the_run() {
    let _serial = exclusive();
    let server = Server::start(ok_handler);
    let tmp = scratch("disk");
    let results = tmp.path();
    // Twenty steps: the record grows by ~25 KB a second and fills the disk within seconds.
    let steps: String = (0..20)
        .map(|i| format!("  - {{ name: step{i}, get: /s{i} }}\n"))
        .collect();
    // Not in `results`: a small disk is mounted over it.
    let scenario_dir = scratch("disk-scenario");
    let file = scenario_dir.path().join("loadlab-disk.yaml");
    std::fs::write(
        &file,
        format!(
            "target: {}\nload: {{ model: open, rate: 400/s, duration: 6s }}\nsteps:\n{steps}",
            server.url("")
        ),
    )
    .unwrap();
    let mounted = small_disk(results);
    let mut cmd = Command::new(BIN);
    cmd.args(["run", file.to_str().unwrap(), "--no-progress"])
        .arg("--results")
        .arg(results);
    if !mounted {
        eprintln!("no tmpfs here (not root?): a file-size limit stands in for a full disk");
        with_file_limit(&mut cmd, 96 * 1024);
    }
    let out = cmd.output().unwrap();
    let files = walk(&results.join("runs"));
    let listing = loadlab(&["runs"], results);
    if mounted {
        let _ = Command::new("umount").arg(results).status();
    }
    let _ = std::fs::remove_file(&file);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stdout.contains("requests ...."),
        "the summary is printed from memory:\n{stdout}"
    );
    assert!(
        stdout.contains("2400 total") || stdout.contains("total, "),
        "{stdout}"
    );
    assert!(stderr.contains("results not stored:"), "{stderr}");
    assert!(
        stderr.contains("File too large") || stderr.contains("No space left"),
        "the failure is named: {stderr}"
    );
    // Nothing is presented as a result that is not one: no run.json, no empty file.
    for entry in &files {
        let name = entry.file_name().unwrap().to_string_lossy().to_string();
        assert_ne!(name, "run.json", "no summary was stored");
        assert!(
            !name.ends_with(".tmp"),
            "no temporary file left: {}",
            entry.display()
        );
    }
    // The store can still be read on the full disk; the run is listed as what it was: it ran
    // to its end and its results were not stored (it was listed `interrupted`).
    assert!(listing.status.success(), "{}", text(&listing));
    let listed = String::from_utf8_lossy(&listing.stdout).to_string();
    assert!(listed.contains("completed, not stored"), "{listed}");
    assert!(!listed.contains("interrupted"), "{listed}");
    let _ = std::fs::remove_dir_all(results);
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                out.extend(walk(&p));
            } else {
                out.push(p);
            }
        }
    }
    out
}

#[test]
fn unwritable_result_paths_are_refused_before_any_load() {
    let _serial = exclusive();
    let server = Server::start(ok_handler);
    let tmp = scratch("unwritable");
    let results = tmp.path();
    let url = server.url("/");
    let missing = results.join("no/such/dir/out.json");
    let o = loadlab(
        &[
            "run",
            "--url",
            &url,
            "--rate",
            "50/s",
            "--duration",
            "1s",
            "--json",
            missing.to_str().unwrap(),
        ],
        results,
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("does not exist"),
        "{}",
        text(&o)
    );
    let file = results.join("a-file");
    std::fs::write(&file, "x").unwrap();
    let o = Command::new(BIN)
        .args([
            "run",
            "--url",
            &url,
            "--rate",
            "50/s",
            "--duration",
            "1s",
            "--results",
        ])
        .arg(file.join("below"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("--results"),
        "{}",
        text(&o)
    );
    assert_eq!(server.requests(), 0, "nothing was sent");
    let _ = std::fs::remove_dir_all(results);
}
