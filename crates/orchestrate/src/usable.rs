//! Whether a finished run can be used as an observation: valid, or invalid only in ways the
//! user chose to accept, and what to do with it otherwise.

use loadlab_metrics::{InvalidKind, RunResult};
use std::time::Duration;

/// How an orchestrator treats a finished run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunUse {
    /// A valid observation.
    Valid,
    /// Not a valid measurement, for reasons a re-run may not have (the generator, the
    /// host, a shortfall): re-run it.
    Retry,
    /// Not a valid measurement, for a reason a re-run has too (a warm-up that took every
    /// request): counted out, not re-run.
    Invalid,
    /// Stopped by a signal or a crash: the orchestration stops too.
    Interrupted,
}

/// Classifies a run; `allow_saturated` accepts runs whose only problem was the generator's
/// own CPU or scheduler (`--allow-saturated`).
pub fn run_problems(result: &RunResult, allow_saturated: bool) -> RunUse {
    if result.interrupted || result.validity.has(InvalidKind::Interrupted) {
        return RunUse::Interrupted;
    }
    let mut blocking = result
        .validity
        .reasons
        .iter()
        .filter(|r| !(allow_saturated && r.kind.is_generator_limit()))
        .peekable();
    if blocking.peek().is_none() {
        RunUse::Valid
    } else if blocking.any(|r| r.kind.is_same_on_rerun()) {
        RunUse::Invalid
    } else {
        RunUse::Retry
    }
}

/// The first wait before a run the host disturbed is made again; each later attempt waits
/// twice as long, up to [`SETTLE_MAX`]. A shared VM's disturbance (a neighbour's burst, steal)
/// lasts seconds: attempts made back to back meet the same one (measured on CI's VM: five 1 s
/// attempts in a row, all `host_contended`).
pub const SETTLE_FIRST: Duration = Duration::from_secs(1);
/// The longest wait before an attempt again.
pub const SETTLE_MAX: Duration = Duration::from_secs(8);

/// How long to let the host settle before re-running `result` as attempt `retry` (1 for the
/// first re-run): only when every reason is the host's; nothing for a run invalid for the
/// generator's own reasons or a shortfall, which waiting does not change.
pub fn settle_before_retry(result: &RunResult, retry: usize) -> Duration {
    let reasons = &result.validity.reasons;
    if reasons.is_empty() || !reasons.iter().all(|r| r.kind.is_host_disturbance()) {
        return Duration::ZERO;
    }
    let doublings = retry.saturating_sub(1).min(8) as u32;
    (SETTLE_FIRST * 2u32.pow(doublings)).min(SETTLE_MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use loadlab_metrics::InvalidReason;

    fn invalid(kinds: &[InvalidKind]) -> RunResult {
        let mut result = RunResult::default();
        for &kind in kinds {
            result.validity.reasons.push(InvalidReason::new(kind, "x"));
        }
        result
    }

    #[test]
    fn a_run_is_re_run_only_when_a_re_run_may_be_valid() {
        use InvalidKind::*;
        let table: [(&[InvalidKind], bool, RunUse); 9] = [
            (&[], false, RunUse::Valid),
            (&[HostDisturbed], false, RunUse::Retry),
            (&[GeneratorSaturated], false, RunUse::Retry),
            (&[GeneratorSaturated], true, RunUse::Valid),
            (&[NothingMeasured], false, RunUse::Invalid),
            (&[HostContended, NothingMeasured], true, RunUse::Invalid),
            (&[DataExhausted], false, RunUse::Retry),
            (
                &[GeneratorSaturated, NothingMeasured],
                true,
                RunUse::Invalid,
            ),
            (&[Interrupted, NothingMeasured], false, RunUse::Interrupted),
        ];
        for (kinds, allow_saturated, want) in table {
            assert_eq!(
                run_problems(&invalid(kinds), allow_saturated),
                want,
                "{kinds:?} allow_saturated {allow_saturated}"
            );
        }
    }

    #[test]
    fn only_the_hosts_disturbance_is_waited_out_and_the_wait_doubles_to_a_cap() {
        use InvalidKind::*;
        let s = |secs: u64| Duration::from_secs(secs);
        let table: [(&[InvalidKind], usize, Duration); 9] = [
            (&[HostContended], 1, s(1)),
            (&[CpuStolen], 2, s(2)),
            (&[HostDisturbed, HostContended], 3, s(4)),
            (&[HostDisturbed], 4, s(8)),
            (&[HostDisturbed], 9, s(8)),
            (&[HostContended, GeneratorSaturated], 1, s(0)),
            (&[DataExhausted], 1, s(0)),
            (&[SchedulerLate], 2, s(0)),
            (&[], 1, s(0)),
        ];
        for (kinds, retry, want) in table {
            assert_eq!(
                settle_before_retry(&invalid(kinds), retry),
                want,
                "{kinds:?} retry {retry}"
            );
        }
    }
}
