//! Writing what a study, capacity search or comparison produced: the record in the store,
//! its `--json` copy, and the HTML/Markdown report beside it.

use crate::exit::CliError;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Writes a record's text to the `--json` path.
pub fn write_json_copy(path: &Path, text: &str) -> Result<(), CliError> {
    std::fs::write(path, text)
        .map_err(|e| CliError::bad_input(format!("--json: cannot write {}: {e}", path.display())))
}

/// Writes a JUnit XML report to the `--junit` path.
pub fn write_junit(path: &Path, xml: &str) -> Result<(), CliError> {
    std::fs::write(path, xml)
        .map_err(|e| CliError::bad_input(format!("--junit: cannot write {}: {e}", path.display())))
}

/// Writes the HTML/Markdown report beside a result file; a failure is a warning (the
/// result itself is already stored).
pub fn report_for(result: &Path) -> Option<PathBuf> {
    match super::write_report_for(result, true) {
        Ok(path) => path,
        Err(e) => {
            eprintln!("warning: no report written: {}", e.message);
            None
        }
    }
}

/// `report: …/report.html` and the Markdown beside it.
pub fn print_report_paths(out: &mut impl Write, html: &Path) {
    let _ = writeln!(out, "report: {}", html.display());
    let md = html.with_extension("md");
    if md.exists() {
        let _ = writeln!(out, "        {}", md.display());
    }
}
