//! Running a capacity search: ask the search for a rate, run the scenario at it, judge the
//! step, re-run a step the generator spoiled, save after every step; given the steps of an
//! interrupted search, replay them and go on where it stopped.

use super::step::{judge_step, StepJudgement, MAX_STEP_RETRIES};
use crate::executor::{ExecutedRun, Executor, RunRequest};
use crate::study::fmt_value;
use loadlab_analysis::capacity::{
    CapacityResult, CapacitySettings, CapacityStep, Next, Phase, Search, CAPACITY_SCHEMA,
    MIN_ACHIEVED,
};
use loadlab_scenario::study::constant_rate;
use loadlab_scenario::Scenario;
use sha2::{Digest, Sha256};
use std::time::Duration;

/// A resolved capacity search.
#[derive(Debug, Clone)]
pub struct CapacityPlan {
    pub name: String,
    pub scenario_file: Option<String>,
    pub base: Scenario,
    pub settings: CapacitySettings,
    /// Highest error rate a passing step may have.
    pub max_errors: f64,
    pub cooldown: Duration,
}

impl CapacityPlan {
    /// One step's wall time: warm-up, hold and the cooldown after it.
    pub fn step_time(&self) -> Duration {
        Duration::from_secs_f64(self.settings.warmup_s + self.settings.hold_s) + self.cooldown
    }

    /// The bisections the search makes to reach its precision once a step has failed.
    pub fn bisections(&self) -> usize {
        (1.0 / self.settings.precision).log2().ceil().max(1.0) as usize
    }

    /// What every step must meet, in words.
    pub fn slo(&self) -> Vec<String> {
        let mut slo: Vec<String> = self
            .base
            .thresholds
            .iter()
            .map(|t| t.expr.clone())
            .collect();
        slo.push(format!("errors ≤ {:.2}%", self.max_errors * 100.0));
        slo.push(format!(
            "achieved ≥ {:.0}% of offered rate",
            MIN_ACHIEVED * 100.0
        ));
        slo.push("a valid measurement (generator and host healthy)".into());
        slo
    }

    /// The scenario of a step: a constant rate, warm-up then hold.
    pub fn step_scenario(&self, rate: f64) -> Scenario {
        let mut scenario = self.base.clone();
        let warmup = Duration::from_secs_f64(self.settings.warmup_s);
        constant_rate(
            &mut scenario,
            rate,
            warmup + Duration::from_secs_f64(self.settings.hold_s),
        );
        scenario.warmup = warmup;
        scenario
    }

    /// Fingerprint of the scenario and the search settings (`--resume` checks it).
    pub fn fingerprint(&self) -> String {
        let mut h = Sha256::new();
        h.update(self.base.fingerprint().as_bytes());
        h.update(
            format!(
                "{:?}|{}|{:?}",
                self.settings, self.max_errors, self.cooldown
            )
            .as_bytes(),
        );
        h.finalize().iter().map(|b| format!("{b:02x}")).collect()
    }
}

/// What a capacity search tells whoever runs it.
pub trait CapacityObserver {
    /// Before each step: how many steps the search still expects to run, this one included
    /// (`None` while the bracket is open and that cannot be known).
    fn steps_ahead(&mut self, _steps_left: Option<usize>) {}
    fn step_starting(&mut self, _number: usize, _phase: Phase, _rate: f64) {}
    fn step_finished(&mut self, _step: &CapacityStep, _run: &ExecutedRun) {}
    /// The search as it stands, after every step and at the end (an observer that only
    /// shows progress keeps nothing).
    fn save(&mut self, _result: &CapacityResult) -> Result<(), String> {
        Ok(())
    }
}

#[derive(Debug)]
pub enum CapacityStop<E> {
    Cancelled,
    Executor(E),
    Journal(String),
    /// A step was no valid measurement in every attempt (the generator or its host, not
    /// the target): the search cannot go on honestly, so it stops and says why.
    Untrustworthy {
        rate: f64,
        attempts: usize,
        reasons: Vec<String>,
    },
}

pub struct CapacityOutcome<E> {
    pub result: CapacityResult,
    pub stop: Option<CapacityStop<E>>,
}

/// Bound on steps, whatever the search does.
const MAX_STEPS: usize = 200;

/// Runs (or, with `prior` steps, resumes) the search.
pub fn run_capacity<E: Executor, O: CapacityObserver>(
    plan: &CapacityPlan,
    id: &str,
    started_at: &str,
    prior: Vec<CapacityStep>,
    allow_saturated: bool,
    exec: &mut E,
    observer: &mut O,
) -> CapacityOutcome<E::Error> {
    let capacity = Capacity {
        plan,
        id,
        started_at,
        allow_saturated,
    };
    let mut progress = Progress::resume(&plan.settings, prior);
    let mut stop = None;
    let mut answer = None;
    while progress.steps.len() < MAX_STEPS {
        match capacity.turn(&mut progress, exec, observer) {
            Turn::Next => {}
            Turn::Done(a) => {
                answer = a;
                break;
            }
            Turn::Stop(s) => {
                stop = Some(s);
                break;
            }
        }
    }
    capacity.finish(&progress, answer, stop, observer)
}

/// What a search runs for: the plan, the search's id and start, and whether a saturated
/// generator may pass a step.
struct Capacity<'a> {
    plan: &'a CapacityPlan,
    id: &'a str,
    started_at: &'a str,
    allow_saturated: bool,
}

/// Where a search stands: the search, its steps so far and how often the current rate was
/// run again.
struct Progress {
    search: Search,
    steps: Vec<CapacityStep>,
    retries: usize,
}

/// How one turn of the search ended.
enum Turn<E> {
    /// A step was run, recorded and saved: the search goes on.
    Next,
    /// The search is over, with its answer (`None`: no rate met the SLO).
    Done(Option<f64>),
    Stop(CapacityStop<E>),
}

impl Progress {
    /// A new search, or an interrupted one with its `prior` steps replayed.
    fn resume(settings: &CapacitySettings, prior: Vec<CapacityStep>) -> Self {
        let mut search = Search::new(settings);
        let mut retries = 0;
        for step in &prior {
            replay(&mut search, &mut retries, step);
        }
        Progress {
            search,
            steps: prior,
            retries,
        }
    }

    fn record(&mut self, step: CapacityStep) {
        replay(&mut self.search, &mut self.retries, &step);
        self.steps.push(step);
    }
}

impl Capacity<'_> {
    /// Asks the search for a rate, runs and judges a step at it, records and saves it.
    fn turn<E: Executor, O: CapacityObserver>(
        &self,
        progress: &mut Progress,
        exec: &mut E,
        observer: &mut O,
    ) -> Turn<E::Error> {
        let (rate, phase) = match progress.search.next() {
            Next::Done(a) => return Turn::Done(a),
            Next::Run { rate, phase } => (rate, phase),
        };
        if exec.cancelled() {
            return Turn::Stop(CapacityStop::Cancelled);
        }
        observer.steps_ahead(progress.search.steps_left());
        let number = progress.steps.len() + 1;
        observer.step_starting(number, phase, rate);
        let run = match self.execute(rate, number, progress.retries, exec) {
            Ok(run) => run,
            Err(e) => return Turn::Stop(CapacityStop::Executor(e)),
        };
        let judged = judge_step(
            &run.result,
            rate,
            self.plan.max_errors,
            self.allow_saturated,
        );
        let step = step_of(rate, phase, &run, &judged, progress.retries);
        observer.step_finished(&step, &run);
        if let Some(stop) = cut_short(rate, &judged, progress.retries) {
            progress.steps.push(CapacityStep {
                retried: true,
                ..step
            });
            return Turn::Stop(stop);
        }
        // A step the host disturbed is run again once the host has had time to settle.
        let settle = if step.retried {
            crate::usable::settle_before_retry(&run.result, progress.retries + 1)
        } else {
            std::time::Duration::ZERO
        };
        progress.record(step);
        let partial = self.assemble(progress, None, true);
        if let Err(e) = observer.save(&partial) {
            return Turn::Stop(CapacityStop::Journal(e));
        }
        let pause = self.plan.cooldown.max(settle);
        if !pause.is_zero() {
            exec.pause(pause);
        }
        Turn::Next
    }

    /// Runs the scenario at `rate` (the `number`th step, its `attempt`th retry).
    fn execute<E: Executor>(
        &self,
        rate: f64,
        number: usize,
        attempt: usize,
        exec: &mut E,
    ) -> Result<ExecutedRun, E::Error> {
        let scenario = self.plan.step_scenario(rate);
        exec.execute(&RunRequest {
            scenario: &scenario,
            label: format!("rate={}", fmt_value(rate)),
            variant: None,
            position: number,
            total: 0,
            attempt,
        })
    }

    /// The search's result at its end, saved once more.
    fn finish<E, O: CapacityObserver>(
        &self,
        progress: &Progress,
        answer: Option<f64>,
        mut stop: Option<CapacityStop<E>>,
        observer: &mut O,
    ) -> CapacityOutcome<E> {
        let result = self.assemble(progress, answer, stop.is_some());
        if let Err(e) = observer.save(&result) {
            stop.get_or_insert(CapacityStop::Journal(e));
        }
        CapacityOutcome { result, stop }
    }

    fn assemble(
        &self,
        progress: &Progress,
        answer: Option<f64>,
        interrupted: bool,
    ) -> CapacityResult {
        assemble(
            self.plan,
            self.id,
            self.started_at,
            &progress.steps,
            &progress.search,
            answer,
            interrupted,
        )
    }
}

/// A step as the result records it; it is marked retried when it was no valid measurement
/// and may still be run again.
fn step_of(
    rate: f64,
    phase: Phase,
    run: &ExecutedRun,
    judged: &StepJudgement,
    retries: usize,
) -> CapacityStep {
    let r = &run.result;
    CapacityStep {
        rate,
        passed: judged.passed,
        run: run.id.clone(),
        phase: phase.as_str().to_string(),
        achieved_rate: r.requests.rate,
        p95_ms: r.latency_ms.p95,
        error_rate: if r.requests.total > 0 {
            r.requests.failed as f64 / r.requests.total as f64
        } else {
            0.0
        },
        reasons: judged.reasons.clone(),
        retried: judged.untrustworthy && retries < MAX_STEP_RETRIES,
        interrupted: judged.interrupted,
    }
}

/// Why the search stops at a step instead of recording it: the step was interrupted, or it
/// was no valid measurement in every attempt. Counting the latter as failed would walk the
/// search down to rates the target never failed at; a busy host is no answer about the
/// target.
fn cut_short<E>(rate: f64, judged: &StepJudgement, retries: usize) -> Option<CapacityStop<E>> {
    if judged.interrupted {
        Some(CapacityStop::Cancelled)
    } else if judged.untrustworthy && retries >= MAX_STEP_RETRIES {
        Some(CapacityStop::Untrustworthy {
            rate,
            attempts: retries + 1,
            reasons: judged.reasons.clone(),
        })
    } else {
        None
    }
}

/// Feeds a finished step to the search (a retried step does not count).
fn replay(search: &mut Search, retries: &mut usize, step: &CapacityStep) {
    if step.retried {
        *retries += 1;
    } else {
        *retries = 0;
        search.record(step.passed);
    }
}

fn assemble(
    plan: &CapacityPlan,
    id: &str,
    started_at: &str,
    steps: &[CapacityStep],
    search: &Search,
    answer: Option<f64>,
    interrupted: bool,
) -> CapacityResult {
    let highest_passed = steps
        .iter()
        .filter(|s| s.passed && !s.retried)
        .map(|s| s.rate)
        .fold(None, |m: Option<f64>, r| Some(m.map_or(r, |m| m.max(r))));
    let mut warnings = Vec::new();
    // An interrupted search says what it found through `CapacityResult::finding`, which
    // every output renders; it is not repeated as a warning.
    if !interrupted && answer.is_some_and(|a| a >= plan.settings.max) {
        warnings.push(format!(
            "the search reached its maximum rate ({}/s): the capacity may be higher (raise --max)",
            fmt_value(plan.settings.max)
        ));
    } else if !interrupted && answer.is_none() {
        warnings.push("no rate met the SLO, down to the lowest rate tried".into());
    }
    let retried = steps.iter().filter(|s| s.retried && !s.interrupted).count();
    if retried > 0 {
        warnings.push(format!(
            "{retried} step(s) were not valid measurements (generator or host trouble, not the target) and were run again"
        ));
    }
    CapacityResult {
        schema: CAPACITY_SCHEMA.into(),
        tool_version: env!("CARGO_PKG_VERSION").into(),
        id: id.to_string(),
        name: plan.name.clone(),
        scenario_file: plan.scenario_file.clone(),
        started_at: started_at.to_string(),
        finished_at: loadlab_metrics::result::rfc3339(std::time::SystemTime::now()),
        slo: plan.slo(),
        settings: plan.settings.clone(),
        max_rate: if interrupted { None } else { answer },
        bracket: [search.lo, search.hi],
        steps: steps.to_vec(),
        interrupted,
        warnings,
        highest_passed,
        plan_hash: Some(plan.fingerprint()),
    }
}
