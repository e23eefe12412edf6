//! What the commands print and share: warnings, report paths, a run's summary, values with
//! their units, and the flag values several commands parse.

use loadlab_metrics::RunResult;
pub use loadlab_report::stored_terminal::{print_report_paths, Stored};
use loadlab_report::Style;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

/// Writes a command's whole output (a scenario, manifests, a schema) to standard output; a
/// failed write (a full disk, a closed pipe) is an error (exit 3), never a panic or an
/// exit 0 with nothing written.
pub fn to_stdout(text: &str, what: &str) -> Result<(), crate::exit::CliError> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|e| {
            crate::exit::CliError::aborted(format!(
                "cannot write {what} to standard output: {e} (write it to a file instead, or free the disk it goes to)"
            ))
        })
}

/// Prints a warning from the library (the work went on).
pub fn warn(message: &str) {
    eprintln!("warning: {message}");
}

/// Prints the library's messages as they are (progress, worded warnings), unless `--quiet`.
pub fn say_unless(quiet: bool) -> impl FnMut(&str) {
    move |message| {
        if !quiet {
            eprintln!("{message}");
        }
    }
}

/// Writes the HTML/Markdown report beside a result file; a failure is a warning.
pub fn report_for(result: &Path) -> Option<PathBuf> {
    loadlab_pipeline::reports::report_beside(result, &mut warn)
}

/// One line per live output: what it sent, dropped, and its last error. Printed after a run's
/// summary, so a reader that left in between (`| head`) must not make it panic: the panic
/// would end the process before the run's exit status is given.
pub fn print_outputs(outputs: &loadlab_pipeline::live_outputs::LiveOutputs) {
    let mut out = std::io::stdout().lock();
    for report in outputs.reports() {
        let _ = writeln!(out, "{report}");
    }
}

/// How far a run's summary went on standard output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Printed {
    Whole,
    /// Its reader went away (`loadlab run … | head`): what it wanted was read, as with git or
    /// ripgrep nothing more is said, and nothing more is printed (a print would fail too).
    ReaderGone,
}

/// A run's summary on standard output, then `stored` (where it was kept). An error when
/// standard output cannot take it (a full disk): the summary is lost, which the exit status
/// must say, though the run itself is kept. A closed pipe is not one (see [`Printed`]).
pub fn print_run(result: &RunResult, stored: Option<String>) -> Result<Printed, String> {
    let mut out = std::io::stdout().lock();
    let style = Style {
        color: std::io::stdout().is_terminal(),
    };
    loadlab_report::render_summary(result, &mut out, style)
        .and_then(|()| match stored {
            Some(line) => writeln!(out, "\n{line}"),
            None => Ok(()),
        })
        .and_then(|()| out.flush())
        .map(|()| Printed::Whole)
        .or_else(|e| match e.kind() {
            std::io::ErrorKind::BrokenPipe => Ok(Printed::ReaderGone),
            _ => Err(format!("cannot write the run's summary to standard output: {e} (the run itself is stored: `loadlab runs show last` prints it)")),
        })
}

/// Prints what could not be stored; true when anything could not.
pub fn print_errors(errors: &[String]) -> bool {
    for e in errors {
        eprintln!("error: {e}");
    }
    !errors.is_empty()
}

/// Where progress lines go: standard error, or nowhere with `--quiet`.
pub fn progress_out(quiet: bool) -> Box<dyn Write> {
    if quiet {
        Box::new(std::io::sink())
    } else {
        Box::new(std::io::stderr())
    }
}
