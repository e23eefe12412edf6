//! `loadlab capacity FILE [--resume ID]`: the largest arrival rate meeting the scenario's SLO.
//! The search (bracket, bisection, confirmation, re-runs, resumption) is
//! `loadlab_orchestrate::capacity`; this command resolves flags, supplies the runs and prints.

use super::output::{warn, Stored};
use crate::cli::CapacityArgs;
use crate::exit::{CliError, Outcome};
use loadlab_analysis::capacity::CapacityResult;
use loadlab_pipeline::capacity_command::{run_capacity_file, CapacityFile};
use loadlab_pipeline::live_session::{Live, Steerable};
use loadlab_report::progress_terminal::finding_line;
use loadlab_scenario::study::CapacitySpec;
use std::io::Write;
use std::path::Path;

pub fn execute(args: CapacityArgs) -> Result<Outcome, CliError> {
    let live = super::live::start(&args.live, args.output.quiet, Steerable::No)?;
    let outcome = search(&args, &live);
    super::live::finish(&live, &outcome);
    outcome
}

fn search(args: &CapacityArgs, live: &Live) -> Result<Outcome, CliError> {
    let settings = super::session::settings(&args.output)?;
    let search = CapacityFile {
        file: &args.file,
        overrides: CapacitySpec {
            start: args.start,
            hold: args.hold,
            warmup: args.warmup,
            precision: args.precision,
            confirm: args.confirm,
            max: args.max,
            max_errors: args.max_errors,
        },
        target: args.target.as_deref(),
        monitor: &args.monitor.monitor,
        cooldown: args.cooldown,
        resume: args.resume.as_deref(),
    };
    let progress = super::output::progress_out(settings.quiet);
    let done = run_capacity_file(search, &settings, live, progress, &mut warn)?;
    let end = done.end;
    let outcome = end.outcome();
    if let Some(e) = end.failure {
        return Err(e.into());
    }
    if !settings.quiet {
        print_end(&end.result, &end.file, &args.file, done.report.as_deref());
        super::output::print_outputs(&done.outputs);
    }
    Ok(outcome)
}

/// The finding, warnings, where it is stored, how to resume it, and its report.
fn print_end(result: &CapacityResult, path: &Path, file: &Path, report: Option<&Path>) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "\n{}", finding_line(result));
    for w in &result.warnings {
        let _ = writeln!(out, "warning: {w}");
    }
    let stored = Stored {
        what: "capacity search",
        command: "capacity",
        id: &result.id,
        interrupted: result.interrupted,
        path,
        file,
    };
    stored.print(&mut out, report);
}
