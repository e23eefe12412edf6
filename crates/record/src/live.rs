//! The seam for what watches a run while it goes (the dashboard, the live outputs, the
//! windowed thresholds): every completed interval, in order, exactly as the record holds it.
//!
//! Observers run on the coordinator's thread, beside the record writer, never on a worker's:
//! they must not block (a slow receiver buffers in its own thread, up to a bound). One of them
//! may ask to stop the load ([`LiveControl::Abort`]); the run then ends at once, keeps what it
//! measured and says which threshold stopped it.

use crate::{IntervalRecord, RecordEnd, RecordMeta, Summarizer};
use loadlab_metrics::ThresholdBreach;

/// An observer's answer to an interval.
#[derive(Debug, Clone, PartialEq)]
pub enum LiveControl {
    Continue,
    /// Stop the load now: a threshold marked `abort` failed.
    Abort(ThresholdBreach),
}

/// Watches a run interval by interval.
pub trait LiveObserver: Send {
    /// The run's metadata, before its first interval (step names, plan, start time).
    fn begin(&mut self, _meta: &RecordMeta) {}
    /// One completed interval, already folded into `summary` (whose `intervals()` ends with this
    /// interval's figures).
    fn interval(&mut self, _record: &IntervalRecord, _summary: &Summarizer) -> LiveControl {
        LiveControl::Continue
    }
    /// The run ended (after its last interval); flush what is buffered, within a bound.
    fn end(&mut self, _end: &RecordEnd) {}
}
