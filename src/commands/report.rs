//! `loadlab report`: renders stored results (run, study, capacity, comparison) as HTML/Markdown
//! (`loadlab_pipeline::reports` reads and writes them); this resolves the flags and prints
//! the paths.

use super::output::warn;
use crate::cli::ReportArgs;
use crate::exit::{CliError, Outcome};
use loadlab_pipeline::reports::{resolve_input, write_report, ReportFormat, ReportTarget, Written};
use std::path::{Path, PathBuf};

pub fn execute(args: ReportArgs) -> Result<Outcome, CliError> {
    let input = resolve_input(&args.input, args.store.results.as_deref(), &mut warn)?;
    let format = args
        .format
        .as_deref()
        .map(|f| {
            ReportFormat::parse(f).ok_or_else(|| {
                CliError::bad_input(format!(
                    "--format: unknown format `{f}` (use html, md or json)"
                ))
            })
        })
        .transpose()?;
    let target = ReportTarget::new(&input, args.output.as_deref());
    match write_report(&input, &target, format)? {
        Written::Stdout(text) => print!("{text}"),
        Written::Files(paths) if !args.quiet => {
            let mut label = "report:";
            for p in paths {
                println!("{label} {}", shown(&p).display());
                label = "       ";
            }
        }
        Written::Files(_) => {}
    }
    Ok(Outcome::Ok)
}

/// A written file's path as the user can open it from anywhere: absolute when possible.
fn shown(p: &Path) -> PathBuf {
    std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())
}
