//! Whether a finished run can be used as an observation: valid, or invalid only in ways the
//! user chose to accept, and what to do with it otherwise.

use loadlab_metrics::{InvalidKind, RunResult};

/// How an orchestrator treats a finished run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunUse {
    /// A valid observation.
    Valid,
    /// Not a valid measurement, for reasons a re-run may not have (the generator, the
    /// host, a shortfall): re-run it.
    Retry,
    /// Stopped by a signal or a crash: the orchestration stops too.
    Interrupted,
}

/// Classifies a run; `allow_saturated` accepts runs whose only problem was the generator's
/// own CPU or scheduler (`--allow-saturated`).
pub fn run_problems(result: &RunResult, allow_saturated: bool) -> RunUse {
    if result.interrupted || result.validity.has(InvalidKind::Interrupted) {
        return RunUse::Interrupted;
    }
    let blocking = result
        .validity
        .reasons
        .iter()
        .any(|r| !(allow_saturated && r.kind.is_generator_limit()));
    if blocking {
        RunUse::Retry
    } else {
        RunUse::Valid
    }
}
