//! A study run from its scenario file, as `loadlab study` and `loadlab demo` run it: the store
//! opened, the study begun or resumed, one session for its runs (in this process, or each
//! round as segment processes), its progress as lines and on the dashboard, and its report
//! written beside `study.json`. The caller prints the end.

use crate::live_progress::StudyTee;
use crate::live_session::Live;
use crate::segmented::SegmentCommand;
use crate::session::{Done, Session, Settings};
use crate::study::{self, PlanOverrides, StudyEnd, StudyRuns};
use crate::PipelineError;
use loadlab_analysis::study::MIN_RUNS_FOR_COMPARISON;
use loadlab_orchestrate::study::StudyObserver;
use loadlab_report::progress_terminal::StudyLines;
use std::io::Write;
use std::path::Path;

/// Which study: its file, the flags over it, and the stored study to take up.
pub struct StudyFile<'a> {
    pub file: &'a Path,
    pub overrides: &'a PlanOverrides,
    /// `--resume ID`.
    pub resume: Option<&'a str>,
}

/// A study that ran (or stopped), with its outputs and report.
pub type StudyDone = Done<StudyEnd>;

/// Runs (or resumes) the `study:` section of a scenario file. `progress` receives a line per
/// run (a sink when quiet); `warn` hears what the study cannot do as asked (too few runs to
/// compare, a report not written). A failure that stopped the study is in
/// [`StudyEnd::failure`], with what was saved before it.
pub fn run_study_file(
    study: StudyFile<'_>,
    settings: &Settings,
    live: &Live,
    progress: Box<dyn Write>,
    warn: &mut dyn FnMut(&str),
) -> Result<StudyDone, PipelineError> {
    let plan = study::plan_of_file(study.file, study.overrides)?;
    let segments = segment_command(study.file, study.overrides, settings.threads)?;
    if !settings.quiet && plan.variants.len() > 1 && plan.repeat < MIN_RUNS_FOR_COMPARISON {
        warn(&format!(
            "{} runs per variant: comparisons need at least {MIN_RUNS_FOR_COMPARISON} (10 recommended), so none is made",
            plan.repeat
        ));
    }
    let store = crate::store::open_for_runs(settings.results.as_deref(), warn)?;
    let stored = study::begin_or_resume(
        &store,
        &plan,
        study.resume,
        study.file,
        &settings.labels,
        warn,
    )?;
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
    } = Session::open(settings, &file_outputs, live.taps(), true)?;
    let runs = StudyRuns {
        store: &store,
        cancel: &cancel,
        id: &id,
        labels: settings.labels.clone(),
        threads: settings.threads,
    };
    let mut exec = runs.executor(segments, &mut view, stored.dir());
    let mut printer = StudyLines {
        out: progress,
        id: id.clone(),
        dir: stored.dir().to_path_buf(),
    };
    let mut tee;
    let observer: &mut dyn StudyObserver = match live.dashboard() {
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
        settings.json.as_deref(),
        settings.allow_saturated,
        exec.as_mut(),
        observer,
    );
    let failed = end.failure.is_some();
    let file = end.file.clone();
    Ok(Done::reported(end, outputs, (&file, failed), live, warn))
}

/// With `--segments N`: each round as N processes of this program.
fn segment_command(
    file: &Path,
    overrides: &PlanOverrides,
    threads: Option<usize>,
) -> Result<Option<SegmentCommand>, PipelineError> {
    let Some(segments) = overrides.segments else {
        return Ok(None);
    };
    Ok(Some(SegmentCommand {
        program: std::env::current_exe().map_err(|e| {
            PipelineError::aborted(format!("cannot find this program to start segments: {e}"))
        })?,
        file: file.to_path_buf(),
        target: overrides.target.clone(),
        threads,
        segments,
    }))
}
