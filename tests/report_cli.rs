//! `loadlab report` on a real run result: every format, the schema detection, bad input.

mod common;

use common::BIN;
use std::path::Path;
use std::process::{Command, Output};

fn loadlab(args: &[&str], dir: &Path) -> Output {
    Command::new(BIN)
        .args(args)
        .current_dir(dir)
        .env("LOADLAB_RESULTS", dir.join("results"))
        .output()
        .expect("loadlab runs")
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// A short open-model run against the in-process target (`loadlab run --url`) → run.json.
fn make_run(dir: &Path) {
    let _load = common::exclusive();
    let target = loadlab_builtin_target::spawn(loadlab_builtin_target::TargetConfig {
        listen: "127.0.0.1:0".parse().unwrap(),
        ..Default::default()
    })
    .unwrap();
    let url = format!("http://{}/api/ping", target.addr);
    let o = loadlab(
        &[
            "run",
            "--url",
            &url,
            "--rate",
            "100/s",
            "--duration",
            "2s",
            "--json",
            "run.json",
            "--quiet",
            "--retry-invalid",
            "2",
        ],
        dir,
    );
    target.shutdown();
    assert!(o.status.success(), "{}", text(&o));
}

#[test]
fn report_of_a_run_in_every_format() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    make_run(dir);

    // Default: HTML and Markdown (with its charts) beside the input.
    let o = loadlab(&["report", "run.json"], dir);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("report.html"), "{}", text(&o));
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.contains("class=\"chart\""));
    // Self-contained: nothing is fetched (no src=, no external link or stylesheet).
    assert!(!html.contains(" src="), "no external resource");
    assert!(!html.contains("href=\"http"), "no external link");
    assert!(!html.contains("url(http"), "no external CSS resource");
    assert!(!html.contains("<script"), "no script");
    let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(md.contains("## Summary") && md.contains("## Environment"));
    assert!(md.contains("requests at"), "verdict sentence: {md}");
    for chart in [
        "latency-over-time",
        "throughput-over-time",
        "active-over-time",
        "latency-distribution",
    ] {
        assert!(
            md.contains(&format!("report-charts/{chart}.svg")),
            "{chart}"
        );
        let svg = std::fs::read_to_string(dir.join(format!("report-charts/{chart}.svg"))).unwrap();
        // Lines, or dots for sampled counts (requests in flight).
        assert!(
            svg.contains("<path") || svg.contains("<circle"),
            "{chart} has data"
        );
    }
    // The machine the run was measured on is recorded and reported.
    assert!(md.contains("**CPU**"), "{md}");

    // One format to a chosen path, taken from the extension or --format.
    let o = loadlab(&["report", "run.json", "-o", "out/r.md"], dir);
    assert!(o.status.success(), "{}", text(&o));
    assert!(dir.join("out/r.md").is_file());
    assert!(dir.join("out/r-charts/latency-over-time.svg").is_file());
    let o = loadlab(&["report", "run.json", "--format", "json"], dir);
    assert!(o.status.success(), "{}", text(&o));
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["kind"], "run");
    assert!(!doc["verdicts"].as_array().unwrap().is_empty());
    // An extension that is no report format is refused (it was HTML in a .txt), unless
    // --format says what to write.
    let o = loadlab(&["report", "run.json", "-o", "out/r.txt"], dir);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("`.txt` is not a report format"),
        "{}",
        text(&o)
    );
    assert!(!dir.join("out/r.txt").exists());
    let o = loadlab(
        &["report", "run.json", "-o", "out/r.txt", "--format", "md"],
        dir,
    );
    assert!(o.status.success(), "{}", text(&o));
    assert!(std::fs::read_to_string(dir.join("out/r.txt"))
        .unwrap()
        .starts_with('#'));
}

#[test]
fn report_writes_beside_its_input_or_into_the_chosen_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    make_run(dir);
    std::fs::create_dir(dir.join("sub")).unwrap();
    std::fs::rename(dir.join("run.json"), dir.join("sub/result.json")).unwrap();
    let listing = || {
        let mut names: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        names.sort();
        names
    };
    let before = listing();

    // Beside the input, named after it, and nothing in the current directory.
    let o = loadlab(&["report", "sub/result.json"], dir);
    assert!(o.status.success(), "{}", text(&o));
    for f in [
        "sub/result.html",
        "sub/result.md",
        "sub/result-charts/latency-over-time.svg",
    ] {
        assert!(dir.join(f).is_file(), "{f}: {}", text(&o));
    }
    assert_eq!(
        before,
        listing(),
        "nothing written into the current directory"
    );
    // Where it wrote, as a path that opens from anywhere.
    let html = dir.join("sub/result.html").canonicalize().unwrap();
    let printed = String::from_utf8_lossy(&o.stdout).to_string();
    let shown: Vec<std::path::PathBuf> = printed
        .lines()
        .map(|l| std::path::PathBuf::from(l.trim_start_matches("report:").trim()))
        .collect();
    assert!(shown.iter().all(|p| p.is_absolute()), "{printed}");
    assert!(
        shown
            .iter()
            .any(|p| p.canonicalize().ok() == Some(html.clone())),
        "{printed}"
    );

    // -o DIR: both formats into that directory.
    let o = loadlab(&["report", "sub/result.json", "-o", "out"], dir);
    assert!(o.status.success(), "{}", text(&o));
    assert!(dir.join("out/result.html").is_file(), "{}", text(&o));
    assert!(dir.join("out/result.md").is_file());
    assert!(dir.join("out/result-charts").is_dir());
}

#[test]
fn report_rejects_what_it_cannot_read() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::write(dir.join("other.json"), r#"{"schema": "someone.else.v1"}"#).unwrap();
    let o = loadlab(&["report", "other.json"], dir);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("unknown schema"), "{}", text(&o));
    std::fs::write(dir.join("none.json"), "{}").unwrap();
    let o = loadlab(&["report", "none.json"], dir);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("no `schema` field"), "{}", text(&o));
    let o = loadlab(&["report", "missing-id"], dir);
    assert_eq!(o.status.code(), Some(2));
    let o = loadlab(&["report", "other.json", "--format", "pdf"], dir);
    assert_eq!(o.status.code(), Some(2));
}
