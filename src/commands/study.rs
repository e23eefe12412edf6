//! `loadlab study FILE`: repetitions, variants and sweeps of one scenario, with statistics.

use crate::cli::OutputArgs;
use crate::exit::{CliError, Outcome};
use std::path::{Path, PathBuf};

/// Runs the `study:` section of a scenario file; returns the outcome and the path of the
/// `study.json` it wrote. Used by `loadlab study` and by `loadlab demo`.
#[allow(dead_code)] // wired by the studies issue
pub fn run_study_file(_file: &Path, _output: &OutputArgs) -> Result<(Outcome, PathBuf), CliError> {
    Err(CliError::bad_input("studies are not implemented yet"))
}
