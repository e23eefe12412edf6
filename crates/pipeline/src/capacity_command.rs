//! A capacity search run from its scenario file, as `loadlab capacity` runs it: the plan from
//! the file's `capacity:` section and the flags over it, the store, one session for its steps,
//! a line per step and the dashboard's view, and the report beside `capacity.json`. The
//! caller prints the end.

use crate::capacity::{self, SearchEnd};
use crate::executor::EngineExecutor;
use crate::live_progress::CapacityTee;
use crate::live_session::Live;
use crate::session::{Done, Session, Settings};
use crate::PipelineError;
use loadlab_orchestrate::capacity::CapacityObserver;
use loadlab_report::progress_terminal::{starting_words, StepLines};
use loadlab_scenario::study::{CapacitySpec, StudyDocument};
use loadlab_scenario::{MonitorFlag, ScenarioError};
use loadlab_store::StudyKind;
use std::io::Write;
use std::path::Path;
use std::time::Duration;

/// Which search: its file and the flags over the file's `capacity:` section.
pub struct CapacityFile<'a> {
    pub file: &'a Path,
    /// The flags, as the settings of a `capacity:` section that override the file's.
    pub overrides: CapacitySpec,
    /// `--target`.
    pub target: Option<&'a str>,
    /// `--monitor`.
    pub monitor: &'a [MonitorFlag],
    /// `--cooldown`.
    pub cooldown: Option<Duration>,
    /// `--resume ID`.
    pub resume: Option<&'a str>,
}

/// A search that ran (or stopped), with its outputs and report.
pub type CapacityDone = Done<SearchEnd>;

/// Runs (or resumes) the capacity search of a scenario file. `progress` receives the first
/// words and a line per step (a sink when quiet); `warn` hears of a report not written. A
/// failure that stopped the search is in [`SearchEnd::failure`].
pub fn run_capacity_file(
    search: CapacityFile<'_>,
    settings: &Settings,
    live: &Live,
    mut progress: Box<dyn Write>,
    warn: &mut dyn FnMut(&str),
) -> Result<CapacityDone, PipelineError> {
    let doc = StudyDocument::read(search.file)?;
    let spec = doc.capacity()?;
    let mut base = doc.scenario()?;
    for flag in search.monitor {
        base.monitor.apply_flag(flag.clone());
    }
    if let Some(t) = search.target {
        base.set_target(t)
            .map_err(|m| ScenarioError::flag("--target", m, None))?;
    }
    let name = base.name.clone();
    let file_outputs = base.outputs.clone();
    let plan = capacity::plan(base, doc.file(), &spec, &search.overrides, search.cooldown)?;
    let store = crate::store::open_for_runs(settings.results.as_deref(), warn)?;
    let stored =
        capacity::begin_or_resume(&store, &plan, search.resume, search.file, &settings.labels)?;
    let _ = writeln!(
        progress,
        "{}",
        starting_words(&plan, &stored.id, stored.prior.len())
    );
    let id = stored.id.clone();
    // One line per step says more than a progress bar over a single step.
    let Session {
        cancel,
        outputs,
        mut view,
    } = Session::open(settings, &file_outputs, live.taps(), false)?;
    let mut exec = EngineExecutor::new(
        &store,
        &cancel,
        settings.threads,
        &mut view,
        StudyKind::Capacity,
        &id,
    )
    .with_labels(settings.labels.clone());
    let mut printer = StepLines::new(progress, &plan);
    let mut tee;
    let observer: &mut dyn CapacityObserver = match live.dashboard() {
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
        search.file,
        settings.json.as_deref(),
        settings.allow_saturated,
        &mut exec,
        observer,
    );
    let failed = end.failure.is_some();
    let file = end.file.clone();
    Ok(Done::reported(end, outputs, (&file, failed), live, warn))
}
