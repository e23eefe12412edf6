//! What a run store holds, as text: the runs (segments, merges and partial runs marked),
//! one run, study or capacity search, the studies (resumable ones marked), and the
//! distributed runs under an object-storage prefix with their segments' state.

use crate::PipelineError;
use loadlab_analysis::capacity::CapacityResult;
use loadlab_analysis::study::StudyResult;
use loadlab_remote::{find_runs, Remote, RunListing, SegmentState};
use loadlab_report::Style;
use loadlab_store::{RunRecord, RunStatus, Store, StudyKind, StudyStatus};
use std::io::Write;

/// The most recent runs (`limit` of them), newest first.
pub fn list_runs(store: &Store, limit: usize, out: &mut dyn Write) -> Result<(), PipelineError> {
    let (runs, total) = store.runs(limit)?;
    if runs.is_empty() {
        let _ = writeln!(out, "no runs stored in {}", store.dir().display());
        return Ok(());
    }
    let _ = writeln!(
        out,
        "{:<24} {:<19} {:<18} {:<12} {:>9} {:>9} {:>10} {:>9} {:>7} {:>5}  status",
        "id", "time", "scenario", "variant", "load", "requests", "req/s", "p95", "errors", "valid"
    );
    for r in &runs {
        let opt = |v: Option<String>| v.unwrap_or_else(|| "-".into());
        let _ = writeln!(
            out,
            "{:<24} {:<19} {:<18} {:<12} {:>9} {:>9} {:>10} {:>9} {:>7} {:>5}  {}",
            r.id,
            r.started_at.replace('T', " ").trim_end_matches('Z'),
            truncate(&r.scenario, 18),
            truncate(r.variant.as_deref().unwrap_or("-"), 12),
            opt(r.load.clone()),
            opt(r.requests.map(|n| n.to_string())),
            opt(r.rate.map(|v| format!("{v:.1}"))),
            opt(r.p95_ms.map(loadlab_report::format_ms)),
            opt(r.error_rate.map(|e| format!("{:.2}%", e * 100.0))),
            opt(r.valid.map(|v| if v { "yes" } else { "no" }.to_string())),
            status(r)
        );
    }
    if total > runs.len() {
        let _ = writeln!(
            out,
            "… {} older run(s) not shown (show more with -n {total})",
            total - runs.len()
        );
    }
    Ok(())
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

/// One stored run, study or capacity search (`last`: the latest run).
pub fn show(
    store: &Store,
    id: &str,
    style: Style,
    out: &mut dyn Write,
) -> Result<(), PipelineError> {
    // A study or capacity search id first (`s…`, `c…`), then a run id or `last`.
    if id != "last" {
        if let Ok(s) = store.study(id) {
            let path = s.path.clone().ok_or_else(|| {
                PipelineError::bad_input(format!(
                    "{} {} has no result yet ({})",
                    s.kind, s.id, s.status
                ))
            })?;
            let text = std::fs::read_to_string(&path)
                .map_err(|e| PipelineError::bad_input(format!("{}: {e}", path.display())))?;
            let _ = writeln!(
                out,
                "{} {} ({}), stored in {}",
                s.kind,
                s.id,
                s.status,
                path.display()
            );
            if s.kind == StudyKind::Capacity {
                let c: CapacityResult = serde_json::from_str(&text)
                    .map_err(|e| PipelineError::bad_input(format!("{}: {e}", path.display())))?;
                for step in &c.steps {
                    let _ = writeln!(
                        out,
                        "  {:>8}/s [{:<7}] {}{}",
                        loadlab_report::words::plain_number(step.rate),
                        step.phase,
                        if step.passed { "pass" } else { "FAIL" },
                        if step.retried { " (re-run)" } else { "" }
                    );
                }
                for w in &c.warnings {
                    let _ = writeln!(out, "  {w}");
                }
            } else {
                let study: StudyResult = serde_json::from_str(&text)
                    .map_err(|e| PipelineError::bad_input(format!("{}: {e}", path.display())))?;
                let _ = loadlab_report::study_terminal::print_study(out, &study);
            }
            return Ok(());
        }
    }
    let (rec, result) = store.load_run(id)?;
    let _ = writeln!(
        out,
        "run {} ({}{}{}), stored in {}",
        rec.id,
        status(&rec),
        rec.variant
            .map(|v| format!(", variant {v}"))
            .unwrap_or_default(),
        rec.study
            .map(|s| format!(", study {s}"))
            .unwrap_or_default(),
        store.run_dir(&rec.id).display()
    );
    let _ = loadlab_report::render_summary(&result, out, style);
    Ok(())
}

/// The most recent studies and capacity searches, resumable ones marked.
pub fn list_studies(store: &Store, limit: usize, out: &mut dyn Write) -> Result<(), PipelineError> {
    let studies = store.studies(limit)?;
    if studies.is_empty() {
        let _ = writeln!(out, "no studies stored in {}", store.dir().display());
    }
    for s in studies {
        let progress = match (s.runs_done, s.runs_planned) {
            (Some(d), Some(p)) if p > 0 => format!("{d}/{p} runs"),
            (Some(d), _) => format!("{d} steps"),
            _ => "-".into(),
        };
        let _ = writeln!(
            out,
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
            s.path.map(|p| p.display().to_string()).unwrap_or_default()
        );
    }
    Ok(())
}

/// The distributed runs under an object-storage prefix (`limit` of them), newest first,
/// each with its segments.
pub fn list_remote_runs(
    remote: &Remote,
    limit: usize,
    out: &mut dyn Write,
) -> Result<(), PipelineError> {
    let runs = find_runs(remote)?;
    if runs.is_empty() {
        let _ = writeln!(out, "no runs stored in {}", remote.url());
        return Ok(());
    }
    let _ = writeln!(
        out,
        "{:<40} {:<20} {:<20} {:>9} {:>7}  status",
        "run", "scenario", "started", "segments", "ended"
    );
    for r in runs.iter().rev().take(limit) {
        let _ = writeln!(out, "{}", row(r));
        for s in &r.segments {
            let _ = writeln!(out, "    {}", segment_line(s));
        }
    }
    Ok(())
}

fn row(r: &RunListing) -> String {
    let segments: Vec<&SegmentState> = r.segments.iter().filter(|s| s.has_record).collect();
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

fn segment_line(s: &SegmentState) -> String {
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
