//! How a run, study, search or comparison ended, as the exit code tells it.

use loadlab_metrics::RunResult;

/// The exit codes, a contract with CI scripts (README): this is the one place that says them.
pub mod exit_code {
    pub const OK: i32 = 0;
    /// A threshold, SLO or regression gate failed.
    pub const FAILED: i32 = 1;
    /// Bad input: a file, flag or location that cannot be used.
    pub const BAD_INPUT: i32 = 2;
    /// Aborted, interrupted or not a valid measurement.
    pub const ABORTED: i32 = 3;
}

/// The end of a command that ran: exit 0, 1 or 3.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Ok,
    /// A threshold, SLO or regression gate failed (exit 1).
    ThresholdsFailed,
    /// Interrupted, or not a valid measurement (exit 3).
    Invalid,
}

impl Outcome {
    pub fn exit_code(self) -> i32 {
        match self {
            Outcome::Ok => exit_code::OK,
            Outcome::ThresholdsFailed => exit_code::FAILED,
            Outcome::Invalid => exit_code::ABORTED,
        }
    }
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

/// Why a run's outcome is not [`Outcome::Ok`], a line each: what `--quiet` still prints, so
/// that an exit code of 1 or 3 never comes without its reason.
pub fn why_not_ok(result: &RunResult, allow_saturated: bool) -> Vec<String> {
    let mut why: Vec<String> = result
        .validity
        .reasons
        .iter()
        .filter(|r| !(allow_saturated && r.kind.is_generator_limit()))
        .map(|r| format!("invalid run ({}): {}", r.kind.as_str(), r.message))
        .collect();
    if result.interrupted && why.is_empty() {
        why.push("the run was interrupted: a partial result".into());
    }
    if let Some(breach) = &result.aborted_by_threshold {
        why.push(format!("aborted by threshold `{}`", breach.threshold));
    }
    why.extend(
        result
            .thresholds
            .iter()
            .filter(|t| !t.ok)
            .map(|t| match t.actual {
                Some(v) => format!("threshold failed: `{}` (actual {v})", t.expr),
                None => format!("threshold failed: `{}` (no data)", t.expr),
            }),
    );
    why
}

#[cfg(test)]
mod tests {
    use super::*;
    use loadlab_metrics::result::ThresholdResult;
    use loadlab_metrics::validity::{InvalidKind, InvalidReason};

    #[test]
    fn every_outcome_but_ok_says_why() {
        let mut r = RunResult::default();
        assert_eq!(outcome_of(&r, false), Outcome::Ok);
        assert!(why_not_ok(&r, false).is_empty());
        r.thresholds.push(ThresholdResult {
            expr: "p95 < 1ms".into(),
            actual: Some(2.5),
            ok: false,
        });
        assert_eq!(outcome_of(&r, false), Outcome::ThresholdsFailed);
        assert_eq!(
            why_not_ok(&r, false),
            ["threshold failed: `p95 < 1ms` (actual 2.5)"]
        );
        r.validity.reasons.push(InvalidReason::new(
            InvalidKind::GeneratorSaturated,
            "the load generator was saturated",
        ));
        assert_eq!(outcome_of(&r, false), Outcome::Invalid);
        assert_eq!(
            why_not_ok(&r, false)[0],
            "invalid run (generator_saturated): the load generator was saturated"
        );
        // Forgiven by --allow-saturated: only the threshold is left to say.
        assert_eq!(why_not_ok(&r, true).len(), 1);
    }
}
