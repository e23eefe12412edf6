//! `loadlab study FILE [--resume ID]`: repetitions, variants and sweeps of one scenario, with
//! statistics. The study itself (order, re-runs, resumption, statistics) is
//! `loadlab_orchestrate::study`; this command supplies the runs (the engine, the store) and
//! prints what happens.

use super::output::{report_for, warn, Stored};
use super::session::Session;
use crate::cli::{OutputArgs, StudyArgs};
use crate::exit::{CliError, Outcome};
use loadlab_analysis::study::{StudyResult, MIN_RUNS_FOR_COMPARISON};
use loadlab_orchestrate::study::StudyObserver;
use loadlab_pipeline::live_progress::StudyTee;
use loadlab_pipeline::live_session::{Live, Steerable};
use loadlab_pipeline::segmented::SegmentCommand;
use loadlab_pipeline::study::{self, PlanOverrides, StudyRuns};
use loadlab_report::progress_terminal::StudyLines;
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
        repeat: args.repeat,
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

/// With `--segments N`: each round as N processes of this program.
fn segment_command(
    file: &Path,
    overrides: &PlanOverrides,
    threads: Option<usize>,
) -> Result<Option<SegmentCommand>, CliError> {
    let Some(segments) = overrides.segments else {
        return Ok(None);
    };
    Ok(Some(SegmentCommand {
        program: std::env::current_exe().map_err(|e| {
            CliError::aborted(format!("cannot find this program to start segments: {e}"))
        })?,
        file: file.to_path_buf(),
        target: overrides.target.clone(),
        threads,
        segments,
    }))
}

/// Runs (or resumes) the `study:` section of a scenario file; returns the outcome and the
/// path of its `study.json`. Used by `loadlab study` and by `loadlab demo`.
pub fn run_study_file(
    file: &Path,
    output: &OutputArgs,
    overrides: &PlanOverrides,
    resume: Option<&str>,
    live: &Live,
) -> Result<(Outcome, PathBuf), CliError> {
    let plan = study::plan_of_file(file, overrides)?;
    let segments = segment_command(file, overrides, output.threads)?;
    let quiet = output.quiet;
    if !quiet && plan.variants.len() > 1 && plan.repeat < MIN_RUNS_FOR_COMPARISON {
        warn(&format!(
            "{} runs per variant: comparisons need at least {MIN_RUNS_FOR_COMPARISON} (10 recommended), so none is made",
            plan.repeat
        ));
    }
    let store = loadlab_pipeline::store::open_for_runs(output.results.as_deref(), &mut warn)?;
    let labels = output.resolved_labels()?;
    let stored = study::begin_or_resume(&store, &plan, resume, file, &labels)?;
    let id = stored.ids.id.clone();
    let file_outputs = plan
        .variants
        .first()
        .map(|v| v.scenario.outputs.clone())
        .unwrap_or_default();
    let Session {
        cancel,
        outputs,
        mut view,
    } = Session::open(output, &file_outputs, live.taps(), true)?;
    let runs = StudyRuns {
        store: &store,
        cancel: &cancel,
        id: &id,
        labels,
        threads: output.threads,
    };
    let mut exec = runs.executor(segments, &mut view, stored.dir());
    let mut printer = StudyLines {
        out: super::output::progress_out(quiet),
        id: id.clone(),
        dir: stored.dir().to_path_buf(),
    };
    let mut tee;
    let progress: &mut dyn StudyObserver = match live.dashboard() {
        Some(d) => {
            tee = StudyTee::new(&mut printer, d, &id);
            &mut tee
        }
        None => &mut printer,
    };
    let end = study::run_stored(
        &store,
        &plan,
        stored,
        output.json.as_deref(),
        output.allow_saturated,
        exec.as_mut(),
        progress,
    );
    let outcome = end.outcome();
    let study_json = end.file;
    if let Some(e) = end.failure {
        if !quiet {
            eprintln!(
                "study stopped; the runs made so far are in {} (resume with `loadlab study {} --resume {id}`)",
                study_json.display(),
                file.display(),
            );
        }
        return Err(e.into());
    }
    let report = report_for(&study_json);
    if let Some(r) = &report {
        live.report_written(r);
    }
    if !quiet {
        print_end(
            &end.study,
            end.stopped,
            &study_json,
            file,
            report.as_deref(),
        );
        super::output::print_outputs(&outputs);
    }
    Ok((outcome, study_json))
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
