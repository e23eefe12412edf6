//! `loadlab demo`, the README's first command: a study on the built-in target ending in a report.

use std::process::Command;

#[test]
fn demo_runs_a_study_and_writes_the_report() {
    let tmp = tempfile::tempdir().unwrap();
    let started = std::time::Instant::now();
    let o = Command::new(env!("CARGO_BIN_EXE_loadlab"))
        .args(["demo", "--no-progress", "--results"])
        .arg(tmp.path())
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert!(o.status.success(), "{out}\n{err}");
    assert!(
        started.elapsed().as_secs() < 120,
        "the demo takes under 2 minutes"
    );
    let line = out
        .lines()
        .find_map(|l| l.strip_prefix("Open the report: "))
        .unwrap_or_else(|| panic!("no report path printed:\n{out}"));
    let html = std::path::Path::new(line.trim());
    assert!(html.is_file(), "{}", html.display());
    let md = std::fs::read_to_string(html.with_extension("md")).unwrap();
    assert!(md.contains("study report"), "{md}");
    assert!(
        md.contains("`baseline`") && md.contains("`half-workers`"),
        "{md}"
    );
    assert!(md.contains("## Comparison"), "{md}");
    assert!(md.contains("p95-per-run.svg"));
    let charts = html.parent().unwrap().join("report-charts");
    assert!(charts.join("p95-per-run.svg").is_file());
    let page = std::fs::read_to_string(html).unwrap();
    assert!(page.contains("data-chart=\"latency-distribution\""));
}
