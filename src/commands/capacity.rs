//! `loadlab capacity FILE [--resume ID]`: the largest arrival rate meeting the scenario's SLO.
//! The search (bracket, bisection, confirmation, re-runs, resumption) is
//! `loadlab_orchestrate::capacity`; this command resolves flags, supplies the runs and prints.

use super::output::{report_for, warn, Stored};
use super::session::Session;
use crate::cli::CapacityArgs;
use crate::exit::{CliError, Outcome};
use loadlab_analysis::capacity::CapacityResult;
use loadlab_orchestrate::capacity::CapacityObserver;
use loadlab_pipeline::capacity;
use loadlab_pipeline::executor::EngineExecutor;
use loadlab_pipeline::live_progress::CapacityTee;
use loadlab_pipeline::live_session::{Live, Steerable};
use loadlab_report::progress_terminal::{finding_line, starting_words, StepLines};
use loadlab_scenario::study::{CapacitySpec, StudyDocument};
use loadlab_scenario::ScenarioError;
use loadlab_store::StudyKind;
use std::io::Write;
use std::path::Path;

/// The flags, as the settings of a `capacity:` section that override the file's.
fn overrides(args: &CapacityArgs) -> Result<CapacitySpec, CliError> {
    Ok(CapacitySpec {
        start: args.start,
        hold: args.hold,
        warmup: args.warmup,
        precision: args.precision,
        confirm: args.confirm,
        max: args.max,
        max_errors: args.max_errors,
    })
}

pub fn execute(args: CapacityArgs) -> Result<Outcome, CliError> {
    let live = super::live::start(&args.live, args.output.quiet, Steerable::No)?;
    let outcome = search(&args, &live);
    super::live::finish(&live, &outcome);
    outcome
}

fn search(args: &CapacityArgs, live: &Live) -> Result<Outcome, CliError> {
    let doc = StudyDocument::read(&args.file)?;
    let spec = doc.capacity()?;
    let mut base = doc.scenario()?;
    args.monitor.apply(&mut base);
    if let Some(t) = &args.target {
        base.set_target(t)
            .map_err(|m| ScenarioError::flag("--target", m, None))?;
    }
    let cooldown = args.cooldown;
    let name = base.name.clone();
    let file_outputs = base.outputs.clone();
    let plan = capacity::plan(base, doc.file(), &spec, &overrides(args)?, cooldown)?;
    let output = &args.output;
    let quiet = output.quiet;
    let store = loadlab_pipeline::store::open_for_runs(output.results.as_deref(), &mut warn)?;
    let labels = output.resolved_labels()?;
    let stored =
        capacity::begin_or_resume(&store, &plan, args.resume.as_deref(), &args.file, &labels)?;
    if !quiet {
        eprintln!("{}", starting_words(&plan, &stored.id, stored.prior.len()));
    }
    let id = stored.id.clone();
    // One line per step says more than a progress bar over a single step.
    let Session {
        cancel,
        outputs,
        mut view,
    } = Session::open(output, &file_outputs, live.taps(), false)?;
    let mut exec = EngineExecutor::new(
        &store,
        &cancel,
        output.threads,
        &mut view,
        StudyKind::Capacity,
        &id,
    )
    .with_labels(labels);
    let mut printer = StepLines::new(super::output::progress_out(quiet), &plan);
    let mut tee;
    let progress: &mut dyn CapacityObserver = match live.dashboard() {
        Some(d) => {
            tee = CapacityTee::new(&mut printer, d, &id, &name);
            &mut tee
        }
        None => &mut printer,
    };
    let end = capacity::run_stored(
        &store,
        &plan,
        stored,
        &args.file,
        output.json.as_deref(),
        output.allow_saturated,
        &mut exec,
        progress,
    );
    if let Some(e) = end.failure {
        return Err(e.into());
    }
    let report = report_for(&end.file);
    if let Some(r) = &report {
        live.report_written(r);
    }
    if !quiet {
        print_end(&end.result, &end.file, &args.file, report.as_deref());
        super::output::print_outputs(&outputs);
    }
    Ok(end.outcome())
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
