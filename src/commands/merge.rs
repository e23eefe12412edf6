//! `loadlab merge DIR|ID...`: the segments of one plan (`run --segment i/N`, from several
//! processes or machines) become one run — histograms added exactly, counters summed,
//! intervals lined up — stored and reported like any run, with a per-segment table.

use super::measure::{check_json_path, open_store_for_runs, write_json};
use super::run::outcome_of;
use crate::cli::MergeArgs;
use crate::exit::{CliError, Outcome};
use loadlab_metrics::record::{merge_records, Guarded, RecordWriter, StoredRecord};
use loadlab_metrics::RunResult;
use loadlab_report::Style;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;

pub fn execute(args: MergeArgs) -> Result<Outcome, CliError> {
    if let Some(json) = &args.json {
        check_json_path(json)?;
    }
    if let Some(url) = super::remote_merge::url_of(&args)? {
        return super::remote_merge::execute(&url, &args);
    }
    if args.inputs.is_empty() {
        return Err(CliError::bad_input(
            "nothing to merge: give the segments' run directories or run ids, or the URL of a distributed run (s3://bucket/prefix/NAME)",
        ));
    }
    let store = open_store_for_runs(args.results.as_deref())?;
    let mut records = Vec::new();
    for input in &args.inputs {
        let dir = record_dir(input, &store)?;
        records.push(StoredRecord::open(&dir).map_err(CliError::bad_input)?);
    }
    let merged = merge_and_store(&records, &args.inputs.join(" "), &store)?;
    Ok(finish(&args, merged, records.len()))
}

/// A merged run, stored (or not, and why).
pub struct Merged {
    pub result: RunResult,
    pub id: String,
    /// Its `run.json` in the store.
    pub stored: Option<PathBuf>,
    pub errors: Vec<String>,
}

/// Merges the records into a new run of the store (`merged_from` says from what).
pub fn merge_and_store(
    records: &[StoredRecord],
    merged_from: &str,
    store: &loadlab_store::Store,
) -> Result<Merged, CliError> {
    // Check the inputs before a run is indexed for the merge.
    merge_records(records, None).map_err(CliError::bad_input)?;
    let first = &records[0].meta;
    let id = store
        .begin_run(&loadlab_store::NewRun {
            scenario: first.name.clone(),
            scenario_file: first.scenario_file.clone(),
            plan_hash: Some(first.plan_hash.clone()),
            merged_from: Some(merged_from.to_string()),
            ..Default::default()
        })
        .map_err(CliError::bad_input)?;
    let mut sink = Guarded::new(Box::new(RecordWriter::new(&store.run_dir(&id))));
    let mut result = merge_records(records, Some(&mut sink)).map_err(CliError::bad_input)?;
    result.thresholds =
        loadlab_analysis::thresholds::evaluate_exprs(&records[0].meta.thresholds, &result);
    let mut errors = Vec::new();
    let stored = match sink.take_error() {
        Some(e) => {
            errors.push(format!(
                "merged result not stored: {e} ({})",
                store.run_dir(&id).display()
            ));
            let _ = store.fail_run(&id);
            None
        }
        None => match store.finish_run(&id, &result) {
            Ok(p) => Some(p),
            Err(e) => {
                errors.push(format!("merged result not stored: {e}"));
                None
            }
        },
    };
    Ok(Merged {
        result,
        id,
        stored,
        errors,
    })
}

/// Writes `--json`, prints the summary and what could not be stored; the exit outcome.
pub fn finish(args: &MergeArgs, merged: Merged, segments: usize) -> Outcome {
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
        let mut out = std::io::stdout().lock();
        let style = Style {
            color: std::io::stdout().is_terminal(),
        };
        let _ = loadlab_report::render_summary(&result, &mut out, style);
        if let Some(p) = stored {
            let _ = writeln!(
                out,
                "\nmerged {segments} segment(s) as run {id} ({})",
                p.display()
            );
        }
        let _ = out.flush();
    }
    for e in &errors {
        eprintln!("error: {e}");
    }
    if !errors.is_empty() {
        return Outcome::Invalid;
    }
    outcome_of(&result, args.allow_saturated)
}

/// A record directory as given, the one run of a results directory (`--results DIR` of a
/// segment), or the directory of a run id in the store.
fn record_dir(input: &str, store: &loadlab_store::Store) -> Result<PathBuf, CliError> {
    let path = PathBuf::from(input);
    if path.is_dir() && !loadlab_metrics::record::is_record(&path) {
        return match loadlab_store::run_dirs_in(&path).as_slice() {
            [one] => Ok(one.clone()),
            [] => Err(CliError::bad_input(format!(
                "{input}: no run record here: give a run's directory (with a record.json), a results directory holding one run, or a run id"
            ))),
            several => Err(CliError::bad_input(format!(
                "{input} is a results directory with {} runs; merge names one run per segment: give one of\n{}",
                several.len(),
                several
                    .iter()
                    .map(|d| format!("  {}", d.display()))
                    .collect::<Vec<_>>()
                    .join("\n")
            ))),
        };
    }
    if path.is_dir() {
        return Ok(path);
    }
    if path.is_file()
        && path
            .file_name()
            .is_some_and(|n| n == "record.json" || n == "run.json")
    {
        return Ok(path.parent().map(PathBuf::from).unwrap_or_default());
    }
    match store.run(input) {
        Ok(run) => Ok(store.run_dir(&run.id)),
        Err(_) => Err(CliError::bad_input(format!(
            "`{input}` is neither a run directory (with a record.json) nor a run id in {}",
            store.dir().display()
        ))),
    }
}
