//! `loadlab report`: renders stored results (run, study, capacity, comparison) as HTML/Markdown.

use crate::exit::CliError;
use std::path::{Path, PathBuf};

/// Writes `report.html` and `report.md` beside the given result file (a run JSON,
/// `study.json`, `capacity.json` or comparison JSON); returns the HTML path.
/// Called by `study`, `capacity` and `compare` when they finish.
#[allow(dead_code)] // wired by the report issue
pub fn write_report_for(_result: &Path, _quiet: bool) -> Result<Option<PathBuf>, CliError> {
    Ok(None)
}
