//! Capacity search as a library: the largest arrival rate meeting the SLO — the scenario's
//! thresholds, an error-rate bound, achieved ≥ 98% of offered, a trustworthy run. A step
//! the target fails (overloaded, too slow, errors) counts as failed; a step the generator or
//! the host spoiled says nothing about the target and is run again. Saved after every step
//! and resumable.

mod runner;
mod step;
#[cfg(test)]
mod tests;

pub use runner::{run_capacity, CapacityObserver, CapacityOutcome, CapacityPlan, CapacityStop};
pub use step::{judge_step, StepJudgement, MAX_STEP_RETRIES};
