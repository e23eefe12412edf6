//! `loadlab history` and `loadlab gate` end to end: labelled short runs against the built-in
//! target, whose service time is raised after five runs (the target restarted on the same
//! port, so the runs keep one plan), then `history --json`: one series per metric, the labels,
//! and the change point at the first slow run; `gate` passes while the newest run is like the
//! last stable segment and fails (exit 1, Markdown summary) once it is slower. Runs are paced
//! (`--rate`, half a second each) so they are valid on a quiet 2-core machine.

mod common;

use common::{exclusive, Target, BIN};
use std::path::Path;
use std::process::Command;

/// A free loopback address for the target, and the URL the runs test on it.
fn target_address() -> (String, String) {
    let listen = format!("127.0.0.1:{}", free_port());
    let url = format!("http://{listen}/api/ping");
    (listen, url)
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// One labelled run, `results(attempt)` its `--results`; an invalid one (exit 3: a busy
/// machine delayed the scheduler) is made again, as a study re-runs invalid runs. Invalid
/// runs stay where they were stored, and the history leaves them out.
fn labelled_run(url: &str, commit: &str, results: impl Fn(u32) -> std::ffi::OsString) {
    for attempt in 0..4 {
        let out = Command::new(BIN)
            .args(["run", "--url", url, "--rate", "40/s", "--duration", "500ms"])
            .args(["--no-progress", "--label", &format!("commit={commit}")])
            .arg("--results")
            .arg(results(attempt))
            .env("LOADLAB_LABELS", "branch=main")
            .output()
            .unwrap();
        match out.status.code() {
            Some(0) => return,
            Some(3) => continue,
            code => panic!(
                "run {commit}: {code:?}\n{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ),
        }
    }
    panic!("run {commit}: invalid four times in a row (is the machine busy?)");
}

/// A run into the local store in `results`.
fn run(results: &Path, url: &str, commit: &str) {
    labelled_run(url, commit, |_| results.as_os_str().to_owned());
}

/// Commits `c0` up to `c{fast}` made against a target answering in 1 ms, the rest up to
/// `c{total}` against the same address answering in `slow` (the same plan, slower).
fn fast_then_slow(
    listen: &str,
    slow: &str,
    (fast, total): (usize, usize),
    mut made: impl FnMut(&str),
) {
    {
        let _fast = Target::start_on(listen, &["--service-time", "1ms"]);
        for i in 0..fast {
            made(&format!("c{i}"));
        }
    }
    let _slow = Target::start_on(listen, &["--service-time", slow]);
    for i in fast..total {
        made(&format!("c{i}"));
    }
}

fn history(results: &Path, args: &[&str]) -> std::process::Output {
    Command::new(BIN)
        .arg("history")
        .args(args)
        .arg("--results")
        .arg(results)
        .output()
        .unwrap()
}

#[test]
fn a_slower_target_is_one_change_point_with_its_commit() {
    let _guard = exclusive();
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results");
    let (listen, url) = target_address();
    fast_then_slow(&listen, "15ms", (5, 11), |commit| {
        run(&results, &url, commit)
    });
    // A `--url` test is named by its method and URL.
    let name = format!("GET {url}");

    let json = dir.path().join("history.json");
    let out = history(
        &results,
        &[
            &name,
            "--metric",
            "latency_ms.p50",
            // The step is tenfold; this test is about the step. Smaller drifts in a series are
            // real changes too and the history reports them: on CI's fresh clones, +1.3% at #7
            // (p 4e-4), and -7.3% at #2 when the just-started target warmed up (p 9.6e-4).
            "--min-magnitude",
            "50%",
            "--json",
            json.to_str().unwrap(),
            "--report",
            dir.path().join("report/history.html").to_str().unwrap(),
        ],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let h: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(h["schema"], "loadlab.history.v1");
    let schema: serde_json::Value =
        serde_json::from_str(include_str!("../docs/schema/history.v1.json")).unwrap();
    let validator = jsonschema::validator_for(&schema).expect("schema compiles");
    let errors: Vec<String> = validator
        .iter_errors(&h)
        .map(|e| format!("{} at {}", e, e.instance_path))
        .collect();
    assert!(
        errors.is_empty(),
        "history.json against docs/schema/history.v1.json: {errors:#?}"
    );
    assert_eq!(h["series"].as_array().unwrap().len(), 1, "{stdout}");
    let points = h["series"][0]["points"].as_array().unwrap();
    assert_eq!(points.len(), 11, "{stdout}");
    assert_eq!(points[3]["labels"]["commit"], "c3");
    assert_eq!(
        points[3]["labels"]["branch"], "main",
        "LOADLAB_LABELS is stored"
    );
    let cps = h["change_points"].as_array().unwrap();
    assert_eq!(cps.len(), 1, "{stdout}");
    assert_eq!(cps[0]["index"], 5);
    assert_eq!(cps[0]["labels"]["commit"], "c5");
    assert_eq!(cps[0]["verdict"], "slower");
    assert!(cps[0]["change"].as_f64().unwrap() > 1.0, "{}", cps[0]);
    assert!(stdout.contains("change points:"), "{stdout}");
    // The trend report: HTML, and the Markdown with its chart beside it.
    let report = dir.path().join("report");
    let html = std::fs::read_to_string(report.join("history.html")).unwrap();
    assert!(
        html.contains("<svg") && html.contains("commit=c5"),
        "{html}"
    );
    assert!(report.join("history.md").exists());
    assert!(report.join("history-history-0.svg").exists());

    // Filtered by label: only the fast commits, no change.
    let out = history(
        &results,
        &[&name, "--label", "commit=c1", "--metric", "latency_ms.p50"],
    );
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("no change point"));

    // Bad input: exit 2 naming the fix.
    let out = history(&results, &["no-such-scenario"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("names in the store"));
    let out = history(&results, &[&name, "--metric", "latency_ms.p42"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--metric latency_ms.p42"));
}

fn gate(results: &Path, name: &str, summary: &Path) -> std::process::Output {
    Command::new(BIN)
        .args(["gate", name, "--metric", "latency_ms.p50", "--results"])
        .arg(results)
        .arg("--junit")
        .arg(summary.with_extension("xml"))
        .env("GITHUB_STEP_SUMMARY", summary)
        .output()
        .unwrap()
}

#[test]
fn the_gate_fails_only_on_a_regression_against_the_stable_segment() {
    let _guard = exclusive();
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results");
    let (listen, url) = target_address();
    let name = format!("GET {url}");
    let summary = dir.path().join("summary.md");
    fast_then_slow(&listen, "10ms", (3, 9), |commit| {
        run(&results, &url, commit)
    });
    // Newest c8 against c3..c7 (after the change point at c3): the same level.
    let out = gate(&results, &name, &summary);
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("points #3–#7"), "{text}");
    {
        let _slower = Target::start_on(&listen, &["--service-time", "30ms"]);
        run(&results, &url, "c9");
    }
    let out = gate(&results, &name, &summary);
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let md = std::fs::read_to_string(&summary).unwrap();
    assert!(
        md.contains("**Passed**"),
        "the first gate's summary is kept (appended): {md}"
    );
    assert!(
        md.contains("**Failed**") && md.contains("commit=c9"),
        "{md}"
    );
    let cases = junit_cases(&summary.with_extension("xml"));
    assert_eq!(cases.len(), 1, "{cases:?}");
    assert!(
        cases[0].starts_with("loadlab.gate | p50 latency | Failure | "),
        "{cases:?}"
    );
    assert!(
        cases[0].contains("actual"),
        "the failure carries the actual value: {cases:?}"
    );
}

/// The test cases of a JUnit report as junitparser (what CI reporters build on) reads them:
/// `classname | name | Failure,Skipped… | messages`. It must parse, and its declared counts
/// must match its cases.
fn junit_cases(path: &Path) -> Vec<String> {
    const READ: &str = r#"
import sys
from junitparser import JUnitXml
xml = JUnitXml.fromfile(sys.argv[1])
n = f = 0
for suite in xml:
    for case in suite:
        kinds = [type(r).__name__ for r in case.result]
        n += 1
        f += kinds.count("Failure")
        print(f"{case.classname} | {case.name} | {','.join(kinds)} | {' '.join(r.message or '' for r in case.result)}")
assert (xml.tests, xml.failures) == (n, f), (xml.tests, xml.failures, n, f)
"#;
    let out = Command::new("python3")
        .args(["-c", READ])
        .arg(path)
        .output()
        .expect("python3 runs (scripts/setup-test-deps.sh installs junitparser)");
    assert!(
        out.status.success(),
        "junitparser cannot read {}: {}",
        path.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

/// `loadlab <command> SCENARIO` against `target`, its store in `dir/results`, with
/// `--junit dir/<stem>.xml` and `--summary dir/<stem>.md`.
fn with_ci_outputs(
    command: &[&str],
    scenario: &Path,
    target: &str,
    dir: &Path,
    stem: &str,
) -> std::process::Output {
    Command::new(BIN)
        .args(command)
        .arg(scenario)
        .args(["--target", target, "--no-progress", "--quiet"])
        .arg("--results")
        .arg(dir.join("results"))
        .arg("--junit")
        .arg(dir.join(format!("{stem}.xml")))
        .arg("--summary")
        .arg(dir.join(format!("{stem}.md")))
        .output()
        .unwrap()
}

#[test]
fn a_run_junit_report_has_a_case_per_threshold_and_a_markdown_summary() {
    let _guard = exclusive();
    let dir = tempfile::tempdir().unwrap();
    let target = Target::start(&["--service-time", "5ms"]);
    let scenario = dir.path().join("thresholds.yaml");
    std::fs::write(
        &scenario,
        "name: junit <check>\nload: { model: open, rate: 40/s, duration: 500ms }\nthresholds:\n  - latency.p95 < 1ms\n  - http.errors < 5%\nsteps:\n  - { name: ping, get: /api/ping }\n",
    )
    .unwrap();
    let junit = dir.path().join("run.xml");
    // A run the host disturbs exits 3 and is made again; the outputs are the last attempt's.
    let out = with_ci_outputs(
        &["run", "--retry-invalid", "2"],
        &scenario,
        &target.url,
        dir.path(),
        "run",
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let cases = junit_cases(&junit);
    assert_eq!(cases.len(), 2, "{cases:?}");
    assert!(
        cases[0].starts_with(
            "loadlab.run | latency.p95 < 1ms | Failure | latency.p95 < 1ms failed: actual "
        ),
        "{cases:?}"
    );
    assert!(
        cases[1].starts_with("loadlab.run | http.errors < 5% |  |"),
        "{cases:?}"
    );
    let md = std::fs::read_to_string(dir.path().join("run.md")).unwrap();
    assert!(
        md.contains("| `latency.p95 < 1ms` |") && md.contains("**failed**"),
        "{md}"
    );

    // A study of two runs: a case per threshold and variant, over its runs.
    let text = std::fs::read_to_string(&scenario).unwrap() + "study: { repeat: 2, cooldown: 0s }\n";
    std::fs::write(&scenario, text).unwrap();
    let junit = dir.path().join("study.xml");
    let out = with_ci_outputs(&["study"], &scenario, &target.url, dir.path(), "study");
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let cases = junit_cases(&junit);
    assert_eq!(cases.len(), 2, "{cases:?}");
    assert!(cases[0].starts_with("loadlab.study | "), "{cases:?}");
    assert!(
        cases[0].contains(
            ": latency.p95 < 1ms | Failure | latency.p95 < 1ms failed in 2 of 2 runs: actual "
        ),
        "{cases:?}"
    );
    let md = std::fs::read_to_string(dir.path().join("study.md")).unwrap();
    assert!(md.contains("## loadlab study: junit <check>"), "{md}");
}

/// A run recorded in object storage under `base/COMMIT-aN`: a fresh prefix per attempt (a
/// prefix holds one record).
fn remote_run(base: &str, url: &str, commit: &str) {
    labelled_run(url, commit, |attempt| {
        format!("{base}/{commit}-a{attempt}").into()
    });
}

/// Runs kept in object storage (`file://`, the code path of s3://, gs:// and az://): history
/// reads every run's summary and labels from its record, finds the change, and gate compares
/// the newest run with the stable segment before it.
#[test]
fn history_and_gate_read_runs_kept_in_object_storage() {
    let _guard = exclusive();
    let dir = tempfile::tempdir().unwrap();
    let base = format!("file://{}/bucket/nightly", dir.path().display());
    let (listen, url) = target_address();
    fast_then_slow(&listen, "15ms", (4, 8), |commit| {
        remote_run(&base, &url, commit)
    });
    let name = format!("GET {url}");
    let json = dir.path().join("history.json");
    let bucket = Path::new(&base);
    let args = [
        &name,
        "--metric",
        "latency_ms.p50",
        // The step is tenfold; this test is about where the runs are kept. On a series this
        // quiet a 0.2% shift is a real change too (CI's fresh clone: 15.54 -> 15.52 ms at #5,
        // p 0), as in the test above.
        "--min-magnitude",
        "50%",
        "--json",
        json.to_str().unwrap(),
    ];
    let out = history(bucket, &args);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let h: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let points = h["series"][0]["points"].as_array().unwrap();
    assert_eq!(points.len(), 8, "{stdout}");
    assert_eq!(
        points[2]["labels"]["commit"], "c2",
        "labels kept beside the record"
    );
    let cps = h["change_points"].as_array().unwrap();
    assert_eq!(cps.len(), 1, "{stdout}");
    assert_eq!(cps[0]["index"], 4);
    assert_eq!(cps[0]["labels"]["commit"], "c4");
    assert_eq!(cps[0]["verdict"], "slower");

    // The newest run is like the slow runs before it: the gate passes.
    let summary = dir.path().join("summary.md");
    let out = gate(bucket, &name, &summary);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(std::fs::read_to_string(&summary).unwrap().contains("c7"));

    // A name with no runs there: exit 2 saying where it looked.
    let out = history(bucket, &["no-such-scenario"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("file://"));
}
