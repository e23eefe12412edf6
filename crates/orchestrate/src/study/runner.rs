//! Running a study: its planned runs in order, an invalid run re-run (up to
//! `retry_invalid` times, unless a re-run would end the same way) so each variant keeps its
//! planned number of valid runs, the study
//! saved after every run, and — given the runs of an interrupted study — only what is missing.

use super::assemble::{assemble, MadeRun, StudyIds};
use super::plan::StudyPlan;
use crate::executor::{ExecutedRun, Executor, RunRequest};
use crate::usable::{run_problems, settle_before_retry, RunUse};
use loadlab_analysis::study::{RunEntry, StudyResult};
use loadlab_metrics::{InvalidKind, RunResult};
use loadlab_scenario::Scenario;
use std::time::Duration;

/// A time estimate; `upper_bound` when some run ends when its work is done (iterations, a
/// burst) and only its time limit is known.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    pub seconds: f64,
    pub upper_bound: bool,
}

/// What a study tells whoever runs it (the binary prints it; tests record it).
pub trait StudyObserver {
    /// Before the first run: how many runs remain, and how long they should take.
    fn starting(&mut self, _plan: &StudyPlan, _remaining_runs: usize, _estimate: Estimate) {}

    fn run_starting(&mut self, _request: &RunRequest<'_>, _remaining: Estimate) {}

    /// A warm-up run (`study.warmup_runs`) ended: stored, never in the statistics.
    fn warmup_finished(&mut self, _request: &RunRequest<'_>, _run: &ExecutedRun) {}

    /// A run ended; `retrying` when it was invalid and will be run again.
    fn run_finished(
        &mut self,
        _request: &RunRequest<'_>,
        _run: &ExecutedRun,
        _use: RunUse,
        _retrying: bool,
    ) {
    }

    /// The study as it stands, after every run and at the end: keep it (an error stops
    /// the study, keeping what was saved before). An observer that only shows progress
    /// keeps nothing.
    fn save(&mut self, _study: &StudyResult) -> Result<(), String> {
        Ok(())
    }
}

/// Why a study stopped before its plan was done.
#[derive(Debug)]
pub enum StudyStop<E> {
    /// A signal: the executor reported it was cancelled.
    Cancelled,
    /// The executor could not run (target unreachable, storage failure...).
    Executor(E),
    /// The study could not be saved.
    Journal(String),
}

pub struct StudyOutcome<E> {
    /// The study as last saved (partial when `stop` is set).
    pub study: StudyResult,
    pub stop: Option<StudyStop<E>>,
}

/// Runs what remains of `plan`. `prior` holds the runs an interrupted study already made
/// (with `--resume`); a complete resumed study ends as an uninterrupted one would have.
pub fn run_study<E: Executor + ?Sized, O: StudyObserver>(
    plan: &StudyPlan,
    ids: &StudyIds,
    prior: Vec<MadeRun>,
    allow_saturated: bool,
    exec: &mut E,
    observer: &mut O,
) -> StudyOutcome<E::Error> {
    let slots = plan.slots();
    let total = slots.len();
    let mut runs = prior;
    let todo = slots
        .iter()
        .filter(|s| !slot_done(plan, &runs, s.variant, s.rep))
        .count();
    observer.starting(plan, todo, estimate(plan, &runs, &slots, 0));
    let mut stop: Option<StudyStop<E::Error>> = None;
    if todo > 0 {
        stop = warm_up(plan, exec, observer).err();
    }
    'slots: for (k, slot) in slots.iter().enumerate() {
        if stop.is_some() {
            break;
        }
        if slot_done(plan, &runs, slot.variant, slot.rep) {
            continue;
        }
        let variant = &plan.variants[slot.variant];
        let mut attempt = attempts(&runs, &variant.name, slot.rep);
        loop {
            if exec.cancelled() {
                stop = Some(StudyStop::Cancelled);
                break 'slots;
            }
            let request = RunRequest {
                scenario: &variant.scenario,
                label: variant.name.clone(),
                variant: Some(&variant.name),
                position: k + 1,
                total,
                attempt,
            };
            observer.run_starting(&request, estimate(plan, &runs, &slots, k));
            let run = match exec.execute(&request) {
                Ok(run) => run,
                Err(e) => {
                    stop = Some(StudyStop::Executor(e));
                    break 'slots;
                }
            };
            let used = run_problems(&run.result, allow_saturated);
            let retrying = used == RunUse::Retry && attempt < plan.retry_invalid;
            observer.run_finished(&request, &run, used, retrying);
            runs.push(made_run(&variant.name, slot.rep, attempt, run, used));
            if let Err(e) = observer.save(&assemble(plan, ids, &runs, false)) {
                stop = Some(StudyStop::Journal(e));
                break 'slots;
            }
            if used == RunUse::Interrupted {
                stop = Some(StudyStop::Cancelled);
                break 'slots;
            }
            let more = retrying || k + 1 < total;
            let last = &runs[runs.len() - 1].result;
            pause_between_runs(plan, exec, last, more, retrying.then_some(attempt + 1));
            if !retrying {
                break;
            }
            attempt += 1;
        }
    }
    let complete = stop.is_none();
    let study = assemble(plan, ids, &runs, complete);
    if let Err(e) = observer.save(&study) {
        stop.get_or_insert(StudyStop::Journal(e));
    }
    StudyOutcome { study, stop }
}

/// A run as the study keeps it: whether it counts, and the reasons it does not, beside its
/// result.
fn made_run(variant: &str, rep: usize, attempt: usize, run: ExecutedRun, used: RunUse) -> MadeRun {
    MadeRun {
        entry: RunEntry {
            variant: variant.to_string(),
            rep,
            attempt,
            run: run.id.clone(),
            used: used == RunUse::Valid,
            invalid: run.result.validity.reasons.iter().map(|r| r.kind).collect(),
            reasons: run
                .result
                .validity
                .reasons
                .iter()
                .map(|r| r.message.clone())
                .collect(),
        },
        result: run.result,
    }
}

/// The cooldown after a run when another follows; before a retry (`retry`: its attempt) at
/// least as long as the last run's host needs to settle.
fn pause_between_runs<E: Executor + ?Sized>(
    plan: &StudyPlan,
    exec: &mut E,
    last: &RunResult,
    more: bool,
    retry: Option<usize>,
) {
    let settle = retry.map_or(Duration::ZERO, |attempt| settle_before_retry(last, attempt));
    let pause = plan.cooldown.max(settle);
    if more && !pause.is_zero() {
        exec.pause(pause);
    }
}

/// `study.warmup_runs` rounds of every variant before the measured runs — again when a
/// study is resumed, since the target may have gone cold meanwhile. The runs are stored
/// (their label says `warm-up`) and never enter the statistics; an invalid one is not re-run.
fn warm_up<E: Executor + ?Sized, O: StudyObserver>(
    plan: &StudyPlan,
    exec: &mut E,
    observer: &mut O,
) -> Result<(), StudyStop<E::Error>> {
    let total = plan.warmup_runs * plan.variants.len();
    for round in 0..plan.warmup_runs {
        for (i, variant) in plan.variants.iter().enumerate() {
            if exec.cancelled() {
                return Err(StudyStop::Cancelled);
            }
            let request = RunRequest {
                scenario: &variant.scenario,
                label: format!("{} (warm-up)", variant.name),
                variant: Some(&variant.name),
                position: round * plan.variants.len() + i + 1,
                total,
                attempt: 0,
            };
            let run = exec.execute(&request).map_err(StudyStop::Executor)?;
            observer.warmup_finished(&request, &run);
            if run_problems(&run.result, true) == RunUse::Interrupted {
                return Err(StudyStop::Cancelled);
            }
            if !plan.cooldown.is_zero() {
                exec.pause(plan.cooldown);
            }
        }
    }
    Ok(())
}

fn was_interrupted(r: &MadeRun) -> bool {
    r.entry.invalid.contains(&InvalidKind::Interrupted)
}

/// Attempts of a slot that count (an interrupted run is simply run again).
fn attempts(runs: &[MadeRun], variant: &str, rep: usize) -> usize {
    runs.iter()
        .filter(|r| r.entry.variant == variant && r.entry.rep == rep && !was_interrupted(r))
        .count()
}

/// A slot is done when it has a valid run, or has used up its re-runs.
fn slot_done(plan: &StudyPlan, runs: &[MadeRun], variant: usize, rep: usize) -> bool {
    let name = &plan.variants[variant].name;
    runs.iter()
        .any(|r| &r.entry.variant == name && r.entry.rep == rep && r.entry.used)
        || attempts(runs, name, rep) > plan.retry_invalid
}

/// Time left from slot `from` on: each variant's runs so far tell how long its runs take
/// (before its first, the runs of a variant with the same load plan, e.g. the same load
/// against another target); else its plan does — only an upper bound for runs that end when
/// their work is done (iterations, a burst).
fn estimate(
    plan: &StudyPlan,
    runs: &[MadeRun],
    slots: &[super::plan::Slot],
    from: usize,
) -> Estimate {
    let mut seconds = 0.0;
    let mut upper_bound = false;
    let mut remaining = 0usize;
    for slot in &slots[from..] {
        if slot_done(plan, runs, slot.variant, slot.rep) {
            continue;
        }
        remaining += 1;
        let v = &plan.variants[slot.variant];
        let lengths = |same: &dyn Fn(&str) -> bool| -> Vec<f64> {
            runs.iter()
                .filter(|r| same(&r.entry.variant))
                .map(|r| r.result.duration_s + r.result.warmup_s)
                .collect()
        };
        let mut made = lengths(&|name| name == v.name);
        if made.is_empty() {
            let load = v.scenario.plan();
            made = lengths(&|name| {
                plan.variants
                    .iter()
                    .any(|o| o.name == name && o.scenario.plan() == load)
            });
        }
        if made.is_empty() {
            seconds += planned_seconds(&v.scenario);
            upper_bound |= v.scenario.plan().ends_when_done();
        } else {
            seconds += made.iter().sum::<f64>() / made.len() as f64;
        }
    }
    seconds += plan.cooldown.as_secs_f64() * remaining.saturating_sub(1) as f64;
    Estimate {
        seconds,
        upper_bound,
    }
}

fn planned_seconds(s: &Scenario) -> f64 {
    s.plan().duration().as_secs_f64()
}
