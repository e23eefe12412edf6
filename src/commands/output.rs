//! What the commands print and share: warnings, report paths, a run's summary, values with
//! their units, and the flag values several commands parse.

use loadlab_metrics::RunResult;
use loadlab_report::Style;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

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

/// `report: …/report.html` and the Markdown beside it.
pub fn print_report_paths(out: &mut (impl Write + ?Sized), html: &Path) {
    let _ = writeln!(out, "report: {}", html.display());
    let md = html.with_extension("md");
    if md.exists() {
        let _ = writeln!(out, "        {}", md.display());
    }
}

/// One line per live output: what it sent, dropped, and its last error.
pub fn print_outputs(outputs: &loadlab_pipeline::live_outputs::LiveOutputs) {
    for report in outputs.reports() {
        println!("{report}");
    }
}

/// A run's summary on standard output, then `stored` (where it was kept).
pub fn print_run(result: &RunResult, stored: Option<String>) {
    let mut out = std::io::stdout().lock();
    let style = Style {
        color: std::io::stdout().is_terminal(),
    };
    let _ = loadlab_report::render_summary(result, &mut out, style);
    if let Some(line) = stored {
        let _ = writeln!(out, "\n{line}");
    }
    let _ = out.flush();
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

/// Where a study or capacity search is stored, and how to resume it when it stopped.
pub struct Stored<'a> {
    /// `study`, `capacity search`.
    pub what: &'a str,
    /// The command that resumes it: `study`, `capacity`.
    pub command: &'a str,
    pub id: &'a str,
    pub interrupted: bool,
    pub path: &'a Path,
    /// Its scenario file.
    pub file: &'a Path,
}

impl Stored<'_> {
    /// Prints where it is stored, how to resume it, and its report's paths.
    pub fn print(&self, out: &mut dyn Write, report: Option<&Path>) {
        let state = if self.interrupted {
            "interrupted, partial result stored"
        } else {
            "stored"
        };
        let _ = writeln!(
            out,
            "\n{} {} {state}: {}",
            self.what,
            self.id,
            self.path.display()
        );
        if self.interrupted {
            let _ = writeln!(
                out,
                "resume it with: loadlab {} {} --resume {}",
                self.command,
                self.file.display(),
                self.id
            );
        }
        if let Some(r) = report {
            print_report_paths(out, r);
        }
        let _ = out.flush();
    }
}
