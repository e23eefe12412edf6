//! Whether one step of a capacity search met the SLO, and whose fault it was if not.

use crate::usable::{run_problems, RunUse};
use loadlab_analysis::capacity::MIN_ACHIEVED;
use loadlab_metrics::{RunResult, TargetVerdictKind};
use loadlab_scenario::threshold::format_actual;

/// Re-runs of one step that the generator or the host spoiled.
pub const MAX_STEP_RETRIES: usize = 2;

/// A step's verdict.
#[derive(Debug, Clone, PartialEq)]
pub struct StepJudgement {
    pub passed: bool,
    /// Why it failed, or why it says nothing (empty when it passed).
    pub reasons: Vec<String>,
    /// The measurement cannot be trusted (generator, host, shortfall): run it again.
    pub untrustworthy: bool,
    /// A signal or a crash stopped it.
    pub interrupted: bool,
}

/// Judges a step run at `rate`.
pub fn judge_step(
    result: &RunResult,
    rate: f64,
    max_errors: f64,
    allow_saturated: bool,
) -> StepJudgement {
    let usable = run_problems(result, allow_saturated);
    if usable == RunUse::Interrupted {
        return StepJudgement {
            passed: false,
            reasons: vec!["interrupted".into()],
            untrustworthy: false,
            interrupted: true,
        };
    }
    if matches!(usable, RunUse::Retry | RunUse::Invalid) {
        return StepJudgement {
            passed: false,
            reasons: result
                .validity
                .reasons
                .iter()
                .map(|r| {
                    format!(
                        "not a valid measurement ({}): {}",
                        r.kind.as_str(),
                        r.message
                    )
                })
                .collect(),
            untrustworthy: true,
            interrupted: false,
        };
    }
    let mut reasons = Vec::new();
    // A threshold marked `abort` cut the step short: it failed its SLO (the search goes on).
    if let Some(b) = &result.aborted_by_threshold {
        reasons.push(format!(
            "cut short at {:.1} s: threshold `{}` failed ({}{})",
            b.at_s,
            b.threshold,
            format_actual(&b.threshold, b.value),
            b.window_s
                .map(|w| format!(" over the last {w} s"))
                .unwrap_or_default()
        ));
    }
    for t in result.thresholds.iter().filter(|t| !t.ok) {
        reasons.push(format!(
            "threshold `{}` failed{}",
            t.expr,
            t.actual
                .map(|a| format!(" (actual {})", format_actual(&t.expr, a)))
                .unwrap_or_else(|| " (no data)".into())
        ));
    }
    let arrived = arrived_rate(result, rate);
    if result.requests.rate < MIN_ACHIEVED * arrived {
        let of = if result.load.poisson {
            format!("the {arrived:.1}/s that arrived (Poisson, {rate}/s offered)")
        } else {
            format!("offered {rate}/s")
        };
        reasons.push(format!(
            "achieved {:.1} req/s < {:.0}% of {of}",
            result.requests.rate,
            MIN_ACHIEVED * 100.0
        ));
    }
    for v in result
        .verdicts
        .iter()
        .filter(|v| v.kind == TargetVerdictKind::TargetOverloaded)
    {
        reasons.push(format!("target overloaded: {}", v.message));
    }
    let error_rate = if result.requests.total > 0 {
        result.requests.failed as f64 / result.requests.total as f64
    } else {
        1.0
    };
    if error_rate > max_errors {
        reasons.push(format!(
            "errors {:.2}% > {:.2}%",
            error_rate * 100.0,
            max_errors * 100.0
        ));
    }
    StepJudgement {
        passed: reasons.is_empty(),
        reasons,
        untrustworthy: false,
        interrupted: false,
    }
}

/// The rate the arrivals actually came at, which is what a target keeping up completes.
/// Evenly spaced, the plan's `rate`. Poisson arrivals differ from the plan's mean by chance
/// (at 10/s over 5 s, 50 ± 7), so a target that kept up with every arrival must not fail for
/// having fewer of them: those that came in the measured time are the requests that ended in
/// it, those still in flight at its end less those carried in from the warm-up, and those
/// dropped. A target that falls behind holds its queue in flight, and stays short of it.
fn arrived_rate(result: &RunResult, rate: f64) -> f64 {
    if !result.load.poisson {
        return rate;
    }
    // The measured intervals up to the plan's end (the run then drains what is in flight).
    let measured: Vec<_> = result
        .intervals
        .iter()
        .filter(|i| i.within_plan(result.load.planned_duration_s))
        .collect();
    let (Some(last), seconds) = (
        measured.last(),
        measured.iter().map(|i| i.length_s).sum::<f64>(),
    ) else {
        return rate;
    };
    if seconds <= 0.0 {
        return rate;
    }
    let carried_in = result
        .intervals
        .iter()
        .take_while(|i| i.warmup)
        .last()
        .map_or(0, |i| i.in_flight);
    let ended: u64 = measured.iter().map(|i| i.requests).sum();
    let arrived = (ended + result.iterations.dropped + last.in_flight).saturating_sub(carried_in);
    arrived as f64 / seconds
}
