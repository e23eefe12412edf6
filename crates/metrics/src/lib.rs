//! Measurements of a run: outcomes recorded into per-worker interval deltas (HDR histograms
//! and counters, per request step), and the types of the run's result they add up to.
//!
//! Each engine worker owns a [`Recorder`] (no locks on the hot path) and hands over an
//! [`IntervalDelta`] every second; deltas add exactly, across workers, runs and machines. The
//! run record (`loadlab_record`) streams them to disk and derives the [`RunResult`]
//! (`run.json`) from them; the recorder knows nothing of files.
//! Memory is flat: histograms and counters only, never a list of requests.
//!
//! Crates chosen: `hdrhistogram` (the Rust port of Gil Tene's HdrHistogram: exact merges,
//! 3 significant digits over 1 µs – 1 h, the standard interval-log format), `serde` for the
//! result and the record's JSON parts, `base64` for encoded histograms.

mod breach;
pub mod clock;
pub mod compensation;
pub mod data_use;
mod delta;
mod environment;
mod error_kind;
mod exemplar;
pub mod grpc;
mod histogram;
pub mod host_timer;
mod imported;
mod load_model;
pub mod message_counts;
pub mod metric_id;
mod outcome;
mod phases;
mod protocol;
mod recorder;
pub mod resources;
pub mod result;
mod segment;
mod server_timing;
mod slice;
pub mod steering;
pub mod stream;
mod timestamp;
pub mod validity;
pub mod verdict;
pub mod ws;

pub use breach::ThresholdBreach;
pub use compensation::{Compensation, LatencyBasis, ScheduleSource};
pub use delta::{DeltaPool, IntervalDelta, Reserve, StepDelta};
pub use environment::Environment;
pub use error_kind::{ErrorCounts, ErrorKind};
pub use exemplar::{Exemplar, Exemplars, SlowRequest, EXEMPLARS};
pub use grpc::{GrpcCode, GrpcCounts, GrpcResult};
pub use histogram::{
    micros, new_histogram, record_us, LatencyHistogram, LazyHistogram, MAX_TRACKABLE_US,
};
pub use host_timer::HostTimer;
pub use imported::ImportedFrom;
pub use load_model::LoadModel;
pub use metric_id::{
    series_unit, thin_percentile, GoodDirection, LatencyStat, MetricId, MetricNameError,
    MetricUnit, Quantity, Scope, MIN_SAMPLES_BEYOND,
};
pub use outcome::{Outcome, Phases};
pub use phases::{Phase, PhaseHistograms, PhaseSummary};
pub use protocol::Protocol;
pub use recorder::{Recorder, StepInfo};
pub use result::LoadStretch;
pub use result::{OriginResult, RunResult};
pub use segment::Segment;
pub use server_timing::{
    parse_duration_header, server_timing_duration, server_timing_entries, server_timing_micros,
    ServerTimingEntries,
};
pub use slice::{slice_for, SHORT_RUN, SHORT_RUN_SLICE};
pub use steering::{SteerAction, SteerEvent, SteerSource, StretchLevel};
pub use stream::{StreamCounts, StreamResult, StreamSample, StreamSeries, StreamTime};
pub use validity::{InvalidKind, InvalidReason, TargetVerdict, TargetVerdictKind, Validity};
pub use verdict::Verdict;
pub use ws::{WsCounts, WsResult, CLOSE_ABNORMAL};
