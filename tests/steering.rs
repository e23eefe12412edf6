//! Steering a run from the command line: `loadlab run --control` takes `loadlab control`
//! commands (a new rate, pause, resume, stop) while it goes; the run keeps each in its record
//! with its time and source, sends nothing while paused, ends `stop: control` with exit 0,
//! and sent exactly what the target answered. Refused commands say why (exit 2); a token,
//! when set, guards every command (401 without it); a study takes no steering.

mod common;
#[path = "common/run_json.rs"]
mod run_json;

use common::undisturbed::until_undisturbed;
use common::{exclusive, spawn_announcing, text, Target, BIN};
use run_json::{http_get, metric};
use serde_json::Value;
use std::io::Write;
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Output};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

/// `loadlab run --url TARGET/api/ping --rate 20/s --duration DURATION --control 127.0.0.1:0 …`,
/// its control address (read from its stderr) and the rest of its stderr.
fn spawn_steerable(
    target: &str,
    dir: &Path,
    duration: &str,
    extra: &[&str],
) -> (Child, String, Receiver<String>) {
    let mut command = Command::new(BIN);
    command
        .args(["run", "--url", &format!("{target}/api/ping")])
        .args(["--rate", "20/s", "--duration", duration, "--no-progress"])
        .args(["--control", "127.0.0.1:0"])
        .args(extra)
        .arg("--results")
        .arg(dir.join("results"))
        .arg("--json")
        .arg(dir.join("run.json"));
    let (child, rest, rx) = spawn_announcing(command, "control: ");
    let addr = rest
        .split_whitespace()
        .next()
        .unwrap_or_default()
        .to_string();
    (child, addr, rx)
}

/// Until the run behind `addr` says it is running (it takes commands once its load began).
fn wait_running(addr: &str, token: &[&str]) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let mut args = vec!["status"];
        args.extend_from_slice(token);
        let o = control(addr, &args);
        if stdout(&o).starts_with("running") {
            return;
        }
        assert!(Instant::now() < deadline, "the run never ran: {}", text(&o));
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn control(addr: &str, args: &[&str]) -> Output {
    Command::new(BIN)
        .args(["control", addr])
        .args(args)
        .output()
        .unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).to_string()
}

/// A raw request to the control API: its status line and body.
fn raw(addr: &str, request: &str) -> (String, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.write_all(request.as_bytes()).unwrap();
    let mut answer = String::new();
    std::io::Read::read_to_string(&mut s, &mut answer).unwrap();
    let status = answer.lines().next().unwrap_or("").to_string();
    let body = answer.split("\r\n\r\n").nth(1).unwrap_or("").to_string();
    (status, body)
}

/// One steered run from scratch: a fresh target, the commands, the run's end.
fn steered_run(dir: &Path) -> (Option<i32>, Value, (Output, u64, Vec<String>)) {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).unwrap();
    let target = Target::start(&[]);
    // Planned under 10 s, the record is cut in tenths: each stretch of a second holds several.
    let (child, addr, _stderr) = spawn_steerable(&target.url, dir, "9s", &[]);
    let mut said = Vec::new();
    let mut say = |args: &[&str], ok: bool| {
        let o = control(&addr, args);
        assert_eq!(o.status.success(), ok, "control {args:?}: {}", text(&o));
        said.push(if ok {
            stdout(&o)
        } else {
            String::from_utf8_lossy(&o.stderr).to_string()
        });
    };
    wait_running(&addr, &[]);
    std::thread::sleep(Duration::from_millis(1000));
    say(&["rate", "60/s"], true);
    std::thread::sleep(Duration::from_millis(1000));
    say(&["pause"], true);
    say(&["pause"], false);
    say(&["vus", "3"], false);
    std::thread::sleep(Duration::from_millis(1000));
    say(&["resume"], true);
    std::thread::sleep(Duration::from_millis(1000));
    say(&["status"], true);
    say(&["stop"], true);
    let out = child.wait_with_output().unwrap();
    let run: Value = std::fs::read_to_string(dir.join("run.json"))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(Value::Null);
    let metrics = http_get(target.url.trim_start_matches("http://"), "/metrics");
    let answered = metric(
        &metrics,
        "http_requests_total{route=\"/api/ping\",code=\"200\"}",
    );
    (out.status.code(), run, (out, answered, said))
}

#[test]
fn a_run_is_raised_paused_resumed_and_stopped_from_the_command_line() {
    let _serial = exclusive();
    let tmp = common::scratch_dir("loadlab-steer-");
    let dir = tmp.path();
    let (code, run, (out, answered, said)) = until_undisturbed("steered run", || steered_run(dir));
    assert_eq!(code, Some(0), "{}\n{said:?}", text(&out));
    assert!(said[0].starts_with("rate 20/s → 60/s at "), "{said:?}");
    assert!(said[1].starts_with("paused at "), "{said:?}");
    assert!(said[2].contains("already paused"), "{said:?}");
    assert!(
        said[3].contains("open model") && said[3].contains("rate 800/s"),
        "{said:?}"
    );
    assert!(
        said[4].starts_with("resumed at ") && said[4].contains("60/s"),
        "{said:?}"
    );
    assert!(
        said[5].starts_with("running: 60/s now, 3 command(s)"),
        "{said:?}"
    );
    assert!(said[6].starts_with("stopping at "), "{said:?}");

    assert_eq!(run["stop"], "control", "{}", run["stop"]);
    assert_eq!(run["interrupted"], false);
    common::assert_matches_run_schema(&run);
    let events = run["steering"]
        .as_array()
        .expect("the commands are recorded");
    let actions: Vec<&str> = events
        .iter()
        .map(|e| e["action"].as_str().unwrap())
        .collect();
    assert_eq!(actions, ["rate", "pause", "resume", "stop"], "{events:?}");
    assert!(events.iter().all(|e| e["source"] == "cli"), "{events:?}");
    assert_eq!(
        (events[0]["before"].as_f64(), events[0]["after"].as_f64()),
        (Some(20.0), Some(60.0))
    );
    let at = |i: usize| events[i]["at_s"].as_f64().unwrap();
    assert!(
        at(0) < at(1) && at(1) < at(2) && at(2) < at(3),
        "{events:?}"
    );

    // Exactly what the target answered, and about what the commands asked for: 20/s, 60/s,
    // nothing while paused, 60/s again (each stretch as long as it really was).
    let total = run["requests"]["total"].as_u64().unwrap();
    assert_eq!(total, answered, "the target answered every request sent");
    let expected = 20.0 * at(0) + 60.0 * (at(1) - at(0)) + 60.0 * (at(3) - at(2));
    assert!(
        (total as f64 - expected).abs() <= 3.0 + 0.03 * expected,
        "{total} requests, {expected:.0} planned as steered ({events:?})"
    );
    // Nothing was sent while paused: the intervals inside the pause (`t` is an interval's
    // start), 0.2 s clear of its ends (a response to a request sent just before it may come
    // late on a held-up host), are empty.
    let (paused, resumed) = (at(1), at(2));
    let mut inside_the_pause = 0;
    for i in run["intervals"].as_array().unwrap() {
        let t = i["t"].as_f64().unwrap();
        let len = i["length_s"].as_f64().unwrap();
        if t >= paused + 0.2 && t + len <= resumed - 0.2 {
            inside_the_pause += 1;
            assert_eq!(i["requests"], 0, "sent while paused: {i}");
        }
    }
    assert!(inside_the_pause >= 4, "a pause of a second holds tenths");
    assert_stretches(&run, &[at(0), at(1), at(2), at(3)]);
    // The summary says what drove the run, and what each level measured.
    let summary = stdout(&out);
    assert!(
        summary.contains("steered: the load was driven by hand, 4 commands"),
        "{summary}"
    );
    assert!(summary.contains("load as steered"), "{summary}");
    let _ = std::fs::remove_dir_all(dir);
}

/// The run's stretches of constant load: 20/s, 60/s, paused, 60/s, each sent at about its
/// level and nothing while paused; with the intervals in which the load changed (in no
/// stretch), they hold every request exactly once.
fn assert_stretches(run: &Value, changes: &[f64]) {
    assert_eq!(run["steered"], true);
    let driven = run["load"]["driven"]["points"]
        .as_array()
        .expect("the load as driven");
    assert_eq!(driven.first().unwrap()[1], 20.0, "{driven:?}");
    let stretches = run["stretches"].as_array().expect("the stretches");
    let levels: Vec<String> = stretches
        .iter()
        .map(|s| match s["level"]["kind"].as_str().unwrap() {
            "steady" => s["level"]["level"].to_string(),
            kind => kind.to_string(),
        })
        .collect();
    assert_eq!(levels, ["20.0", "60.0", "paused", "60.0"], "{stretches:?}");
    for s in stretches {
        let measured = s["measured_s"].as_f64().unwrap();
        assert!(
            measured >= 0.5,
            "a stretch of a second holds most of its tenths: {s}"
        );
        let requests = s["requests"].as_u64().unwrap();
        match s["level"]["level"].as_f64() {
            Some(level) => {
                let expected = level * measured;
                assert!(
                    (requests as f64 - expected).abs() <= 2.0 + 0.15 * expected,
                    "{requests} requests in {measured} s at {level}/s: {s}"
                );
            }
            // At most the responses to requests sent just before the pause.
            None => assert!(requests <= 2, "sent while paused: {s}"),
        }
    }
    let inside = |t: f64, len: f64| {
        stretches.iter().any(|s| {
            t >= s["from_s"].as_f64().unwrap() - 1e-6
                && t + len <= s["to_s"].as_f64().unwrap() + 1e-6
        })
    };
    let mut between = 0;
    for i in run["intervals"].as_array().unwrap() {
        let (t, len) = (i["t"].as_f64().unwrap(), i["length_s"].as_f64().unwrap());
        if !inside(t, len) {
            between += i["requests"].as_u64().unwrap();
            assert!(
                changes.iter().any(|c| t < c + 1e-6 && c - 1e-6 < t + len) || t + len > changes[3],
                "an interval in no stretch while the load held: {i}"
            );
        }
    }
    let in_stretches: u64 = stretches
        .iter()
        .map(|s| s["requests"].as_u64().unwrap())
        .sum();
    assert_eq!(
        in_stretches + between,
        run["requests"]["total"].as_u64().unwrap()
    );
}

#[test]
fn a_token_guards_every_command_and_a_study_takes_none() {
    let _serial = exclusive();
    let target = Target::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let (mut child, addr, _stderr) = spawn_steerable(
        &target.url,
        dir.path(),
        "20s",
        &["--control-token", "s3cret"],
    );
    let pause = "POST /api/pause HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}";
    let (status, body) = raw(&addr, pause);
    assert!(status.contains("401"), "{status} {body}");
    assert!(body.contains("Authorization: Bearer"), "{body}");
    let o = control(&addr, &["pause"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let o = control(&addr, &["pause", "--token", "wrong"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    // A page of another site may not steer through the user's browser, nor a form post.
    let with_token = |extra: &str| {
        format!("POST /api/pause HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer s3cret\r\n{extra}Content-Length: 2\r\nConnection: close\r\n\r\n{{}}")
    };
    let (status, _) = raw(
        &addr,
        &with_token("Content-Type: application/json\r\nOrigin: http://evil.example\r\n"),
    );
    assert!(status.contains("403"), "{status}");
    let (status, _) = raw(&addr, &with_token("Content-Type: text/plain\r\n"));
    assert!(status.contains("415"), "{status}");
    wait_running(&addr, &["--token", "s3cret"]);
    let o = control(&addr, &["stop", "--token", "s3cret"]);
    assert!(o.status.success(), "{}", text(&o));
    let out = child.wait().unwrap();
    assert!(out.code().is_some());
    let _ = child.kill();

    // Nothing listens: a clear error, exit 2.
    let o = control("127.0.0.1:9", &["pause"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("cannot reach the run"),
        "{}",
        text(&o)
    );
    let o = control(&addr, &["faster"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("unknown command `faster`"));

    // A study's runs follow their plan.
    let file = dir.path().join("s.yaml");
    std::fs::write(
        &file,
        "load: { model: open, rate: 5/s, duration: 1s }\nsteps: [ { get: /api/ping } ]\nstudy: { repeat: 2 }\n",
    )
    .unwrap();
    let o = common::study_command(&file, &target.url, &dir.path().join("results"))
        .args(["--control", "127.0.0.1:0"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("must follow their plan"),
        "{}",
        text(&o)
    );
}
