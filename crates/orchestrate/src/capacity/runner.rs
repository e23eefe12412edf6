//! Running a capacity search: ask the search for a rate, run the scenario at it, judge the
//! step, re-run a step the generator spoiled, save after every step; given the steps of an
//! interrupted search, replay them and go on where it stopped.

use super::step::{judge_step, MAX_STEP_RETRIES};
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
    let mut search = Search::new(&plan.settings);
    let mut retries = 0;
    for step in &prior {
        replay(&mut search, &mut retries, step);
    }
    let mut steps = prior;
    let mut stop = None;
    let mut answer = None;
    while steps.len() < MAX_STEPS {
        let (rate, phase) = match search.next() {
            Next::Done(a) => {
                answer = a;
                break;
            }
            Next::Run { rate, phase } => (rate, phase),
        };
        if exec.cancelled() {
            stop = Some(CapacityStop::Cancelled);
            break;
        }
        observer.steps_ahead(search.steps_left());
        observer.step_starting(steps.len() + 1, phase, rate);
        let scenario = plan.step_scenario(rate);
        let request = RunRequest {
            scenario: &scenario,
            label: format!("rate={}", fmt_value(rate)),
            position: steps.len() + 1,
            total: 0,
            attempt: retries,
        };
        let run = match exec.execute(&request) {
            Ok(run) => run,
            Err(e) => {
                stop = Some(CapacityStop::Executor(e));
                break;
            }
        };
        let judged = judge_step(&run.result, rate, plan.max_errors, allow_saturated);
        let r = &run.result;
        let step = CapacityStep {
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
        };
        observer.step_finished(&step, &run);
        if judged.interrupted {
            steps.push(CapacityStep {
                retried: true,
                ..step
            });
            stop = Some(CapacityStop::Cancelled);
            break;
        }
        if judged.untrustworthy && retries >= MAX_STEP_RETRIES {
            // Counting it as failed would walk the search down to rates the target never
            // failed at; a busy host is no answer about the target.
            steps.push(CapacityStep {
                retried: true,
                ..step
            });
            stop = Some(CapacityStop::Untrustworthy {
                rate,
                attempts: retries + 1,
                reasons: judged.reasons,
            });
            break;
        }
        replay(&mut search, &mut retries, &step);
        steps.push(step);
        let partial = assemble(plan, id, started_at, &steps, &search, None, true);
        if let Err(e) = observer.save(&partial) {
            stop = Some(CapacityStop::Journal(e));
            break;
        }
        if !plan.cooldown.is_zero() {
            exec.pause(plan.cooldown);
        }
    }
    let result = assemble(
        plan,
        id,
        started_at,
        &steps,
        &search,
        answer,
        stop.is_some(),
    );
    if let Err(e) = observer.save(&result) {
        stop.get_or_insert(CapacityStop::Journal(e));
    }
    CapacityOutcome { result, stop }
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
    let retried = steps.iter().filter(|s| s.retried).count();
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
