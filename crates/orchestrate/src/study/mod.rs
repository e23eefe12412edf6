//! Studies: a plan of runs (variants or sweep points × repetitions), run in order with
//! invalid runs re-run, saved after every run, resumable, and assembled into `study.json`.

mod assemble;
mod plan;
mod runner;
#[cfg(test)]
mod tests;

pub use assemble::{assemble, MadeRun, StudyIds};
pub use plan::{fmt_value, PlanError, PlannedVariant, Slot, StudyPlan};
pub use runner::{run_study, Estimate, StudyObserver, StudyOutcome, StudyStop};
