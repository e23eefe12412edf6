//! `loadlab merge URL` (or `merge --results URL`): a distributed run in object storage is
//! downloaded into a temporary directory and merged as local segments are — into the local
//! run store (for `report`, `compare`) and back next to the segments under `URL/merged/`,
//! with its report. `--wait` first waits for the segments to end (the merge Job does).

use super::measure::open_store_for_runs;
use super::merge::{finish, merge_and_store, Merged};
use crate::cli::MergeArgs;
use crate::exit::{CliError, Outcome};
use loadlab_remote::{
    download_run, parse_location, wait_for_segments, Remote, ResultsLocation, WaitOptions,
    WaitOutcome, MERGED,
};
use loadlab_scenario::units::parse_duration;
use loadlab_scenario::ScenarioError;
use std::path::Path;
use url::Url;

/// The URL to merge: the one input, or `--results` when no input is given.
pub fn url_of(args: &MergeArgs) -> Result<Option<Url>, CliError> {
    let urls: Vec<Url> = args
        .inputs
        .iter()
        .filter(|i| i.contains("://"))
        .map(|i| match parse_location(i)? {
            ResultsLocation::Url(u) => Ok(u),
            ResultsLocation::Dir(_) => unreachable!("a text with :// is a URL or an error"),
        })
        .collect::<Result<_, loadlab_remote::RemoteError>>()?;
    match (urls.len(), args.inputs.len()) {
        (0, 0) => {}
        (0, _) => return Ok(None),
        (1, 1) => return Ok(urls.into_iter().next()),
        _ => {
            return Err(CliError::bad_input(
                "give one distributed run's URL, or local run directories and ids, not both",
            ))
        }
    }
    match args
        .results
        .as_deref()
        .map(|p| parse_location(&p.to_string_lossy()))
    {
        Some(Ok(ResultsLocation::Url(u))) => Ok(Some(u)),
        Some(Err(e)) => Err(e.into()),
        _ => Ok(None),
    }
}

pub fn execute(url: &Url, args: &MergeArgs) -> Result<Outcome, CliError> {
    let run = Remote::open(url)?;
    if let Some(wait) = &args.wait {
        let timeout = parse_duration(wait).map_err(|m| ScenarioError::flag("--wait", m, None))?;
        let quiet = args.quiet;
        let outcome = wait_for_segments(
            &run,
            WaitOptions {
                timeout,
                ..WaitOptions::default()
            },
            &mut |m| {
                if !quiet {
                    eprintln!("{m}");
                }
            },
        )?;
        match outcome {
            WaitOutcome::AllEnded => {}
            WaitOutcome::BarrierFailed(reason) => {
                return Err(CliError::aborted(format!(
                    "{url}: the start barrier failed, nothing ran: {reason}"
                )))
            }
            WaitOutcome::PlannedEndPassed { unended } | WaitOutcome::TimedOut { unended } => {
                if !unended.is_empty() {
                    eprintln!(
                        "warning: segment(s) {} did not end (their pods died or are late): merging what they left",
                        unended.iter().map(|i| i.to_string()).collect::<Vec<_>>().join(", ")
                    );
                }
            }
        }
    }
    let downloaded = download_run(&run)?;
    for u in &downloaded.unreadable {
        eprintln!("warning: {u} (counted as missing)");
    }
    if downloaded.records.is_empty() {
        return Err(CliError::aborted(format!(
            "{url}: no segment record to merge{}",
            if args.wait.is_none() {
                " (still starting? `--wait 30m` waits for them)"
            } else {
                ""
            }
        )));
    }
    // The local store: `--results DIR` when the URL was an input, else $LOADLAB_RESULTS or
    // the default.
    let local = args
        .results
        .as_deref()
        .filter(|p| !p.to_string_lossy().contains("://"));
    let store = open_store_for_runs(local)?;
    let mut merged = merge_and_store(&downloaded.records, run.url(), &store)?;
    if merged.stored.is_some() {
        if let Err(e) = publish(&run, &store.run_dir(&merged.id), &merged) {
            merged.errors.push(e);
        }
    }
    let count = downloaded.records.len();
    let outcome = finish(args, merged, count);
    if !args.quiet {
        println!("merged run stored in {}/{MERGED}/", run.url());
    }
    Ok(outcome)
}

/// Writes the report beside the merged run and uploads the run's directory to `merged/`.
fn publish(run: &Remote, dir: &Path, merged: &Merged) -> Result<(), String> {
    let doc = loadlab_report::run_report(&merged.result, merged.result.load.planned.as_ref());
    super::report::write_both(&doc, dir).map_err(|e| e.message)?;
    let target = run.at(MERGED);
    upload_dir(&target, dir, "").map_err(|e| format!("merged result not uploaded: {e}"))
}

fn upload_dir(target: &Remote, dir: &Path, rel: &str) -> Result<(), String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for entry in entries {
        let entry = entry.map_err(|e| e.to_string())?;
        let name = entry.file_name().to_string_lossy().to_string();
        let key = if rel.is_empty() {
            name
        } else {
            format!("{rel}/{name}")
        };
        let path = entry.path();
        if path.is_dir() {
            upload_dir(target, &path, &key)?;
        } else {
            let bytes = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            target.put(&key, bytes).map_err(|e| e.to_string())?;
        }
    }
    Ok(())
}
