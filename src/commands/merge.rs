//! `loadlab merge DIR|ID...|URL`: the segments of one plan (`run --segment i/N`, from several
//! processes or machines) become one run (`loadlab_pipeline::merge`, and `::remote` for a
//! distributed run in object storage), stored and reported like any run, with a per-segment
//! table.

use super::output::{print_errors, print_run, say, warn};
use crate::cli::MergeArgs;
use crate::exit::{CliError, Outcome};
use loadlab_pipeline::measure::{check_json_path, write_json};
use loadlab_pipeline::merge::{merge_and_store, open_records, Merged};
use loadlab_pipeline::outcome_of;
use loadlab_pipeline::remote::merge_from_url;
use loadlab_remote::{parse_location, ResultsLocation};
use loadlab_scenario::units::parse_duration;
use loadlab_scenario::ScenarioError;
use url::Url;

pub fn execute(args: MergeArgs) -> Result<Outcome, CliError> {
    if let Some(json) = &args.json {
        check_json_path(json)?;
    }
    let (url, local) = locations(&args)?;
    let store = loadlab_pipeline::store::open_for_runs(local.as_deref(), &mut warn)?;
    if let Some(url) = url {
        let wait = args
            .wait
            .as_deref()
            .map(|w| parse_duration(w).map_err(|m| ScenarioError::flag("--wait", m, None)))
            .transpose()?;
        let quiet = args.quiet;
        let mut say_unless_quiet = |m: &str| {
            if !quiet {
                say(m)
            }
        };
        let remote = merge_from_url(&url, wait, &store, &mut say_unless_quiet)?;
        let outcome = finish(&args, remote.merged, remote.segments);
        if !quiet {
            println!("merged run stored in {}", remote.published);
        }
        return Ok(outcome);
    }
    if args.inputs.is_empty() {
        return Err(CliError::bad_input(
            "nothing to merge: give the segments' run directories or run ids, or the URL of a distributed run (s3://bucket/prefix/NAME)",
        ));
    }
    let records = open_records(&args.inputs, &store)?;
    let merged = merge_and_store(&records, &args.inputs.join(" "), &store)?;
    Ok(finish(&args, merged, records.len()))
}

/// The distributed run to merge (the one URL input, or `--results URL` without inputs) and
/// the local results directory (`--results DIR`, else the default).
fn locations(args: &MergeArgs) -> Result<(Option<Url>, Option<std::path::PathBuf>), CliError> {
    let mut urls = Vec::new();
    for input in &args.inputs {
        if let ResultsLocation::Url(u) = parse_location(input)? {
            urls.push(u);
        }
    }
    let results = match args.results.as_deref() {
        Some(p) => Some(parse_location(&p.to_string_lossy())?),
        None => None,
    };
    let local = match &results {
        Some(ResultsLocation::Dir(d)) => Some(d.clone()),
        _ => None,
    };
    match (urls.len(), args.inputs.len()) {
        (0, 0) => {}
        (0, _) if matches!(results, Some(ResultsLocation::Url(_))) => {
            return Err(CliError::bad_input(
                "--results URL: local segments are merged into a local run store: give --results DIR, or merge the distributed run by its URL",
            ))
        }
        (0, _) => return Ok((None, local)),
        (1, 1) => return Ok((urls.pop(), local)),
        _ => {
            return Err(CliError::bad_input(
                "give one distributed run's URL, or local run directories and ids, not both",
            ))
        }
    }
    match results {
        Some(ResultsLocation::Url(u)) => Ok((Some(u), None)),
        _ => Ok((None, local)),
    }
}

/// Writes `--json`, prints the summary and what could not be stored; the exit outcome.
fn finish(args: &MergeArgs, merged: Merged, segments: usize) -> Outcome {
    let Merged {
        result,
        id,
        stored,
        mut errors,
    } = merged;
    if let Some(json) = &args.json {
        if let Err(e) = write_json(&result, json) {
            errors.push(e);
        }
    }
    if !args.quiet {
        let line =
            stored.map(|p| format!("merged {segments} segment(s) as run {id} ({})", p.display()));
        print_run(&result, line);
    }
    if print_errors(&errors) {
        return Outcome::Invalid;
    }
    outcome_of(&result, args.allow_saturated)
}
