//! `loadlab runs --results URL`: the distributed runs under an object-storage prefix, each
//! with its segments' state (announced, uploading, ended), whether the start barrier agreed or
//! failed, and whether it was merged.

use crate::cli::RunsArgs;
use crate::exit::{CliError, Outcome};
use loadlab_remote::{find_runs, Remote, RunListing, SegmentState};
use std::io::Write;
use url::Url;

pub fn execute(url: &Url, args: &RunsArgs) -> Result<Outcome, CliError> {
    if args.command.is_some() {
        return Err(CliError::bad_input(
            "`runs show` and `runs studies` read the local run store: merge a distributed run first (`loadlab merge URL`), then show it by its id",
        ));
    }
    let remote = Remote::open(url)?;
    let runs = find_runs(&remote)?;
    let mut out = std::io::stdout().lock();
    if runs.is_empty() {
        let _ = writeln!(out, "no runs stored in {}", remote.url());
        return Ok(Outcome::Ok);
    }
    let _ = writeln!(
        out,
        "{:<40} {:<20} {:<20} {:>9} {:>7}  status",
        "run", "scenario", "started", "segments", "ended"
    );
    for r in runs.iter().rev().take(args.limit) {
        let _ = writeln!(out, "{}", row(r));
        for s in &r.segments {
            let _ = writeln!(out, "    {}", segment_line(s));
        }
    }
    let _ = out.flush();
    Ok(Outcome::Ok)
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
