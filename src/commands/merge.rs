//! `loadlab merge DIR|ID...|URL`: the segments of one plan (`run --segment i/N`, from several
//! processes or machines) become one run (`loadlab_pipeline::merge`, and `::remote` for a
//! distributed run in object storage), stored and reported like any run, with a per-segment
//! table.

use super::output::{print_errors, print_run, say_unless, warn};
use crate::cli::MergeArgs;
use crate::exit::{CliError, Outcome};
use loadlab_pipeline::measure::{check_json_path, write_json};
use loadlab_pipeline::merge::{merge_and_store, merge_locations, open_records, Merged};
use loadlab_pipeline::outcome_of;
use loadlab_pipeline::remote::merge_from_url;

pub fn execute(args: MergeArgs) -> Result<Outcome, CliError> {
    if let Some(json) = &args.json {
        check_json_path(json)?;
    }
    let (url, local) = merge_locations(&args.inputs, args.results.as_deref())?;
    let store = loadlab_pipeline::store::open_for_runs(local.as_deref(), &mut warn)?;
    if let Some(url) = url {
        let wait = args.wait;
        let quiet = args.quiet;
        let mut say_unless_quiet = say_unless(quiet);
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
