//! `loadlab study FILE [--resume ID]`: repetitions, variants and sweeps of one scenario, with
//! statistics. The study itself (order, re-runs, resumption, statistics) is
//! `loadlab_orchestrate::study`; this command supplies the runs (the engine, the store) and
//! prints what happens.

use super::output::{warn, Stored};
use crate::cli::{OutputArgs, StudyArgs};
use crate::exit::{CliError, Outcome};
use loadlab_analysis::study::StudyResult;
use loadlab_pipeline::live_session::{Live, Steerable};
use loadlab_pipeline::study::{self, PlanOverrides};
use loadlab_pipeline::study_command::{self, StudyFile};
use loadlab_report::study_terminal::print_study;
use std::path::{Path, PathBuf};

pub fn execute(args: StudyArgs) -> Result<Outcome, CliError> {
    let live = super::live::start(&args.live, args.output.quiet, Steerable::No)?;
    let outcome = run_and_write(&args, &live);
    super::live::finish(&live, &outcome);
    outcome
}

fn run_and_write(args: &StudyArgs, live: &Live) -> Result<Outcome, CliError> {
    let overrides = PlanOverrides {
        target: args.target.clone(),
        repeat: args.repeat.map(usize::from),
        retry_invalid: args.retry_invalid,
        segments: args.segments,
        monitor: args.monitor.monitor.clone(),
    };
    let (outcome, study_json) = run_study_file(
        &args.file,
        &args.output,
        &overrides,
        args.resume.as_deref(),
        live,
    )?;
    study::write_ci_outputs(&study_json, args.summary.as_deref(), args.junit.as_deref())?;
    Ok(outcome)
}

/// Runs (or resumes) the `study:` section of a scenario file and prints its end; returns the
/// outcome and the path of its `study.json`. Used by `loadlab study` and by `loadlab demo`.
pub fn run_study_file(
    file: &Path,
    output: &OutputArgs,
    overrides: &PlanOverrides,
    resume: Option<&str>,
    live: &Live,
) -> Result<(Outcome, PathBuf), CliError> {
    let settings = super::session::settings(output)?;
    let study = StudyFile {
        file,
        overrides,
        resume,
    };
    let progress = super::output::progress_out(settings.quiet);
    let done = study_command::run_study_file(study, &settings, live, progress, &mut warn)?;
    let end = done.end;
    let outcome = end.outcome();
    let id = &end.study.id;
    if let Some(e) = end.failure {
        if !settings.quiet {
            eprintln!(
                "study stopped; the runs made so far are in {} (resume with `loadlab study {} --resume {id}`)",
                end.file.display(),
                file.display(),
            );
        }
        return Err(e.into());
    }
    if !settings.quiet {
        print_end(
            &end.study,
            end.stopped,
            &end.file,
            file,
            done.report.as_deref(),
        );
        super::output::print_outputs(&done.outputs);
    }
    Ok((outcome, end.file))
}

/// The study's table, where it is stored, how to resume it, and its report.
fn print_end(study: &StudyResult, stopped: bool, path: &Path, file: &Path, report: Option<&Path>) {
    let mut out = std::io::stdout().lock();
    let _ = print_study(&mut out, study);
    let stored = Stored {
        what: "study",
        command: "study",
        id: &study.id,
        interrupted: stopped,
        path,
        file,
    };
    stored.print(&mut out, report);
}
