//! `loadlab runs` as terminal text: the stored runs (segments, merges and partial runs
//! marked), one stored run, study or capacity search, the studies (resumable ones marked),
//! and the distributed runs under an object-storage prefix with their segments' state. The
//! pipeline reads the store and the prefix and hands over the rows; the words are made here.

use crate::Style;
use loadlab_analysis::capacity::CapacityResult;
use loadlab_analysis::study::StudyResult;
use loadlab_metrics::RunResult;
use loadlab_store::{RunRecord, RunStatus, StudyRecord, StudyStatus};
use std::io::Write;
use std::path::Path;

/// The most recent runs of the store in `dir`, newest first; `total` is how many it holds.
pub fn print_runs(out: &mut dyn Write, dir: &Path, runs: &[RunRecord], total: usize) {
    if runs.is_empty() {
        let on_disk = loadlab_store::run_dirs_in(dir).len();
        if on_disk > 0 {
            // The index was deleted or replaced (a CI cache that kept only `runs/`): the runs
            // are there, and readable by their directory.
            let _ = writeln!(
                out,
                "no runs in the index of {0}, but {0}/runs holds {on_disk} run director{1}: the index (loadlab.db) was deleted or replaced\n  each is still read by its directory: `loadlab report {0}/runs/<id>`, `loadlab compare {0}/runs/<a> {0}/runs/<b>`",
                dir.display(),
                if on_disk == 1 { "y" } else { "ies" }
            );
        } else {
            let _ = writeln!(out, "no runs stored in {}", dir.display());
        }
        return;
    }
    let _ = writeln!(
        out,
        "{:<24} {:<19} {:<18} {:<12} {:>9} {:>9} {:>10} {:>9} {:>7} {:>5}  status",
        "id", "time", "scenario", "variant", "load", "requests", "req/s", "p95", "errors", "valid"
    );
    for r in runs {
        let _ = writeln!(out, "{}", run_line(r));
    }
    if total > runs.len() {
        let _ = writeln!(
            out,
            "… {} older run(s) not shown (show more with -n {total})",
            total - runs.len()
        );
    }
}

/// One run's row of the listing.
fn run_line(r: &RunRecord) -> String {
    let opt = |v: Option<String>| v.unwrap_or_else(|| "-".into());
    format!(
        "{:<24} {:<19} {:<18} {:<12} {:>9} {:>9} {:>10} {:>9} {:>7} {:>5}  {}",
        r.id,
        r.started_at.replace('T', " ").trim_end_matches('Z'),
        truncate(&r.scenario, 18),
        truncate(r.variant.as_deref().unwrap_or("-"), 12),
        opt(r.load.clone()),
        opt(r.requests.map(|n| n.to_string())),
        opt(r.rate.map(|v| format!("{v:.1}"))),
        opt(r.p95_ms.map(crate::format_ms)),
        opt(r.error_rate.map(|e| format!("{:.2}%", e * 100.0))),
        opt(r.valid.map(|v| if v { "yes" } else { "no" }.to_string())),
        status(r)
    )
}

/// `done`, `interrupted (partial)`, `completed, not stored`, `segment 1/4`, `merged`…
fn status(r: &RunRecord) -> String {
    let mut s = match (r.status, r.partial, r.path.is_some()) {
        (RunStatus::NotStored, false, _) => "completed, not stored".to_string(),
        (RunStatus::NotStored, true, _) => "interrupted, not stored".to_string(),
        (RunStatus::Interrupted, _, true) => "interrupted (partial result)".to_string(),
        (RunStatus::Interrupted, _, false) => "interrupted".to_string(),
        (other, true, _) => format!("{other} (partial)"),
        (other, false, _) => other.to_string(),
    };
    if let Some(seg) = &r.segment {
        s.push_str(&format!(", segment {seg}"));
    }
    if r.merged_from.is_some() {
        s.push_str(", merged");
    }
    s
}

/// `capacity c2026… (done), stored in …/capacity.json`: the first line of a stored study or
/// capacity search.
pub fn print_stored_header(out: &mut dyn Write, record: &StudyRecord, path: &Path) {
    let _ = writeln!(
        out,
        "{} {} ({}), stored in {}",
        record.kind,
        record.id,
        record.status,
        path.display()
    );
}

/// A stored capacity search's steps (rate, phase, pass or fail) and warnings.
pub fn print_stored_capacity(out: &mut dyn Write, c: &CapacityResult) {
    for step in &c.steps {
        let _ = writeln!(
            out,
            "  {:>8}/s [{:<7}] {}{}",
            crate::words::plain_number(step.rate),
            step.phase,
            if step.passed { "pass" } else { "FAIL" },
            if step.retried { " (re-run)" } else { "" }
        );
    }
    for w in &c.warnings {
        let _ = writeln!(out, "  {w}");
    }
}

/// A stored study's summary (`study_terminal::print_study`).
pub fn print_stored_study(out: &mut dyn Write, study: &StudyResult) {
    let _ = crate::study_terminal::print_study(out, study);
}

/// One stored run: where it is kept, then its summary as `loadlab run` printed it.
pub fn print_stored_run(
    out: &mut dyn Write,
    record: &RunRecord,
    dir: &Path,
    result: &RunResult,
    style: Style,
) {
    let _ = writeln!(
        out,
        "run {} ({}{}{}), stored in {}",
        record.id,
        status(record),
        record
            .variant
            .as_ref()
            .map(|v| format!(", variant {v}"))
            .unwrap_or_default(),
        record
            .study
            .as_ref()
            .map(|s| format!(", study {s}"))
            .unwrap_or_default(),
        dir.display()
    );
    let _ = crate::render_summary(result, out, style);
}

/// The most recent studies and capacity searches of the store in `dir`, resumable ones
/// marked.
pub fn print_studies(out: &mut dyn Write, dir: &Path, studies: &[StudyRecord]) {
    if studies.is_empty() {
        let _ = writeln!(out, "no studies stored in {}", dir.display());
    }
    for s in studies {
        let _ = writeln!(out, "{}", study_line(s));
    }
}

/// One study's row of the listing.
fn study_line(s: &StudyRecord) -> String {
    let progress = match (s.runs_done, s.runs_planned) {
        (Some(d), Some(p)) if p > 0 => format!("{d}/{p} runs"),
        (Some(d), _) => format!("{d} steps"),
        _ => "-".into(),
    };
    format!(
        "{:<24} {:<9} {:<19} {:<20} {:<12} {:<12} {}",
        s.id,
        s.kind,
        s.started_at.replace('T', " ").trim_end_matches('Z'),
        truncate(&s.name, 20),
        if s.status == StudyStatus::Interrupted {
            "interrupted (resumable)".to_string()
        } else {
            s.status.to_string()
        },
        progress,
        s.path
            .as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_default()
    )
}

/// A distributed run found under an object-storage prefix, as the listing shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct RemoteRun {
    /// The run's prefix relative to the listed URL (`""`: the URL itself).
    pub prefix: String,
    pub name: Option<String>,
    pub started_at: Option<String>,
    /// Segments the plan was split into (`None`: a whole run).
    pub count: Option<u32>,
    pub merged: bool,
    pub barrier_failed: bool,
    pub start_agreed: bool,
    pub segments: Vec<RemoteSegment>,
}

/// One segment (or the whole run) of a [`RemoteRun`].
#[derive(Debug, Clone, PartialEq)]
pub struct RemoteSegment {
    /// `None`: the record of a run that was not split.
    pub index: Option<u32>,
    pub announced: bool,
    pub has_record: bool,
    pub ended: bool,
    /// Committed interval batches.
    pub batches: u32,
    /// Last-Modified of its newest object (the store's clock).
    pub last_upload_unix_s: f64,
}

/// The distributed runs under `url`, newest first, each with its segments; `found` is how
/// many runs the prefix holds (`runs` may be fewer).
pub fn print_remote_runs(out: &mut dyn Write, url: &str, found: usize, runs: &[RemoteRun]) {
    if found == 0 {
        let _ = writeln!(out, "no runs stored in {url}");
        return;
    }
    let _ = writeln!(
        out,
        "{:<40} {:<20} {:<20} {:>9} {:>7}  status",
        "run", "scenario", "started", "segments", "ended"
    );
    for r in runs {
        let _ = writeln!(out, "{}", remote_line(r));
        for s in &r.segments {
            let _ = writeln!(out, "    {}", segment_line(s));
        }
    }
}

fn remote_line(r: &RemoteRun) -> String {
    let segments: Vec<&RemoteSegment> = r.segments.iter().filter(|s| s.has_record).collect();
    let ended = segments.iter().filter(|s| s.ended).count();
    let count = r.count.map(|c| c.to_string()).unwrap_or_else(|| "-".into());
    let status = if r.merged {
        "merged"
    } else if r.barrier_failed {
        "barrier failed (nothing ran)"
    } else if r.count.is_some_and(|c| ended as u32 == c) {
        "ended, not merged"
    } else if r.start_agreed {
        "running (or segments died)"
    } else {
        "waiting at the start barrier"
    };
    format!(
        "{:<40} {:<20} {:<20} {:>9} {:>7}  {status}",
        if r.prefix.is_empty() { "." } else { &r.prefix },
        r.name.as_deref().unwrap_or("-"),
        r.started_at.as_deref().unwrap_or("-"),
        format!("{}/{count}", segments.len()),
        ended
    )
}

fn segment_line(s: &RemoteSegment) -> String {
    let name = s
        .index
        .map(|i| format!("segment {i}"))
        .unwrap_or_else(|| "whole run".into());
    let state = match (s.has_record, s.ended) {
        (false, _) if s.announced => "announced, not started".to_string(),
        (false, _) => "-".to_string(),
        (true, true) => format!("ended ({} batches)", s.batches),
        (true, false) => format!(
            "no end yet ({} batches uploaded, the last at {})",
            s.batches,
            loadlab_metrics::result::rfc3339(loadlab_metrics::result::from_unix_seconds(
                s.last_upload_unix_s
            ))
        ),
    };
    format!("{name}: {state}")
}

fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let t: String = s.chars().take(n - 1).collect();
        format!("{t}…")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use loadlab_store::StudyKind;

    fn run() -> RunRecord {
        RunRecord {
            id: "r20260101-000000-abcd".into(),
            started_at: "2026-01-01T00:00:00Z".into(),
            scenario: "checkout-with-a-long-name".into(),
            scenario_file: None,
            variant: Some("b".into()),
            study: Some("s1".into()),
            status: RunStatus::Done,
            load: Some("20 vus".into()),
            rate: Some(123.456),
            p95_ms: None,
            error_rate: Some(0.0125),
            valid: Some(true),
            passed: Some(true),
            path: None,
            requests: Some(1000),
            segment: Some("1/4".into()),
            merged_from: None,
            partial: true,
            plan_hash: None,
            labels: Default::default(),
        }
    }

    fn text(f: impl FnOnce(&mut Vec<u8>)) -> String {
        let mut out = Vec::new();
        f(&mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn a_run_row_marks_partial_runs_and_segments() {
        let r = run();
        assert_eq!(
            run_line(&r),
            "r20260101-000000-abcd    2026-01-01 00:00:00 checkout-with-a-l… b               20 vus      1000      123.5         -   1.25%   yes  done (partial), segment 1/4"
        );
        let listed = text(|out| print_runs(out, Path::new("/x"), &[r], 3));
        assert!(listed.ends_with("… 2 older run(s) not shown (show more with -n 3)\n"));
        let none = text(|out| print_runs(out, Path::new("/x"), &[], 0));
        assert_eq!(none, "no runs stored in /x\n");
    }

    #[test]
    fn a_study_row_marks_resumable_studies() {
        let s = StudyRecord {
            id: "s20260101-000000-abcd".into(),
            kind: StudyKind::Study,
            name: "ab".into(),
            scenario_file: None,
            started_at: "2026-01-01T00:00:00Z".into(),
            status: StudyStatus::Interrupted,
            path: None,
            plan_hash: None,
            runs_done: Some(3),
            runs_planned: Some(6),
            labels: Default::default(),
        };
        assert_eq!(
            study_line(&s),
            "s20260101-000000-abcd    study     2026-01-01 00:00:00 ab                   interrupted (resumable) 3/6 runs     "
        );
    }

    #[test]
    fn a_remote_run_shows_its_state_and_its_segments() {
        let r = RemoteRun {
            prefix: String::new(),
            name: Some("checkout".into()),
            started_at: None,
            count: Some(2),
            merged: false,
            barrier_failed: false,
            start_agreed: true,
            segments: vec![
                RemoteSegment {
                    index: Some(0),
                    announced: true,
                    has_record: true,
                    ended: true,
                    batches: 7,
                    last_upload_unix_s: 0.0,
                },
                RemoteSegment {
                    index: Some(1),
                    announced: true,
                    has_record: false,
                    ended: false,
                    batches: 0,
                    last_upload_unix_s: 0.0,
                },
            ],
        };
        let listed = text(|out| print_remote_runs(out, "s3://b/p", 1, &[r]));
        let lines: Vec<&str> = listed.lines().collect();
        assert_eq!(
            lines[1],
            ".                                        checkout             -                          1/2       1  running (or segments died)"
        );
        assert_eq!(lines[2], "    segment 0: ended (7 batches)");
        assert_eq!(lines[3], "    segment 1: announced, not started");
        let none = text(|out| print_remote_runs(out, "s3://b/p", 0, &[]));
        assert_eq!(none, "no runs stored in s3://b/p\n");
    }
}
