//! Execution segments: N processes with `--segment i/N --start-at T` over one plan, merged
//! with `loadlab merge`, give the single-process plan's request count — exactly for arrival
//! and burst plans, by the plan's VU arithmetic for closed ones — and `unique` data rows are
//! shared out so no two segments use the same row.

mod common;
#[allow(dead_code)]
#[path = "faults/server.rs"]
mod server;

use common::undisturbed::{host_reasons, until_undisturbed};
use common::{exclusive, text, BIN};
use serde_json::Value;
use server::{Conn, Server};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

/// Request lines seen by `recording_handler`.
static SEEN: Mutex<Vec<String>> = Mutex::new(Vec::new());

fn recording_handler(c: &mut Conn) {
    loop {
        if !c.read_request() {
            return;
        }
        if let Some(line) = c.head.lines().find(|l| l.starts_with("GET ")) {
            SEEN.lock().unwrap().push(line.to_string());
        }
        if !c.respond(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok") {
            return;
        }
    }
}

/// A scratch directory removed when the returned guard is dropped.
fn scratch(name: &str) -> tempfile::TempDir {
    common::scratch_dir(&format!("loadlab-seg-{name}-"))
}

/// A whole second at least two seconds ahead, as `--start-at` takes it.
fn start_time() -> String {
    let now = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    loadlab_metrics::result::rfc3339(SystemTime::UNIX_EPOCH + Duration::from_secs(now + 5))
}

/// Runs the segments `which` of `n` of `file` at once (starting together at a time ahead),
/// segment `i` storing its run into `results(i)`: each one's output and run.json.
fn segment_processes(
    file: &Path,
    which: &[u32],
    n: u32,
    results: impl Fn(u32) -> PathBuf,
) -> Vec<(Output, Value)> {
    let at = start_time();
    let json_dir = common::scratch_dir("loadlab-seg-json-");
    let json = |i: u32| json_dir.path().join(format!("loadlab-seg-{i}of{n}.json"));
    let children: Vec<_> = which
        .iter()
        .map(|i| {
            let _ = std::fs::remove_file(json(*i));
            Command::new(BIN)
                .args(["run", file.to_str().unwrap(), "--quiet", "--no-progress"])
                .args(["--segment", &format!("{i}/{n}"), "--start-at", &at])
                .arg("--results")
                .arg(results(*i))
                .arg("--json")
                .arg(json(*i))
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    children
        .into_iter()
        .zip(which)
        .map(|(c, i)| {
            let o = c.wait_with_output().unwrap();
            let v = std::fs::read_to_string(json(*i))
                .ok()
                .and_then(|t| serde_json::from_str(&t).ok())
                .unwrap_or(Value::Null);
            (o, v)
        })
        .collect()
}

/// [`segment_processes`], each into an emptied results directory, made again while a segment
/// was invalid only because the host held it up; each must succeed.
fn run_segment_processes(file: &Path, which: &[u32], n: u32, results: impl Fn(u32) -> PathBuf) {
    let (_, _, made) = until_undisturbed("segments", || {
        for i in which {
            let _ = std::fs::remove_dir_all(results(*i));
            std::fs::create_dir_all(results(*i)).unwrap();
        }
        let made = segment_processes(file, which, n, &results);
        let (code, value) = judged(&made);
        (code, value, made)
    });
    for (o, _) in &made {
        assert_eq!(o.status.code(), Some(0), "segment: {}", text(o));
    }
}

/// The exit code and run.json an attempt of several segments is judged by: a segment that
/// failed for a reason of its own first, else one the host held up, else success.
fn judged(made: &[(Output, Value)]) -> (Option<i32>, Value) {
    let failed: Vec<&(Output, Value)> = made.iter().filter(|(o, _)| !o.status.success()).collect();
    let judged = failed
        .iter()
        .find(|(o, v)| host_reasons(o.status.code(), v).is_empty())
        .or(failed.first());
    match judged {
        Some((o, v)) => (o.status.code(), v.clone()),
        None => (Some(0), Value::Null),
    }
}

/// The run directories stored in the results directory `results`.
fn stored_runs(results: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(results.join("runs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect()
}

/// `loadlab merge <inputs> [--json <json>] --results <results>`.
fn merge(inputs: &[PathBuf], json: Option<&Path>, results: &Path) -> Output {
    let mut merge = Command::new(BIN);
    merge.arg("merge").args(inputs);
    if let Some(json) = json {
        merge.arg("--json").arg(json);
    }
    merge.arg("--results").arg(results).output().unwrap()
}

/// Runs `file` as `n` segments at once and merges them; returns the merged result and the
/// merge's own output.
fn run_segments(file: &Path, n: u32, results: &Path) -> (Value, Output) {
    let all: Vec<u32> = (0..n).collect();
    // Made again, all segments afresh (the recording server's lines too), while a segment
    // was invalid only because the host held it up; a segment that failed otherwise is the
    // attempt's outcome.
    let (_, _, made) = until_undisturbed("segments", || {
        let _ = std::fs::remove_dir_all(results);
        std::fs::create_dir_all(results).unwrap();
        SEEN.lock().unwrap().clear();
        let made = segment_processes(file, &all, n, |_| results.to_path_buf());
        let (code, value) = judged(&made);
        (code, value, made)
    });
    for (o, _) in &made {
        assert_eq!(o.status.code(), Some(0), "segment: {}", text(o));
    }
    let dirs = stored_runs(results);
    assert_eq!(dirs.len(), n as usize);
    let merged = results.join("merged.json");
    let o = merge(&dirs, Some(&merged), results);
    let value = serde_json::from_str(&std::fs::read_to_string(&merged).unwrap_or_default())
        .unwrap_or(Value::Null);
    (value, o)
}

fn all_requests(run: &Value) -> u64 {
    run["requests"]["total"].as_u64().unwrap() + run["requests"]["warmup"].as_u64().unwrap()
}

/// The scenario file `loadlab-seg-<name>-XXXXXX.yaml` in the system's temporary directory,
/// removed when the returned path is dropped.
fn scenario(name: &str, url: &str, load: &str, extra: &str) -> tempfile::TempPath {
    let file = tempfile::Builder::new()
        .prefix(&format!("loadlab-seg-{name}-"))
        .suffix(".yaml")
        .tempfile()
        .unwrap()
        .into_temp_path();
    std::fs::write(
        &file,
        format!("name: {name}\ntarget: {url}\nload: {load}\n{extra}steps:\n  - {{ name: a, get: /a }}\n  - {{ name: b, get: /b }}\n"),
    )
    .unwrap();
    file
}

#[test]
fn segments_of_an_arrival_plan_merge_into_the_whole_plan() {
    let _serial = exclusive();
    let target = common::Target::start(&[]);
    let file = scenario(
        "open",
        &target.url.replace("/api", ""),
        "{ model: open, rate: 120/s, duration: 1s }",
        "",
    );
    for n in 1..=4u32 {
        let tmp = scratch(&format!("open{n}"));
        let results = tmp.path();
        let (merged, out) = run_segments(&file, n, results);
        assert_eq!(out.status.code(), Some(0), "n={n}: {}", text(&out));
        assert_eq!(
            merged["iterations"]["completed"], 120,
            "n={n}: exactly the plan's arrivals"
        );
        assert_eq!(
            all_requests(&merged),
            240,
            "n={n}: two requests per arrival"
        );
        let steps = merged["steps"].as_array().unwrap();
        let per_step: u64 = steps.iter().map(|s| s["requests"].as_u64().unwrap()).sum();
        assert_eq!(
            per_step,
            merged["requests"]["total"].as_u64().unwrap(),
            "n={n}"
        );
        assert_eq!(merged["segments"].as_array().unwrap().len(), n as usize);
        common::assert_valid(&merged, &format!("n={n}"));
        assert!((merged["load"]["planned_arrivals"].as_f64().unwrap() - 120.0).abs() < 1e-6);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            stdout.contains(&format!("segments ({n} merged)")),
            "{stdout}"
        );
        let _ = std::fs::remove_dir_all(results);
    }
    let _ = std::fs::remove_file(&file);
}

#[test]
fn closed_and_burst_plans_split_exactly_and_unique_rows_are_shared_out() {
    let _serial = exclusive();
    let server = Server::start(recording_handler);
    SEEN.lock().unwrap().clear();
    let url = server.url("");
    // Closed: 4 VUs × 5 iterations = 20 iterations, 40 requests, over 3 segments (VUs 2+1+1).
    let closed = scenario(
        "closed",
        &url,
        "{ model: closed, vus: 4, iterations: 5 }",
        "",
    );
    let tmp = scratch("closed");
    let results = tmp.path();
    let (merged, out) = run_segments(&closed, 3, results);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(merged["iterations"]["completed"], 20);
    assert_eq!(all_requests(&merged), 40);
    let _ = std::fs::remove_dir_all(results);

    // Burst of 24 arrivals over 24 `unique` rows, 4 segments: every row once.
    SEEN.lock().unwrap().clear();
    let rows: Vec<String> = (0..24).map(|i| format!("{{ id: {i} }}")).collect();
    let data = format!(
        "data:\n  users: {{ values: [{}], pick: unique }}\n",
        rows.join(", ")
    );
    let burst_dir = scratch("burst-scenario");
    let burst = burst_dir.path().join("loadlab-seg-burst.yaml");
    std::fs::write(
        &burst,
        format!("target: {url}\nload: {{ model: burst, count: 24 }}\n{data}steps:\n  - {{ name: u, get: '/u/{{{{ users.id }}}}' }}\n"),
    )
    .unwrap();
    let tmp = scratch("burst");
    let results = tmp.path();
    let (merged, out) = run_segments(&burst, 4, results);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(all_requests(&merged), 24);
    let mut seen: Vec<String> = SEEN.lock().unwrap().clone();
    seen.sort();
    let before = seen.len();
    seen.dedup();
    assert_eq!(
        (before, seen.len()),
        (24, 24),
        "each row exactly once: {seen:?}"
    );
    let _ = std::fs::remove_dir_all(results);
    let _ = std::fs::remove_file(&burst);
    let _ = std::fs::remove_file(&closed);
}

#[test]
fn a_missing_segment_makes_the_merge_invalid_and_merges_are_deterministic() {
    let _serial = exclusive();
    let target = common::Target::start(&[]);
    let file = scenario(
        "missing",
        &target.url,
        "{ model: open, rate: 60/s, duration: 1s }",
        "",
    );
    let tmp = scratch("missing");
    let results = tmp.path();
    run_segment_processes(&file, &[0, 2], 3, |_| results.to_path_buf());
    let dirs = stored_runs(results);
    let a = the_merge_says_a_segment_is_missing(&dirs, results);
    let o = merge(&dirs, Some(&results.join("b.json")), results);
    assert_eq!(o.status.code(), Some(3));
    assert_eq!(
        a,
        std::fs::read(results.join("b.json")).unwrap(),
        "byte-identical merges"
    );
    let other = scenario(
        "other",
        &target.url,
        "{ model: open, rate: 61/s, duration: 1s }",
        "",
    );
    records_of_another_plan_are_refused(&other, results);
    let _ = std::fs::remove_dir_all(results);
    let _ = std::fs::remove_file(&file);
    let _ = std::fs::remove_file(&other);
}

/// Segments 0 and 2 of 3 merge into an invalid run (exit 3) that names segment 1 as
/// missing; returns the merged record (`a.json`) as written.
fn the_merge_says_a_segment_is_missing(dirs: &[PathBuf], results: &Path) -> Vec<u8> {
    let o = merge(dirs, Some(&results.join("a.json")), results);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    let a = std::fs::read(results.join("a.json")).unwrap();
    let merged: Value = serde_json::from_slice(&a).unwrap();
    assert_eq!(merged["valid"], false);
    let reasons = merged["validity"]["reasons"].to_string();
    assert!(
        reasons.contains("segment_missing") && reasons.contains("segment 1/3 missing"),
        "{reasons}"
    );
    a
}

/// Segment 1 of the `other` plan stored beside the segments in `results`: merging the
/// segments of both plans is refused (exit 2).
fn records_of_another_plan_are_refused(other: &Path, results: &Path) {
    let json_dir = common::scratch_dir("loadlab-seg-other-");
    let json = json_dir.path().join("loadlab-seg-other.json");
    let o = Command::new(BIN)
        .args([
            "run",
            other.to_str().unwrap(),
            "--quiet",
            "--segment",
            "1/3",
        ])
        .arg("--results")
        .arg(results)
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap();
    // The test is about the refused merge: this segment is stored whether or not the host
    // held it up (an invalid run is stored too), so only the generator's own failures count.
    let run: Value = std::fs::read_to_string(&json)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(Value::Null);
    let _ = std::fs::remove_file(&json);
    if host_reasons(o.status.code(), &run).is_empty() {
        assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    }
    // The segments of both plans (the merged runs stored before are not segments).
    let all: Vec<PathBuf> = stored_runs(results)
        .into_iter()
        .filter(|p| {
            std::fs::read_to_string(p.join("record.json"))
                .ok()
                .and_then(|t| serde_json::from_str::<Value>(&t).ok())
                .is_some_and(|r| r["segment"].is_object())
        })
        .collect();
    assert_eq!(all.len(), 3, "{all:?}");
    let o = merge(&all, None, results);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("different plans"),
        "{}",
        text(&o)
    );
}

#[test]
fn merge_takes_each_segments_results_directory() {
    // Each segment ran with its own `--results segI`: merge was told "no run record here".
    let _serial = exclusive();
    let target = common::Target::start(&[]);
    let file = scenario(
        "dirs",
        &target.url,
        "{ model: open, rate: 40/s, duration: 1s }",
        "",
    );
    let tmp = scratch("dirs");
    let root = tmp.path();
    run_segment_processes(&file, &[0, 1], 2, |i| root.join(format!("seg{i}")));
    let segments = [root.join("seg0"), root.join("seg1")];
    let merged = root.join("merged.json");
    let o = merge(&segments, Some(&merged), &root.join("merged"));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let run: Value = serde_json::from_str(&std::fs::read_to_string(&merged).unwrap()).unwrap();
    assert_eq!(
        all_requests(&run),
        80,
        "40 arrivals of two steps: {}",
        run["requests"]
    );

    // A results directory holding several runs (here seg0 after a merge stored into it):
    // listed, with how to choose.
    let o = merge(&segments, None, &root.join("seg0"));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let o = merge(&segments, None, &root.join("other"));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        stderr.contains("is a results directory with 2 runs") && stderr.contains("give one of"),
        "{stderr}"
    );
    let listed = root.join("seg0").join("runs");
    assert_eq!(
        stderr.matches(&*listed.to_string_lossy()).count(),
        2,
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(root);
    let _ = std::fs::remove_file(&file);
}

/// A sign-up's e-mail from each row: 40 rows, four segments of one VU doing 10 iterations each,
/// against the built-in target's `POST /api/signups` (409 for an e-mail that signed up
/// before). Returns the merged result and the target's own count of (created, refused).
fn sign_up_in_four_segments(data: &str) -> (Value, (u64, u64)) {
    let tmp = scratch("signups");
    let dir = tmp.path();
    let csv: String = (0..40).fold("email\n".to_string(), |mut s, i| {
        s.push_str(&format!("user{i}@example.test\n"));
        s
    });
    std::fs::write(dir.join("users.csv"), csv).unwrap();
    let file = dir.join("signups.yaml");
    let results = dir.join("results");
    let (_, _, (made, counts)) = until_undisturbed("signups", || {
        // A fresh target each attempt: it remembers every e-mail that signed up.
        let target = common::Target::start(&[]);
        std::fs::write(
            &file,
            format!(
                "name: signups\ntarget: {}\nload: {{ model: closed, vus: 4, iterations: 10 }}\n\
                 data:\n  users: {{ csv: users.csv, {data} }}\n\
                 steps:\n  - {{ name: sign up, post: /api/signups, json: {{ email: '{{{{ users.email }}}}' }} }}\n",
                target.url
            ),
        )
        .unwrap();
        let _ = std::fs::remove_dir_all(&results);
        let made = segment_processes(&file, &[0, 1, 2, 3], 4, |_| results.clone());
        let (code, value) = judged(&made);
        (code, value, (made, signup_counts(&target.url)))
    });
    for (o, _) in &made {
        assert_eq!(o.status.code(), Some(0), "segment: {}", text(o));
    }
    let merged = results.join("merged.json");
    let o = merge(&stored_runs(&results), Some(&merged), &results);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let value = serde_json::from_str(&std::fs::read_to_string(&merged).unwrap()).unwrap();
    let _ = std::fs::remove_dir_all(dir);
    (value, counts)
}

/// The target's `/metrics`: sign-ups answered 201 and 409.
fn signup_counts(url: &str) -> (u64, u64) {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(url.trim_start_matches("http://")).unwrap();
    s.write_all(b"GET /metrics HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    let count = |code: &str| {
        let key = format!("http_requests_total{{route=\"/api/signups\",code=\"{code}\"}} ");
        text.lines()
            .find_map(|l| l.strip_prefix(key.as_str()))
            .map_or(0, |n| n.trim().parse().unwrap())
    };
    (count("201"), count("409"))
}

#[test]
fn split_data_gives_each_segment_rows_of_its_own() {
    let _serial = exclusive();
    for data in ["pick: sequential, split: segments", "pick: unique"] {
        let (merged, (created, refused)) = sign_up_in_four_segments(data);
        assert_eq!((created, refused), (40, 0), "{data}: every e-mail once");
        let set = &merged["data_sets"][0];
        assert_eq!(set["split"], true, "{data}: {set}");
        assert_eq!(
            (&set["taken"], &set["distinct"], &set["shared_rows"]),
            (&Value::from(40), &Value::from(40), &Value::from(0)),
            "{data}: {set}"
        );
        assert_eq!(merged["requests"]["failed"], 0, "{data}");
    }
    // Not split: each segment starts at the first row, and the target refuses the repeats.
    let (merged, (created, refused)) = sign_up_in_four_segments("pick: sequential");
    assert_eq!((created, refused), (10, 30));
    let set = &merged["data_sets"][0];
    assert_eq!(
        (&set["split"], &set["distinct"], &set["shared_rows"]),
        (&Value::from(false), &Value::from(10), &Value::from(10)),
        "{set}"
    );
    assert_eq!(merged["requests"]["failed"], 30);
}

#[test]
fn a_segment_left_without_rows_is_told_before_any_load() {
    let tmp = scratch("no-rows");
    let dir = tmp.path();
    let file = dir.join("few.yaml");
    std::fs::write(
        &file,
        "target: http://127.0.0.1:9\nload: { model: closed, vus: 4, iterations: 1 }\n\
         data:\n  users: { values: [a, b, c], split: segments }\n\
         steps:\n  - { get: '/u/{{ users }}' }\n",
    )
    .unwrap();
    let out = Command::new(BIN)
        .args([
            "run",
            file.to_str().unwrap(),
            "--segment",
            "3/4",
            "--no-progress",
        ])
        .arg("--results")
        .arg(dir.join("results"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("data set `users` has 3 row(s), fewer than the 4 segments")
            && err.contains("segment 3/4 would get none"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(dir);
}
