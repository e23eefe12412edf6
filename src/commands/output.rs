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

/// Environment variable GitHub Actions sets to the step summary file.
const STEP_SUMMARY_ENV: &str = "GITHUB_STEP_SUMMARY";

/// Writes a Markdown summary to `--summary PATH`; without the flag, and when `step_summary`
/// is set, appends it to `$GITHUB_STEP_SUMMARY` if that is set (a CI step summary collects
/// every step's).
pub fn write_summary(
    flag: Option<&Path>,
    step_summary: bool,
    markdown: &str,
) -> Result<(), CliError> {
    let (path, append) = match flag {
        Some(p) => (p.to_path_buf(), false),
        None => match std::env::var_os(STEP_SUMMARY_ENV) {
            Some(p) if step_summary && !p.is_empty() => (PathBuf::from(p), true),
            _ => return Ok(()),
        },
    };
    let written = std::fs::OpenOptions::new()
        .create(true)
        .write(true)
        .append(append)
        .truncate(!append)
        .open(&path)
        .and_then(|mut f| f.write_all(markdown.as_bytes()));
    written.map_err(|e| {
        CliError::bad_input(format!("--summary: cannot write {}: {e}", path.display()))
    })
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
