//! A study in the run store: begun (indexed, given a directory) or resumed where it stopped,
//! run by `loadlab_orchestrate::study` with any executor, saved after every run (the index,
//! `study.json` and a `--json` copy), and judged. Progress goes to the caller's observer.

use crate::executor::EngineExecutor;
use crate::measure::RunView;
use crate::segmented::{SegmentCommand, SegmentedExecutor};
use crate::{Outcome, PipelineError};
use loadlab_analysis::study::{StudyResult, MIN_RUNS_FOR_COMPARISON};
use loadlab_engine::Cancel;
use loadlab_orchestrate::study::{
    run_study, Estimate, MadeRun, StudyIds, StudyObserver, StudyPlan, StudyStop,
};
use loadlab_orchestrate::{ExecutedRun, Executor, RunRequest, RunUse};
use loadlab_scenario::study::StudyDocument;
use loadlab_scenario::MonitorFlag;
use loadlab_store::{Labels, Store, StudyKind, StudyStatus};
use std::path::{Path, PathBuf};

/// What the command line changes in a study file's plan.
#[derive(Debug, Clone, Default)]
pub struct PlanOverrides {
    pub target: Option<String>,
    pub repeat: Option<usize>,
    pub retry_invalid: Option<usize>,
    /// Each repetition as a round of this many segment processes.
    pub segments: Option<u32>,
    /// `--monitor` flags, added to every variant's `monitor:` (flags win over the file).
    pub monitor: Vec<MonitorFlag>,
}

/// The plan of a file's `study:` section, with the command line's changes.
pub fn plan_of_file(file: &Path, overrides: &PlanOverrides) -> Result<StudyPlan, PipelineError> {
    if overrides.segments.is_some() && !overrides.monitor.is_empty() {
        return Err(PipelineError::bad_input(
            "--monitor with --segments: each segment is a process of its own; put what to sample in the scenario file's `monitor:` section, which every segment reads",
        ));
    }
    let doc = StudyDocument::read(file)?;
    let mut plan = StudyPlan::from_document(&doc, overrides.target.as_deref(), overrides.repeat)
        .map_err(PipelineError::bad_input)?;
    if let Some(n) = overrides.retry_invalid {
        plan.retry_invalid = n;
    }
    plan.segments = overrides.segments;
    for variant in &mut plan.variants {
        for flag in &overrides.monitor {
            variant.scenario.monitor.apply_flag(flag.clone());
        }
    }
    Ok(plan)
}

/// Where a study's runs are made and stored.
pub struct StudyRuns<'a> {
    pub store: &'a Store,
    pub cancel: &'a Cancel,
    pub id: &'a str,
    pub labels: Labels,
    /// Worker threads per run (`--threads`).
    pub threads: Option<usize>,
}

impl<'a> StudyRuns<'a> {
    /// The runs made in this process by the engine, or with `segments` each as a round of
    /// that command's segment processes, kept under the study's directory `dir`.
    pub fn executor(
        self,
        segments: Option<SegmentCommand>,
        view: &'a mut dyn RunView,
        dir: &Path,
    ) -> Box<dyn Executor<Error = PipelineError> + 'a> {
        match segments {
            None => Box::new(
                EngineExecutor::new(
                    self.store,
                    self.cancel,
                    self.threads,
                    view,
                    StudyKind::Study,
                    self.id,
                )
                .with_labels(self.labels),
            ),
            Some(command) => Box::new(SegmentedExecutor::new(
                self.store,
                self.cancel,
                command,
                self.id,
                dir,
                self.labels,
            )),
        }
    }
}

/// A study ready to run in the store: new, or resumed with the runs it already made.
pub struct StoredStudy {
    pub ids: StudyIds,
    /// Its `study.json`.
    pub file: PathBuf,
    pub prior: Vec<MadeRun>,
}

impl StoredStudy {
    /// The study's directory (its report goes there).
    pub fn dir(&self) -> &Path {
        self.file.parent().unwrap_or(Path::new("."))
    }
}

/// Indexes a new study of `plan` with its `labels`, or takes up the interrupted study
/// `resume` (which must be the same plan: `scenario_file` names the file in the refusal).
pub fn begin_or_resume(
    store: &Store,
    plan: &StudyPlan,
    resume: Option<&str>,
    scenario_file: &Path,
    labels: &Labels,
    warn: &mut dyn FnMut(&str),
) -> Result<StoredStudy, PipelineError> {
    if let Some(id) = resume {
        return resumed(store, id, plan, scenario_file, warn);
    }
    let (id, _) = store.begin_study(
        StudyKind::Study,
        &plan.name,
        plan.scenario_file.as_deref(),
        Some(&plan.fingerprint()),
    )?;
    store.set_labels(&id, labels)?;
    Ok(StoredStudy {
        file: store.study_file(StudyKind::Study, &id),
        ids: StudyIds {
            id,
            started_at: loadlab_metrics::result::rfc3339(std::time::SystemTime::now()),
        },
        prior: Vec::new(),
    })
}

/// How a stored study ended.
pub struct StudyEnd {
    /// The study as last saved (partial when it stopped).
    pub study: StudyResult,
    pub file: PathBuf,
    /// It stopped before its plan was done (a signal, or `failure`).
    pub stopped: bool,
    /// Why it could not go on, when something other than a signal stopped it.
    pub failure: Option<PipelineError>,
}

impl StudyEnd {
    pub fn outcome(&self) -> Outcome {
        outcome_of_study(&self.study, self.stopped)
    }
}

/// Runs what remains of the study, saving it after every run; `json` also receives a copy.
pub fn run_stored<E>(
    store: &Store,
    plan: &StudyPlan,
    stored: StoredStudy,
    json: Option<&Path>,
    allow_saturated: bool,
    executor: &mut E,
    progress: &mut dyn StudyObserver,
) -> StudyEnd
where
    E: Executor<Error = PipelineError> + ?Sized,
{
    let StoredStudy { ids, file, prior } = stored;
    let mut saving = SavingStudy {
        store,
        id: &ids.id,
        path: &file,
        json,
        planned_runs: plan.repeat * plan.variants.len(),
        progress,
    };
    let outcome = run_study(plan, &ids, prior, allow_saturated, executor, &mut saving);
    let stopped = outcome.stop.is_some();
    let _ = store.finish_study(&ids.id, &file, stopped);
    let failure = outcome.stop.and_then(|s| match s {
        StudyStop::Cancelled => None,
        StudyStop::Executor(e) => Some(e),
        StudyStop::Journal(m) => Some(PipelineError::aborted(format!(
            "the study could not be saved: {m}"
        ))),
    });
    StudyEnd {
        study: outcome.study,
        file,
        stopped,
        failure,
    }
}

/// Invalid runs are re-run and excluded; the study itself is invalid only when it stopped
/// early or a variant was left without enough valid runs for what it set out to do.
pub fn outcome_of_study(study: &StudyResult, stopped: bool) -> Outcome {
    let needed = if study.variants.len() > 1 && study.repeat >= MIN_RUNS_FOR_COMPARISON {
        MIN_RUNS_FOR_COMPARISON
    } else {
        1
    };
    if stopped || study.variants.iter().any(|v| v.runs.len() < needed) {
        Outcome::Invalid
    } else if study.variants.iter().any(|v| v.thresholds_failed > 0) {
        Outcome::ThresholdsFailed
    } else {
        Outcome::Ok
    }
}

/// The study to resume and the runs it made: it must be the same plan.
fn resumed(
    store: &Store,
    id: &str,
    plan: &StudyPlan,
    file: &Path,
    warn: &mut dyn FnMut(&str),
) -> Result<StoredStudy, PipelineError> {
    let record = store.study(id)?;
    if record.kind != StudyKind::Study {
        return Err(PipelineError::bad_input(format!(
            "`{id}` is a {} search, not a study: resume it with `loadlab capacity FILE --resume {id}`",
            record.kind
        )));
    }
    if record.status == StudyStatus::Running {
        return Err(PipelineError::bad_input(format!(
            "study {} is still running (process alive): it cannot be resumed twice",
            record.id
        )));
    }
    let path = store.study_file(StudyKind::Study, &record.id);
    let text = std::fs::read_to_string(&path).map_err(|_| {
        PipelineError::bad_input(format!(
            "study {} made no run before it stopped: start it again without --resume",
            record.id
        ))
    })?;
    let previous: StudyResult = serde_json::from_str(&text)
        .map_err(|e| PipelineError::bad_input(format!("{}: not a study: {e}", path.display())))?;
    if previous.plan_hash.as_deref() != Some(plan.fingerprint().as_str()) {
        return Err(PipelineError::bad_input(format!(
            "{} changed since study {} was started (its variants, repetitions or order are not the same): a resumed study must run the same plan; start a new study instead",
            file.display(),
            record.id
        )));
    }
    if !previous.interrupted {
        return Err(PipelineError::bad_input(format!(
            "study {} is complete: nothing to resume (`loadlab report {}` shows it)",
            record.id, record.id
        )));
    }
    let mut prior = Vec::new();
    for entry in previous.run_log {
        let (_, result) = crate::store::load_run(store, &entry.run, warn).map_err(|e| {
            PipelineError::bad_input(format!(
                "study {}: its run {} cannot be read: {e}",
                record.id, entry.run
            ))
        })?;
        prior.push(MadeRun { entry, result });
    }
    store.resume_study(&record.id)?;
    Ok(StoredStudy {
        ids: StudyIds {
            id: record.id,
            started_at: previous.started_at,
        },
        file: path,
        prior,
    })
}

/// Saves the study after every run (`study.json`, the index, the `--json` copy) and hands
/// every progress event on.
struct SavingStudy<'a> {
    store: &'a Store,
    id: &'a str,
    path: &'a Path,
    json: Option<&'a Path>,
    planned_runs: usize,
    progress: &'a mut dyn StudyObserver,
}

impl StudyObserver for SavingStudy<'_> {
    fn starting(&mut self, plan: &StudyPlan, remaining: usize, estimate: Estimate) {
        self.progress.starting(plan, remaining, estimate);
    }

    fn run_starting(&mut self, request: &RunRequest<'_>, remaining: Estimate) {
        self.progress.run_starting(request, remaining);
    }

    fn warmup_finished(&mut self, request: &RunRequest<'_>, run: &ExecutedRun) {
        self.progress.warmup_finished(request, run);
    }

    fn run_finished(
        &mut self,
        request: &RunRequest<'_>,
        run: &ExecutedRun,
        used: RunUse,
        retrying: bool,
    ) {
        self.progress.run_finished(request, run, used, retrying);
    }

    fn save(&mut self, study: &StudyResult) -> Result<(), String> {
        let text = serde_json::to_string_pretty(study).expect("a study serializes") + "\n";
        let done = study.run_log.iter().filter(|e| e.used).count();
        crate::reports::write_result(self.path, &text)?;
        let _ = self
            .store
            .update_study(self.id, self.path, done, self.planned_runs);
        crate::reports::write_json_copy(self.json, &text)
    }
}

/// The CI outputs of a finished study: `summary` (its Markdown) and `junit` (a case per
/// threshold and variant over the variant's runs, read from the store beside the study).
pub fn write_ci_outputs(
    study_file: &Path,
    summary: Option<&Path>,
    junit: Option<&Path>,
) -> Result<(), PipelineError> {
    let study = crate::reports::read_study(study_file)?;
    if let Some(path) = summary {
        let md = loadlab_report::gate_summary::study_markdown(&study);
        crate::reports::write_summary(Some(path), false, &md)?;
    }
    if let Some(path) = junit {
        let results = loadlab_store::results_dir_of(study_file);
        let mut variants = Vec::new();
        for v in &study.variants {
            let runs = v
                .runs
                .iter()
                .map(|id| crate::reports::read_run(&loadlab_store::run_file_in(&results, id)))
                .collect::<Result<Vec<_>, _>>()?;
            variants.push((v.name.clone(), runs));
        }
        let cases = loadlab_report::junit::study_threshold_cases(&variants);
        let xml = loadlab_report::junit::junit_xml(&study.name, "loadlab.study", &cases);
        crate::reports::write_junit(path, &xml)?;
    }
    Ok(())
}
