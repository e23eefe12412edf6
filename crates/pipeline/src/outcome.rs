//! How a run, study, search or comparison ended, as the exit code tells it.

use loadlab_metrics::RunResult;

/// The end of a command that ran: exit 0, 1 or 3.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Ok,
    /// A threshold, SLO or regression gate failed (exit 1).
    ThresholdsFailed,
    /// Interrupted, or not a valid measurement (exit 3).
    Invalid,
}

/// A run's outcome. Only the generator's own limits are forgiven by `allow_saturated`.
pub fn outcome_of(result: &RunResult, allow_saturated: bool) -> Outcome {
    let blocking = result
        .validity
        .reasons
        .iter()
        .filter(|r| !(allow_saturated && r.kind.is_generator_limit()));
    if result.interrupted || blocking.count() > 0 {
        Outcome::Invalid
    } else if result.aborted_by_threshold.is_some()
        || !loadlab_analysis::thresholds::all_passed(&result.thresholds)
    {
        Outcome::ThresholdsFailed
    } else {
        Outcome::Ok
    }
}
