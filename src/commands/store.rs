//! Opening the run store for a command: runs whose process died (SIGKILL, a crash, a power
//! cut) get their summary derived from their record — the same function a finished run
//! uses, thresholds included — so `runs`, `report` and `compare` see them, marked partial.

use crate::exit::CliError;
use loadlab_metrics::record::{summarize, StoredRecord};
use loadlab_store::Store;
use std::path::Path;

/// Opens the store in `dir` and recovers dead runs (a failure to recover one is a warning).
pub fn open(dir: &Path) -> Result<Store, CliError> {
    let store = Store::open(dir).map_err(CliError::bad_input)?;
    recover(&store);
    Ok(store)
}

/// Derives and stores the summary of every interrupted run that has a record but none.
pub fn recover(store: &Store) {
    let Ok(dead) = store.unrecovered() else {
        return;
    };
    for run in dead {
        let dir = store.run_dir(&run.id);
        let summary = StoredRecord::open(&dir).and_then(|record| {
            let mut result = summarize(&record)?;
            result.thresholds =
                loadlab_analysis::thresholds::evaluate_exprs(&record.meta.thresholds, &result);
            Ok(result)
        });
        match summary.map(|r| store.finish_run(&run.id, &r)) {
            Ok(Ok(_)) => {}
            Ok(Err(e)) => eprintln!(
                "warning: run {} (interrupted) could not be recovered: {e}",
                run.id
            ),
            Err(e) => eprintln!(
                "warning: run {} (interrupted) could not be recovered: {e}",
                run.id
            ),
        }
    }
}
