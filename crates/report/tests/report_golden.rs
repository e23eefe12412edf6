//! Golden Markdown reports: a run, a study, a sweep, a capacity search and a comparison.
//! Regenerate after an intended change with `UPDATE_GOLDEN=1 cargo test -p loadlab-report --test report_golden`
//! and review the diff.

mod common;
mod samples;

use loadlab_report::{render_markdown, ReportDoc};
use std::path::PathBuf;

fn golden_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

fn check(name: &str, doc: &ReportDoc) {
    let md = render_markdown(doc, "report-charts");
    // Deterministic: rendering twice gives the same bytes.
    assert_eq!(md.text, render_markdown(doc, "report-charts").text);
    // Every chart the text links to is produced, and non-empty.
    for (file, svg) in &md.charts {
        assert!(md.text.contains(&format!("report-charts/{file}")), "{file}");
        assert!(svg.starts_with("<svg") && svg.len() > 500, "{file}");
    }
    let path = golden_dir().join(format!("{name}.md"));
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::create_dir_all(golden_dir()).unwrap();
        std::fs::write(&path, &md.text).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path).unwrap_or_else(|_| {
        panic!(
            "{} is missing: run UPDATE_GOLDEN=1 cargo test -p loadlab-report --test report_golden",
            path.display()
        )
    });
    if want != md.text {
        let first = want
            .lines()
            .zip(md.text.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(want.lines().count().min(md.text.lines().count()));
        panic!(
            "{name}.md differs from the golden file at line {}:\n  golden: {:?}\n  now:    {:?}\n(UPDATE_GOLDEN=1 to accept)",
            first + 1,
            want.lines().nth(first),
            md.text.lines().nth(first)
        );
    }
}

#[test]
fn run_report_markdown() {
    let plan = loadlab_report::PlannedLoad {
        vus: true,
        points: vec![(0.0, 0.0), (10.0, 50.0), (70.0, 50.0)],
    };
    let mut r = common::sample();
    r.environment = Some(samples::environment());
    check("run", &loadlab_report::run_report(&r, Some(&plan)));
}

#[test]
fn invalid_run_report_markdown() {
    check(
        "run_invalid",
        &loadlab_report::run_report(&common::sample_open_invalid(), None),
    );
}

#[test]
fn study_report_markdown() {
    let (s, runs) = samples::study();
    check("study", &loadlab_report::study_report(&s, &runs, None));
}

#[test]
fn sweep_report_markdown() {
    let (s, runs) = samples::sweep();
    check("sweep", &loadlab_report::study_report(&s, &runs, None));
}

#[test]
fn capacity_report_markdown() {
    check(
        "capacity",
        &loadlab_report::capacity_report(&samples::capacity(), &Default::default()),
    );
}

#[test]
fn an_interrupted_capacity_report_says_one_thing_about_what_was_found() {
    let doc =
        loadlab_report::capacity_report(&samples::interrupted_capacity(), &Default::default());
    let md = render_markdown(&doc, "report-charts").text;
    assert!(!md.contains("No rate tried met the SLO"), "{md}");
    assert!(
        md.contains(
            "interrupted after 3 step(s): 200.0/s met the SLO, so the capacity is at least 200.0/s"
        ),
        "{md}"
    );
    assert!(md.contains("at least 200.0/s (interrupted)"), "{md}");
    check("capacity-interrupted", &doc);
}

#[test]
fn compare_report_markdown() {
    check(
        "compare",
        &loadlab_report::compare_report(&samples::comparison()),
    );
}
