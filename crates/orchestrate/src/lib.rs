//! Orchestration of many runs: a study (repetitions × variants, or a sweep, in interleaved
//! order, invalid runs re-run, resumable after an interruption) and a capacity search
//! (bracket, bisection, confirmation, resumable). Both are driven through the [`Executor`]
//! trait — "run this scenario, give me its result" — so they are tested with fake runs and
//! know nothing of engines, threads or stores; the binary supplies the real executor and
//! prints what the [`Observer`] is told.
//!
//! No crate beyond the workspace's own is needed: the statistics are `loadlab-analysis`'s,
//! `sha2` fingerprints a study's plan for `--resume`.

pub mod capacity;
mod executor;
pub mod study;
mod usable;

pub use executor::{ExecutedRun, Executor, RunRequest};
pub use usable::{run_problems, settle_before_retry, RunUse, SETTLE_FIRST, SETTLE_MAX};
