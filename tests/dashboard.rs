//! `--dashboard`: the server-sent-event stream as a program reads it (counts grow, the last
//! totals are the run's), the page as a browser shows it (headless Chromium over the DevTools
//! protocol: its numbers change while the run goes), and a busy port refused before any load.
//!
//! The browser test needs `/usr/bin/chromium` (or `$CHROMIUM`): `scripts/install-test-deps.sh`.

#[path = "dashboard_support/browser.rs"]
mod browser;
mod common;

use browser::{http_get, Browser};
use common::{exclusive, spawn_announcing, text, Target, BIN};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

/// A scratch directory removed when the returned guard is dropped.
fn scratch(name: &str) -> tempfile::TempDir {
    common::scratch_dir(&format!("loadlab-dash-{name}-"))
}

/// The steps of the page tests' scenario: one that always answers, and one the built-in
/// target does not have (every request of it fails with a 404).
const PING_AND_MISSING: &str =
    "  - { name: ping, get: /api/ping }\n  - { name: items, get: /api/items }\n";

/// `loadlab run FILE --dashboard 127.0.0.1:0 …` of `steps` at 100 iterations/s, and the
/// dashboard's URL it printed.
fn run_with_dashboard(
    dir: &Path,
    target: &str,
    duration: &str,
    steps: &str,
) -> (Child, String, Receiver<String>) {
    let file = dir.join("s.yaml");
    std::fs::write(
        &file,
        format!(
            "name: dash\nload: {{ model: open, rate: 100/s, duration: {duration} }}\n\
             thresholds:\n  - latency.p95 < 2s\n  - errors.rate < 1%\n\
             steps:\n{steps}"
        ),
    )
    .unwrap();
    let mut run = Command::new(BIN);
    run.arg("run")
        .arg(&file)
        .args(["--target", target, "--no-progress"])
        .arg("--results")
        .arg(dir.join("results"))
        .arg("--json")
        .arg(dir.join("run.json"));
    spawn_with_dashboard(run)
}

/// Spawns `command --dashboard 127.0.0.1:0`; the child, the URL it printed, its other lines.
fn spawn_with_dashboard(mut command: Command) -> (Child, String, Receiver<String>) {
    command.args(["--dashboard", "127.0.0.1:0"]);
    let (child, url, rx) = spawn_announcing(command, "dashboard: ");
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");
    (child, url, rx)
}

fn port_of(url: &str) -> u16 {
    url.trim_start_matches("http://127.0.0.1:")
        .trim_end_matches('/')
        .parse()
        .unwrap()
}

/// Reads `/events` until the `end` event (at most 30 s); every `data:` line as JSON.
fn read_events(port: u16) -> (Vec<Value>, bool) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    write!(s, "GET /events HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    let mut lines = BufReader::new(s).lines();
    let mut events = Vec::new();
    let mut retry = false;
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        let Some(Ok(line)) = lines.next() else { break };
        retry |= line.starts_with("retry: ");
        if let Some(d) = line.strip_prefix("data: ") {
            let v: Value = serde_json::from_str(d).unwrap();
            let end = v["type"] == "end";
            events.push(v);
            if end {
                break;
            }
        }
    }
    (events, retry)
}

#[test]
fn events_stream_frames_whose_counts_grow_to_the_run_totals() {
    let _serial = exclusive();
    let target = Target::start(&["--service-time", "2ms"]);
    let tmp = scratch("events");
    let dir = tmp.path();
    let (child, url, _stderr) = run_with_dashboard(dir, &target.url, "2s", PING_AND_MISSING);
    let (events, retry) = read_events(port_of(&url));
    let out = child.wait_with_output().unwrap();
    assert!(retry, "the stream starts with `retry:`");
    let run: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("run.json")).unwrap()).unwrap();
    let what = format!("{}\nevents: {events:?}", text(&out));

    assert_eq!(events[0]["type"], "run_start", "{what}");
    assert_eq!(events[0]["steps"], json!(["ping", "items"]));
    let frames: Vec<&Value> = events.iter().filter(|e| e["type"] == "frame").collect();
    assert!(frames.len() >= 2, "{what}");
    let totals: Vec<u64> = frames
        .iter()
        .map(|f| f["frame"]["total_requests"].as_u64().unwrap())
        .collect();
    assert!(totals.windows(2).all(|w| w[0] <= w[1]), "{totals:?}");
    assert!(totals.last() > totals.first(), "{totals:?}");
    // Each frame's requests add up to the running total; steps add up to the frame.
    let sum: u64 = frames
        .iter()
        .map(|f| f["frame"]["requests"].as_u64().unwrap())
        .sum();
    let last = &frames.last().unwrap()["frame"];
    assert_eq!(sum, last["total_requests"].as_u64().unwrap());
    assert_eq!(last["total_requests"], run["requests"]["total"], "{what}");
    assert_eq!(last["total_failed"], run["requests"]["failed"], "{what}");
    let busy = frames
        .iter()
        .find(|f| f["frame"]["requests"].as_u64().unwrap() > 0)
        .unwrap();
    let steps: u64 = busy["frame"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["requests"].as_u64().unwrap())
        .sum();
    assert_eq!(steps, busy["frame"]["requests"].as_u64().unwrap());
    assert!(busy["frame"]["latency_ms"]["p95"].as_f64().unwrap() >= 2.0);
    assert_eq!(busy["frame"]["planned_unit"], "arrivals/s");
    // The thresholds, judged on the run so far, end as the run's own verdicts.
    let th = frames.last().unwrap()["thresholds"].as_array().unwrap();
    assert_eq!(th.len(), 2, "{what}");
    assert_eq!(th[0]["expr"], "latency.p95 < 2s");
    assert!(th[0]["actual"].as_f64().unwrap() > 0.0);
    // The run's end, then the command's, with its exit status.
    let run_end = events.iter().find(|e| e["type"] == "run_end").unwrap();
    assert_eq!(run_end["stop"], "completed");
    assert_eq!(run_end["total_requests"], run["requests"]["total"]);
    let end = events.last().unwrap();
    assert_eq!(end["type"], "end", "{what}");
    assert_eq!(
        end["exit_status"].as_i64(),
        out.status.code().map(i64::from),
        "{what}"
    );
}

#[test]
fn a_study_streams_each_run_its_progress_and_links_its_report() {
    let _serial = exclusive();
    let target = Target::start(&[]);
    let tmp = scratch("study");
    let dir = tmp.path();
    let file = dir.join("st.yaml");
    std::fs::write(
        &file,
        "name: st\nload: { model: open, rate: 50/s, duration: 1s }\n\
         steps:\n  - { name: ping, get: /api/ping }\n\
         study:\n  repeat: 2\n",
    )
    .unwrap();
    let mut study = common::study_command(&file, &target.url, &dir.join("results"));
    study.args(["--dashboard-linger", "3s"]);
    let (mut child, url, _stderr) = spawn_with_dashboard(study);
    let port = port_of(&url);
    let (events, _) = read_events(port);
    // While it lingers, the report is served.
    let report = http_get(port, "/report").unwrap_or_default();
    let status = child.wait().unwrap();
    let what = format!("{events:#?}");
    let starts: Vec<&Value> = events.iter().filter(|e| e["type"] == "run_start").collect();
    // This reader was there from the start: it saw both runs (and a re-run of an invalid one,
    // on a busy machine).
    assert!(starts.len() >= 2, "{what}");
    assert_eq!(starts[1]["seq"], 2);
    let framed = events
        .iter()
        .find(|e| e["type"] == "frame" && e["seq"] == 2)
        .expect("frames of run 2");
    assert_eq!(framed["context"]["kind"], "study");
    assert_eq!(framed["context"]["total"], 2);
    assert!(
        framed["context"]["current"]
            .as_str()
            .unwrap()
            .starts_with('['),
        "{what}"
    );
    let done = framed["context"]["results"].as_array().unwrap();
    assert_eq!(done.len(), 1, "{what}");
    assert!(done[0]["rate"].as_f64().unwrap() > 10.0, "{what}");
    let contexts: Vec<&Value> = events.iter().filter(|e| e["type"] == "context").collect();
    let last = &contexts.last().unwrap()["context"];
    assert_eq!(
        last["results"].as_array().unwrap().len(),
        starts.len(),
        "{what}"
    );
    assert!(last["current"] == "", "{what}");
    let end = events.last().unwrap();
    assert_eq!(end["type"], "end");
    assert_eq!(end["exit_status"].as_i64(), status.code().map(i64::from));
    assert_eq!(end["report"], "/report", "{what}");
    assert!(report.contains("<html"), "{report:.200}");
}

#[test]
fn a_busy_port_or_a_bad_address_is_refused_before_any_load() {
    let busy = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = busy.local_addr().unwrap().to_string();
    let out = Command::new(BIN)
        .args(["run", "--url", "http://127.0.0.1:9/", "--duration", "1s"])
        .args(["--rate", "10/s", "--dashboard", &addr])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        err.contains("--dashboard") && err.contains("already in use"),
        "{err}"
    );
    assert!(err.contains("choose another port"), "{err}");

    let out = Command::new(BIN)
        .args(["run", "--url", "http://127.0.0.1:9/", "--duration", "1s"])
        .args(["--rate", "10/s", "--dashboard", "nowhere"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(err.contains("`nowhere` is not an address"), "{err}");
}

#[test]
fn the_page_in_headless_chromium_shows_numbers_that_change_while_the_run_goes() {
    let _serial = exclusive();
    let mut browser = Browser::launch(scratch("chromium"));
    // Requests still in flight when the plan ends: the record's last interval is their drain,
    // a few milliseconds long.
    let target = Target::start(&["--service-time", "15ms"]);
    let tmp = scratch("browser");
    let dir = tmp.path();
    let (child, url, _stderr) = run_with_dashboard(dir, &target.url, "3s", PING_AND_MISSING);
    browser.call("Page.navigate", json!({ "url": url }));
    let first = browser.count_above(0);
    std::thread::sleep(Duration::from_millis(1000));
    let second = browser.count_above(first);
    assert!(first > 0, "the page shows a request count");
    assert!(
        second > first,
        "the count grows while the run goes: {first} then {second}"
    );
    let drawn = browser.eval(
        "({latency: document.querySelectorAll('#chart-latency polyline').length, \
           load: document.querySelectorAll('#chart-load polyline').length, \
           steps: document.querySelectorAll('#steps tr').length, \
           thresholds: document.getElementById('thresholds').textContent})",
    );
    assert_eq!(drawn["latency"], 3, "p50, p95, p99 drawn: {drawn}");
    assert_eq!(drawn["load"], 2, "planned and achieved drawn: {drawn}");
    assert_eq!(drawn["steps"], 3, "a header and two steps: {drawn}");
    assert!(
        drawn["thresholds"]
            .as_str()
            .unwrap()
            .contains("latency.p95 < 2s"),
        "{drawn}"
    );
    let out = child.wait_with_output().unwrap();
    // The page was told how the command ended, before the server went away.
    let deadline = Instant::now() + Duration::from_secs(10);
    let end = loop {
        let e = browser.eval("(document.getElementById('end-status') || {}).textContent || ''");
        if e != "" || Instant::now() > deadline {
            break e;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(
        end.as_str().and_then(|s| s.parse::<i32>().ok()),
        out.status.code(),
        "{}",
        text(&out)
    );
    let run: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("run.json")).unwrap()).unwrap();
    let shown = browser.eval("Number(document.getElementById('total-requests').textContent)");
    assert_eq!(shown, run["requests"]["total"]);
    assert_read_as_a_user_would(&mut browser);
    // The end says why the run is not ok in the terminal's words: half its requests failed.
    let (verdict, reason) = end_banner(&mut browser);
    assert!(
        reason.contains("threshold failed: `errors.rate < 1%`"),
        "{verdict} · {reason}"
    );
    let errors: Vec<String> = browser
        .errors()
        .into_iter()
        // The stream closing at the end, and a poll of the controls in flight then, are the
        // browser's to report, not the page's.
        .filter(|e| !e.contains("/events") && !e.contains("/api/control"))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
}

/// The ended page of a run at 100 iterations/s (200 requests/s): the resources are a chart per question with its unit on
/// the axis (per core only on demand); the drain after the plan's end (a request or two in
/// a few ms) is not drawn as a jump of the achieved rate, nor shown as the last rate.
fn assert_read_as_a_user_would(browser: &mut Browser) {
    let page = browser.eval(
        "({errors: document.querySelectorAll('#chart-errors polyline').length, \
           host: document.querySelectorAll('#chart-host-cpu polyline').length, \
           hostUnit: (document.querySelector('#chart-host-cpu .axis-unit') || {}).textContent, \
           coresOpen: document.getElementById('cores-box').open, \
           generator: document.querySelectorAll('#chart-generator polyline').length, \
           memory: document.querySelectorAll('#chart-memory polyline').length, \
           achieved: Number(document.querySelector('#chart-load .legend b').textContent), \
           rate: Number(document.getElementById('rate').textContent)})",
    );
    assert_eq!(page["errors"], 1, "the missing step's http_4xx: {page}");
    assert!(
        (1..=5).contains(&page["host"].as_u64().unwrap()),
        "host CPU: busy, user, system, steal, iowait at most: {page}"
    );
    assert_eq!(page["hostUnit"], "% of the host", "{page}");
    assert_eq!(page["coresOpen"], false, "{page}");
    assert_eq!(page["generator"], 1, "{page}");
    assert!(page["memory"].as_u64().unwrap() >= 1, "{page}");
    let drawn = browser.eval(
        "({short: frames.filter((f) => f.length_s < run.slice_s / 2).length, frames: frames.length, \
           points: document.querySelector('#chart-load polyline').getAttribute('points').trim().split(' ').length})",
    );
    let short = drawn["short"].as_u64().unwrap();
    assert!(short >= 1, "the drain's interval reached the page: {drawn}");
    assert_eq!(
        drawn["points"].as_u64().unwrap() + short,
        drawn["frames"].as_u64().unwrap(),
        "no achieved rate of the drain's interval: {drawn}"
    );
    for key in ["achieved", "rate"] {
        let v = page[key].as_f64().unwrap();
        assert!(
            (140.0..=260.0).contains(&v),
            "{key}: {v} req/s at a planned 200/s: {page}"
        );
    }
}

/// Waits (10 s at most) for the page's end banner, and returns its verdict and reason.
fn end_banner(browser: &mut Browser) -> (String, String) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let e = browser.eval(
            "[(document.getElementById('end-verdict') || {}).textContent || '', \
              (document.getElementById('end-reason') || {}).textContent || '']",
        );
        let verdict = e[0].as_str().unwrap_or("").to_string();
        if !verdict.is_empty() || Instant::now() > deadline {
            return (verdict, e[1].as_str().unwrap_or("").to_string());
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn the_page_says_why_a_run_is_not_a_result() {
    let _serial = exclusive();
    let mut browser = Browser::launch(scratch("chromium-end"));
    let target = Target::start(&[]);
    let tmp = scratch("interrupted");
    let dir = tmp.path();
    let (child, url, _stderr) = run_with_dashboard(dir, &target.url, "20s", PING_AND_MISSING);
    browser.call("Page.navigate", json!({ "url": url }));
    assert!(browser.count_above(0) > 0, "the page shows the run going");
    // SAFETY: kill(2) on our own child.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    let (verdict, reason) = end_banner(&mut browser);
    assert!(
        verdict.starts_with("Ended: interrupted: the numbers cover only what ran"),
        "{verdict} · {reason}"
    );
    assert!(reason.contains("partial result"), "{verdict} · {reason}");
}

#[test]
fn the_page_pauses_resumes_and_stops_the_run_and_its_record_keeps_each_click() {
    let _serial = exclusive();
    let mut browser = Browser::launch(scratch("chromium-steer"));
    let target = Target::start(&["--service-time", "2ms"]);
    let tmp = scratch("steer");
    let dir = tmp.path();
    let (child, url, _stderr) = run_with_dashboard(
        dir,
        &target.url,
        "20s",
        "  - { name: ping, get: /api/ping }\n",
    );
    browser.call("Page.navigate", json!({ "url": url }));
    let wait_for = |browser: &mut Browser, js: &str, what: &str| {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if browser.eval(js) == json!(true) {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "{what}: {}",
                browser.eval("(document.getElementById('control-state') || {}).textContent || ''")
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    };
    // Until the page has loaded (Page.navigate returns before), its elements are not there.
    wait_for(
        &mut browser,
        "!!document.getElementById('control-box') && !document.getElementById('control-box').hidden && (document.getElementById('control-state').textContent || '').startsWith('running')",
        "the controls show while the run goes",
    );
    // The errors chart has had an interval to show before the clicks: a run stopped before
    // its first interval reached the page would rightly leave it at "no data yet".
    wait_for(
        &mut browser,
        "document.getElementById('chart-errors').textContent === 'none: no request failed'",
        "the errors chart shows the first interval",
    );
    browser.eval("document.getElementById('pause').click(); true");
    wait_for(
        &mut browser,
        "document.getElementById('control-state').textContent.startsWith('paused')",
        "the page shows the run paused",
    );
    std::thread::sleep(Duration::from_millis(500));
    browser.eval("document.getElementById('resume').click(); true");
    wait_for(
        &mut browser,
        "document.getElementById('control-state').textContent.startsWith('running at 100')",
        "the page shows the run resumed",
    );
    browser.eval("document.getElementById('stop').click(); true");
    let out = child.wait_with_output().unwrap();
    let run: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("run.json")).unwrap()).unwrap();
    let events = run["steering"].as_array().expect("the clicks are recorded");
    let actions: Vec<&str> = events
        .iter()
        .map(|e| e["action"].as_str().unwrap())
        .collect();
    assert_eq!(actions, ["pause", "resume", "stop"], "{}", text(&out));
    assert!(events.iter().all(|e| e["source"] == "page"), "{events:?}");
    assert_eq!(run["stop"], "control");
    assert!(run["duration_s"].as_f64().unwrap() < 15.0, "stopped early");
    // A run without a failure: the errors chart says so, not "no data yet".
    assert_eq!(run["requests"]["failed"], 0);
    let errors = browser.eval("document.getElementById('chart-errors').textContent");
    assert_eq!(errors, "none: no request failed");
    let errors: Vec<String> = browser
        .errors()
        .into_iter()
        .filter(|e| !e.contains("Failed to fetch") && !e.contains("EventSource"))
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
}
