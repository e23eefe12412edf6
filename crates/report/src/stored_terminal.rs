//! What a command that keeps a result says when it ends: where the result is stored, how to
//! resume it when it stopped, and the paths of its report.

use std::io::Write;
use std::path::Path;

/// `report: …/report.html` and the Markdown beside it.
pub fn print_report_paths(out: &mut (impl Write + ?Sized), html: &Path) {
    let _ = writeln!(out, "report: {}", html.display());
    let md = html.with_extension("md");
    if md.exists() {
        let _ = writeln!(out, "        {}", md.display());
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
