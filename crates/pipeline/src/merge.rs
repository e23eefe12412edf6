//! The segments of one plan (`run --segment i/N`, from several processes or machines) become
//! one run — histograms added exactly, counters summed, intervals lined up — stored like any
//! run. The inputs are run directories, results directories holding one run, or run ids.

use crate::PipelineError;
use loadlab_metrics::RunResult;
use loadlab_record::{merge_records, Guarded, RecordWriter, StoredRecord};
use loadlab_remote::{parse_location, ResultsLocation};
use loadlab_store::{NewRun, ResultFile, Store};
use std::path::{Path, PathBuf};
use url::Url;

/// A merged run, stored (or not, and why).
pub struct Merged {
    pub result: RunResult,
    pub id: String,
    /// Its `run.json` in the store.
    pub stored: Option<PathBuf>,
    pub errors: Vec<String>,
}

/// Reads the records the inputs name.
pub fn open_records(inputs: &[String], store: &Store) -> Result<Vec<StoredRecord>, PipelineError> {
    inputs
        .iter()
        .map(|input| {
            let dir = record_dir(input, store)?;
            StoredRecord::open(&dir).map_err(PipelineError::bad_input)
        })
        .collect()
}

/// Merges the records into a new run of the store (`merged_from` says from what).
pub fn merge_and_store(
    records: &[StoredRecord],
    merged_from: &str,
    store: &Store,
) -> Result<Merged, PipelineError> {
    merge_into_run(records, merged_from, NewRun::default(), store)
}

/// Merges the records into a new run of the store indexed with `meta` (a study's variant,
/// study and labels; its scenario and plan are the records').
pub fn merge_into_run(
    records: &[StoredRecord],
    merged_from: &str,
    meta: NewRun,
    store: &Store,
) -> Result<Merged, PipelineError> {
    // Check the inputs before a run is indexed for the merge.
    merge_records(records, None).map_err(PipelineError::bad_input)?;
    let first = &records[0].meta;
    let id = store.begin_run(&NewRun {
        scenario: first.name.clone(),
        scenario_file: first.scenario_file.clone(),
        plan_hash: Some(first.plan_hash.clone()),
        merged_from: Some(merged_from.to_string()),
        ..meta
    })?;
    let mut sink = Guarded::new(Box::new(RecordWriter::new(&store.run_dir(&id))));
    let mut result = merge_records(records, Some(&mut sink)).map_err(PipelineError::bad_input)?;
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

/// A record directory as given, the one run of a results directory (`--results DIR` of a
/// segment), or the directory of a run id in the store.
fn record_dir(input: &str, store: &Store) -> Result<PathBuf, PipelineError> {
    let path = PathBuf::from(input);
    if path.is_dir() && !loadlab_record::is_record(&path) {
        return match loadlab_store::run_dirs_in(&path).as_slice() {
            [one] => Ok(one.clone()),
            [] => Err(PipelineError::bad_input(format!(
                "{input}: no run record here: give a run's directory (with a record.json), a results directory holding one run, or a run id"
            ))),
            several => Err(PipelineError::bad_input(format!(
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
    let record_file = path
        .file_name()
        .is_some_and(|n| n == loadlab_record::META_FILE || n == ResultFile::Run.file_name());
    if path.is_file() && record_file {
        return Ok(path.parent().map(PathBuf::from).unwrap_or_default());
    }
    match store.run(input) {
        Ok(run) => Ok(store.run_dir(&run.id)),
        Err(_) => Err(PipelineError::bad_input(format!(
            "`{input}` is neither a run directory (with a record.json) nor a run id in {}",
            store.dir().display()
        ))),
    }
}

/// What `merge` was given: the distributed run to merge (the one URL input, or `--results
/// URL` without inputs) and the local results directory (`--results DIR`, else `None`: the
/// default).
pub fn merge_locations(
    inputs: &[String],
    results: Option<&Path>,
) -> Result<(Option<Url>, Option<PathBuf>), PipelineError> {
    let mut urls = Vec::new();
    for input in inputs {
        if let ResultsLocation::Url(u) = parse_location(input)? {
            urls.push(u);
        }
    }
    let results = match results {
        Some(p) => Some(parse_location(&p.to_string_lossy())?),
        None => None,
    };
    let local = match &results {
        Some(ResultsLocation::Dir(d)) => Some(d.clone()),
        _ => None,
    };
    match (urls.len(), inputs.len()) {
        (0, 0) => {}
        (0, _) if matches!(results, Some(ResultsLocation::Url(_))) => {
            return Err(PipelineError::bad_input(
                "--results URL: local segments are merged into a local run store: give --results DIR, or merge the distributed run by its URL",
            ))
        }
        (0, _) => return Ok((None, local)),
        (1, 1) => return Ok((urls.pop(), local)),
        _ => {
            return Err(PipelineError::bad_input(
                "give one distributed run's URL, or local run directories and ids, not both",
            ))
        }
    }
    match results {
        Some(ResultsLocation::Url(u)) => Ok((Some(u), None)),
        _ => Ok((None, local)),
    }
}
