//! A capacity search in the run store: its settings (flags over the file's `capacity:`
//! section over the defaults), begun or resumed, run by `loadlab_orchestrate::capacity` with
//! any executor, saved after every step, and judged. Progress goes to the caller's observer.

use crate::{Outcome, PipelineError};
use loadlab_analysis::capacity::{CapacityResult, CapacitySettings, CapacityStep, Phase};
use loadlab_orchestrate::capacity::{run_capacity, CapacityObserver, CapacityPlan, CapacityStop};
use loadlab_orchestrate::{ExecutedRun, Executor};
use loadlab_scenario::study::CapacitySpec;
use loadlab_scenario::Scenario;
use loadlab_store::{Labels, Store, StudyKind};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The search for `base`: the command line's settings (`flags`, the same fields as the
/// section) over the file's `capacity:` section over the defaults (start 50/s, hold 30 s,
/// warm-up 5 s, precision 5%, 3 confirmations, max 1,000,000/s, errors ≤ 1%, no cooldown).
pub fn plan(
    base: Scenario,
    scenario_file: &str,
    spec: &CapacitySpec,
    flags: &CapacitySpec,
    cooldown: Option<Duration>,
) -> Result<CapacityPlan, PipelineError> {
    let settings = CapacitySettings {
        start: flags.start.or(spec.start).unwrap_or(50.0),
        hold_s: flags
            .hold
            .or(spec.hold)
            .unwrap_or(Duration::from_secs(30))
            .as_secs_f64(),
        warmup_s: flags
            .warmup
            .or(spec.warmup)
            .unwrap_or(Duration::from_secs(5))
            .as_secs_f64(),
        precision: flags.precision.or(spec.precision).unwrap_or(0.05),
        confirm: flags.confirm.or(spec.confirm).unwrap_or(3),
        max: flags.max.or(spec.max).unwrap_or(1_000_000.0),
    };
    for (name, value) in [
        ("start", settings.start),
        ("hold", settings.hold_s),
        ("precision", settings.precision),
    ] {
        if value <= 0.0 || !value.is_finite() {
            return Err(PipelineError::bad_input(format!(
                "capacity: {name} must be above zero (--{name} or `capacity.{name}` in the file)"
            )));
        }
    }
    Ok(CapacityPlan {
        name: base.name.clone(),
        scenario_file: Some(scenario_file.to_string()),
        base,
        settings,
        max_errors: flags.max_errors.or(spec.max_errors).unwrap_or(0.01),
        cooldown: cooldown.unwrap_or(Duration::ZERO),
    })
}

/// A search ready to run in the store: new, or resumed with the steps it already made.
pub struct StoredSearch {
    pub id: String,
    /// Its `capacity.json`.
    pub file: PathBuf,
    pub started_at: String,
    pub prior: Vec<CapacityStep>,
}

/// Indexes a new search of `plan` with its `labels`, or takes up the interrupted search
/// `resume` (same plan).
pub fn begin_or_resume(
    store: &Store,
    plan: &CapacityPlan,
    resume: Option<&str>,
    scenario_file: &Path,
    labels: &Labels,
) -> Result<StoredSearch, PipelineError> {
    if let Some(id) = resume {
        return resumed(store, id, plan, scenario_file);
    }
    let (id, _) = store.begin_study(
        StudyKind::Capacity,
        &plan.name,
        plan.scenario_file.as_deref(),
        Some(&plan.fingerprint()),
    )?;
    store.set_labels(&id, labels)?;
    Ok(StoredSearch {
        file: store.study_file(StudyKind::Capacity, &id),
        id,
        started_at: loadlab_metrics::result::rfc3339(std::time::SystemTime::now()),
        prior: Vec::new(),
    })
}

/// How a stored search ended.
pub struct SearchEnd {
    /// The search as last saved (`interrupted` when it stopped).
    pub result: CapacityResult,
    pub file: PathBuf,
    /// Why it could not go on, when something other than a signal stopped it.
    pub failure: Option<PipelineError>,
}

impl SearchEnd {
    pub fn outcome(&self) -> Outcome {
        if self.result.interrupted {
            Outcome::Invalid
        } else if self.result.max_rate.is_some() {
            Outcome::Ok
        } else {
            Outcome::ThresholdsFailed
        }
    }
}

/// Runs what remains of the search, saving it after every step; `json` also gets a copy.
/// `scenario_file` is named in the advice when a step cannot be measured.
#[allow(clippy::too_many_arguments)]
pub fn run_stored<E>(
    store: &Store,
    plan: &CapacityPlan,
    stored: StoredSearch,
    scenario_file: &Path,
    json: Option<&Path>,
    allow_saturated: bool,
    executor: &mut E,
    progress: &mut dyn CapacityObserver,
) -> SearchEnd
where
    E: Executor<Error = PipelineError>,
{
    let StoredSearch {
        id,
        file,
        started_at,
        prior,
    } = stored;
    let mut saving = SavingSearch {
        store,
        id: &id,
        path: &file,
        json,
        progress,
    };
    let outcome = run_capacity(
        plan,
        &id,
        &started_at,
        prior,
        allow_saturated,
        executor,
        &mut saving,
    );
    let result = outcome.result;
    let _ = store.finish_study(&id, &file, result.interrupted);
    let failure = outcome.stop.and_then(|s| match s {
        CapacityStop::Cancelled => None,
        CapacityStop::Executor(e) => Some(e),
        CapacityStop::Journal(m) => Some(PipelineError::aborted(format!(
            "the capacity search could not be saved: {m}"
        ))),
        CapacityStop::Untrustworthy {
            rate,
            attempts,
            reasons,
        } => Some(PipelineError::aborted(format!(
            "capacity search {id} stopped: the step at {}/s was not a valid measurement in {attempts} attempts, so no answer about the target can be given ({}); free the machine (or run the generator elsewhere) and resume with `loadlab capacity {} --resume {id}`, or accept such runs with --allow-saturated",
            loadlab_report::words::plain_number(rate),
            reasons.join("; "),
            scenario_file.display(),
        ))),
    });
    SearchEnd {
        result,
        file,
        failure,
    }
}

/// The search to resume and its steps: it must be the same plan.
fn resumed(
    store: &Store,
    id: &str,
    plan: &CapacityPlan,
    file: &Path,
) -> Result<StoredSearch, PipelineError> {
    let record = store.study(id)?;
    if record.kind != StudyKind::Capacity {
        return Err(PipelineError::bad_input(format!(
            "`{id}` is a study, not a capacity search: resume it with `loadlab study FILE --resume {id}`"
        )));
    }
    let path = store.study_file(StudyKind::Capacity, &record.id);
    let text = std::fs::read_to_string(&path).map_err(|_| {
        PipelineError::bad_input(format!(
            "capacity search {} made no step before it stopped: start it again without --resume",
            record.id
        ))
    })?;
    let previous: CapacityResult = serde_json::from_str(&text).map_err(|e| {
        PipelineError::bad_input(format!("{}: not a capacity search: {e}", path.display()))
    })?;
    if previous.plan_hash.as_deref() != Some(plan.fingerprint().as_str()) {
        return Err(PipelineError::bad_input(format!(
            "{} or the search settings changed since capacity search {} was started: resume it with the same file and flags, or start a new search",
            file.display(),
            record.id
        )));
    }
    if !previous.interrupted {
        return Err(PipelineError::bad_input(format!(
            "capacity search {} is complete: nothing to resume",
            record.id
        )));
    }
    store.resume_study(&record.id)?;
    Ok(StoredSearch {
        id: record.id,
        file: path,
        started_at: previous.started_at,
        prior: previous.steps,
    })
}

/// Saves the search after every step and hands every progress event on.
struct SavingSearch<'a> {
    store: &'a Store,
    id: &'a str,
    path: &'a Path,
    json: Option<&'a Path>,
    progress: &'a mut dyn CapacityObserver,
}

impl CapacityObserver for SavingSearch<'_> {
    fn steps_ahead(&mut self, steps_left: Option<usize>) {
        self.progress.steps_ahead(steps_left);
    }

    fn step_starting(&mut self, number: usize, phase: Phase, rate: f64) {
        self.progress.step_starting(number, phase, rate);
    }

    fn step_finished(&mut self, step: &CapacityStep, run: &ExecutedRun) {
        self.progress.step_finished(step, run);
    }

    fn save(&mut self, result: &CapacityResult) -> Result<(), String> {
        let text = serde_json::to_string_pretty(result).expect("serializes") + "\n";
        crate::reports::write_result(self.path, &text)?;
        let _ = self
            .store
            .update_study(self.id, self.path, result.steps.len(), 0);
        crate::reports::write_json_copy(self.json, &text)
    }
}
