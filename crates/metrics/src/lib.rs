//! Measurements of a run: outcomes recorded into per-worker HDR histograms, merged exactly.
//!
//! Each engine worker owns a [`Recorder`] (no locks on the hot path); at the end the recorders
//! are merged into one and summarised into a [`RunResult`], the versioned JSON record of a run.
//! Memory is flat: histograms and counters only, never a list of requests.
//!
//! Crates chosen: `hdrhistogram` (the Rust port of Gil Tene's HdrHistogram: exact merges,
//! 3 significant digits over 1 µs – 1 h, the standard log format), `serde` for the result.

mod environment;
mod error_kind;
mod histogram;
mod interval;
mod outcome;
mod recorder;
pub mod result;
mod server_timing;

pub use environment::Environment;
pub use error_kind::ErrorKind;
pub use histogram::{new_histogram, LatencyHistogram, MAX_TRACKABLE_US};
pub use interval::{IntervalAccumulator, IntervalSnapshot};
pub use outcome::Outcome;
pub use recorder::{Recorder, StepInfo, StepRecorder};
pub use result::RunResult;
pub use server_timing::{parse_duration_header, server_timing_entries, ServerTimingEntries};
