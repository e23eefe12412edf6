//! The pipeline as a library: what `loadlab run`, `study`, `capacity`, `compare`, `merge` and
//! `report` do between parsing their flags and printing — measure a run and store it, run a
//! study or capacity search over stored runs (resumable), compare stored results, merge
//! segments, write reports beside results. Any program (and any test, with a fake
//! [`loadlab_orchestrate::Executor`]) can drive it; the binary only turns flags into these
//! calls and prints what they report through the observers.
//!
//! Crates chosen: none beyond the workspace's own; `thiserror` for [`PipelineError`].

pub mod capacity;
pub mod capacity_command;
pub mod compare;
pub mod compare_command;
mod error;
pub mod executor;
pub mod history;
pub mod import_results;
pub mod listing;
pub mod live_outputs;
pub mod live_progress;
pub mod live_session;
pub mod measure;
pub mod merge;
pub mod merge_command;
mod outcome;
pub mod remote;
pub mod reports;
pub mod resolve;
pub mod segmented;
pub mod session;
pub mod signals;
pub mod single_run;
pub mod store;
pub mod study;
pub mod study_command;
pub mod terminal_view;

pub use error::PipelineError;
pub use outcome::{exit_code, outcome_of, why_not_ok, Outcome};
