//! Opening the run store for a command: runs whose process died (SIGKILL, a crash, a power
//! cut) get their summary derived from their record — the same function a finished run
//! uses, thresholds included — so `runs`, `report` and `compare` see them, marked partial.

use crate::PipelineError;
use loadlab_metrics::RunResult;
use loadlab_record::{summarize, StoredRecord};
use loadlab_remote::{parse_location, ResultsLocation};
use loadlab_store::{RunRecord, Store};
use std::path::Path;

/// Opens the store in `dir` and recovers dead runs; a run that cannot be recovered is a
/// warning handed to `warn`.
pub fn open(dir: &Path, warn: &mut dyn FnMut(&str)) -> Result<Store, PipelineError> {
    let store = Store::open(dir)?;
    recover(&store, warn);
    Ok(store)
}

/// Opens the store in the results directory (`--results`, `LOADLAB_RESULTS` or the default).
pub fn open_results(
    results: Option<&Path>,
    warn: &mut dyn FnMut(&str),
) -> Result<Store, PipelineError> {
    open(&loadlab_store::resolve_dir(results), warn)
}

/// Opens the store for a command that will run load, after checking it can be written
/// (exit 2 before anything is sent), and recovers runs whose process died.
pub fn open_for_runs(
    results: Option<&Path>,
    warn: &mut dyn FnMut(&str),
) -> Result<Store, PipelineError> {
    let dir = loadlab_store::resolve_dir(results);
    if let ResultsLocation::Url(_) = parse_location(&dir.to_string_lossy())? {
        return Err(PipelineError::bad_input(format!(
            "--results {}: object storage holds the runs of `loadlab run` (and `merge`, `runs`); this command keeps its results in a local directory: give --results DIR",
            dir.display()
        )));
    }
    loadlab_store::check_writable(&dir).map_err(|e| {
        PipelineError::bad_input(format!(
            "{e}\n  hint: choose a writable results directory with --results DIR or LOADLAB_RESULTS"
        ))
    })?;
    open(&dir, warn)
}

/// Derives and stores the summary of every run whose summary was never written: its process
/// died, or its summary could not be written (a full disk, since freed). What could not be
/// derived is a warning handed to `warn`, and so is a rebuilt summary the user did not expect.
pub fn recover(store: &Store, warn: &mut dyn FnMut(&str)) {
    let Ok(todo) = store.unrecovered() else {
        return;
    };
    for run in todo {
        recover_run(store, &run, warn);
    }
}

/// A run's stored summary (by id or prefix, `last`). A `run.json` deleted beside a whole
/// record is derived again first, and `warn` hears of it: the store does not look for such
/// files when it opens (that costs a file check per run ever made).
pub fn load_run(
    store: &Store,
    id: &str,
    warn: &mut dyn FnMut(&str),
) -> Result<(RunRecord, RunResult), PipelineError> {
    let run = store.run(id)?;
    rebuild_if_missing(store, &run, warn);
    Ok(store.load_run(&run.id)?)
}

/// Derives again the summary of `run` if it was written once and is gone (see [`load_run`]).
pub fn rebuild_if_missing(store: &Store, run: &RunRecord, warn: &mut dyn FnMut(&str)) {
    if store.summary_missing(run) {
        recover_run(store, run, warn);
    }
}

/// Derives and stores one run's summary from its record.
fn recover_run(store: &Store, run: &RunRecord, warn: &mut dyn FnMut(&str)) {
    let why = match (&run.path, run.status) {
        (Some(_), _) => Some("its run.json was missing"),
        (None, loadlab_store::RunStatus::NotStored) => {
            Some("it was not stored when it ended (a full disk?)")
        }
        _ => None,
    };
    let dir = store.run_dir(&run.id);
    let record = StoredRecord::open(&dir);
    if run.status == loadlab_store::RunStatus::NotStored
        && record.as_ref().is_ok_and(|r| r.end.is_none())
    {
        // The disk filled before the record's end: it holds less than was measured (and
        // printed), and a summary of it would claim the rest never happened.
        return;
    }
    let summary = record.and_then(|record| {
        let mut result = summarize(&record)?;
        result.thresholds =
            loadlab_analysis::thresholds::evaluate_exprs(&record.meta.thresholds, &result);
        Ok(result)
    });
    let failure = match summary.map(|r| store.finish_run(&run.id, &r)) {
        Ok(Ok(_)) => {
            if let Some(why) = why {
                warn(&format!(
                    "run {}: {why}; its summary was rebuilt from its record",
                    run.id
                ));
            }
            return;
        }
        Ok(Err(e)) => e.to_string(),
        Err(e) => e.to_string(),
    };
    warn(&format!(
        "run {} ({}) could not be recovered: {failure}",
        run.id, run.status
    ));
}
