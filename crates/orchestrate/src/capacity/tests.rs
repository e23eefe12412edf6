//! The capacity search with fake runs: it finds the capacity, blames the target for an
//! overload (failed step, not re-run), re-runs what the generator spoiled, and resumes.

use super::*;
use crate::executor::{ExecutedRun, Executor, RunRequest};
use loadlab_analysis::capacity::{CapacityFinding, CapacityResult, CapacitySettings, CapacityStep};
use loadlab_metrics::{InvalidKind, RunResult, TargetVerdict, TargetVerdictKind, Validity};
use loadlab_scenario::Scenario;
use std::time::Duration;

/// A target that keeps up to `capacity` req/s; beyond, it is overloaded.
struct FakeTarget {
    capacity: f64,
    /// The runs (1 = the first) the host spoils.
    spoil: Vec<usize>,
    made: Vec<f64>,
    cancel_after: Option<usize>,
    /// Beyond its capacity, a threshold marked `abort` stops the run (instead of the target
    /// being judged overloaded at the end).
    aborts: bool,
    /// A signal stops the load during this step (1-based): its run is interrupted.
    signal_during: Option<usize>,
    /// The pauses asked for between steps.
    paused: Vec<Duration>,
}

impl FakeTarget {
    /// A target of 370 req/s, on a host that spoils no run and no signal.
    fn healthy() -> Self {
        FakeTarget {
            capacity: 370.0,
            spoil: vec![],
            made: vec![],
            cancel_after: None,
            aborts: false,
            signal_during: None,
            paused: vec![],
        }
    }
}

fn offered(s: &Scenario) -> f64 {
    match &s.load {
        loadlab_scenario::Load::Open(o) => o.stages[0].rate,
        _ => unreachable!(),
    }
}

impl Executor for FakeTarget {
    type Error = String;

    fn execute(&mut self, request: &RunRequest<'_>) -> Result<ExecutedRun, String> {
        let rate = offered(request.scenario);
        self.made.push(rate);
        let mut r = RunResult::default();
        r.requests.total = 1000;
        r.latency_ms.count = 1000;
        if rate <= self.capacity {
            r.requests.rate = rate;
            r.latency_ms.p95 = 20.0;
        } else if self.aborts {
            r.requests.rate = rate;
            r.latency_ms.p95 = 900.0;
            r.stop = loadlab_metrics::result::StopReason::Threshold;
            r.aborted_by_threshold = Some(loadlab_metrics::ThresholdBreach {
                threshold: "latency.p95 < 500ms over 2s, abort".into(),
                window_s: Some(2.0),
                value: 900.0,
                at_s: 4.2,
            });
            r.thresholds.push(loadlab_metrics::result::ThresholdResult {
                expr: "latency.p95 < 500ms over 2s, abort".into(),
                actual: Some(900.0),
                ok: false,
            });
        } else {
            r.requests.rate = self.capacity;
            r.latency_ms.p95 = 4000.0;
            r.verdicts.push(TargetVerdict {
                kind: TargetVerdictKind::TargetOverloaded,
                message: format!("{} of {rate}/s achieved", self.capacity),
            });
        }
        if self.spoil.contains(&self.made.len()) {
            r.validity = Validity::default();
            r.validity
                .push(InvalidKind::HostContended, "the host was busy");
        }
        if self.signal_during == Some(self.made.len()) {
            r.interrupted = true;
            r.stop = loadlab_metrics::result::StopReason::Signal;
        }
        r.valid = r.validity.is_valid();
        Ok(ExecutedRun {
            id: format!("r{}", self.made.len()),
            result: r,
        })
    }

    fn cancelled(&self) -> bool {
        self.cancel_after.is_some_and(|n| self.made.len() >= n)
            || self.signal_during.is_some_and(|n| self.made.len() >= n)
    }

    fn pause(&mut self, duration: Duration) {
        self.paused.push(duration);
    }
}

#[derive(Default)]
struct Saved(Vec<CapacityResult>);

impl CapacityObserver for Saved {
    fn save(&mut self, r: &CapacityResult) -> Result<(), String> {
        self.0.push(r.clone());
        Ok(())
    }
}

/// The search of [`plan`] against `target`, from `prior` steps (none: from the start).
fn search(target: &mut FakeTarget, prior: Vec<CapacityStep>) -> CapacityOutcome<String> {
    run_capacity(
        &plan(),
        "c1",
        "t",
        prior,
        false,
        target,
        &mut Saved::default(),
    )
}

fn plan() -> CapacityPlan {
    let base = Scenario::parse(
        "target: http://127.0.0.1:1\nload: {model: open, rate: 1/s, duration: 1s}\nsteps: [{get: /}]\n",
        "c.yaml",
    )
    .unwrap();
    CapacityPlan {
        name: "c".into(),
        scenario_file: None,
        base,
        settings: CapacitySettings {
            start: 50.0,
            hold_s: 10.0,
            warmup_s: 2.0,
            precision: 0.05,
            confirm: 2,
            max: 100_000.0,
        },
        max_errors: 0.01,
        cooldown: Duration::ZERO,
    }
}

#[test]
fn finds_the_capacity_of_an_overloadable_target_without_invalid_steps() {
    let mut target = FakeTarget::healthy();
    let out = search(&mut target, vec![]);
    let r = out.result;
    let max = r.max_rate.expect("a capacity");
    assert!((352.0..=370.0).contains(&max), "{max}");
    let failed: Vec<&CapacityStep> = r.steps.iter().filter(|s| !s.passed).collect();
    assert!(!failed.is_empty());
    assert!(
        failed.iter().all(|s| !s.retried),
        "an overloaded target fails a step, it is not re-run"
    );
    assert!(failed[0]
        .reasons
        .iter()
        .any(|m| m.starts_with("target overloaded")));
    assert_eq!(r.highest_passed, Some(max));
}

#[test]
fn a_step_the_host_spoiled_is_run_again_and_does_not_count() {
    let mut target = FakeTarget {
        spoil: vec![2],
        ..FakeTarget::healthy()
    };
    let out = search(&mut target, vec![]);
    assert_eq!(
        target.made[1], target.made[2],
        "the spoiled step is repeated at the same rate"
    );
    assert!(out.result.steps[1].retried);
    assert!(out.result.steps[1].reasons[0].contains("host_contended"));
    assert!(
        target.paused.contains(&crate::SETTLE_FIRST),
        "the host is given time to settle first: {:?}",
        target.paused
    );
    let max = out.result.max_rate.unwrap();
    assert!((352.0..=370.0).contains(&max), "{max}");
}

#[test]
fn a_host_that_stays_contended_stops_the_search_instead_of_failing_steps() {
    let mut target = FakeTarget {
        spoil: (1..=20).collect(),
        ..FakeTarget::healthy()
    };
    let out = search(&mut target, vec![]);
    assert_eq!(
        target.made.len(),
        MAX_STEP_RETRIES + 1,
        "one step, tried until the retries ran out: {:?}",
        target.made
    );
    match out.stop {
        Some(CapacityStop::Untrustworthy {
            rate,
            attempts,
            reasons,
        }) => {
            assert_eq!((rate, attempts), (target.made[0], MAX_STEP_RETRIES + 1));
            assert!(reasons[0].contains("host_contended"), "{reasons:?}");
        }
        _ => panic!("the search must stop, not walk down"),
    }
    assert_eq!(out.result.max_rate, None);
    assert!(
        out.result.steps.iter().all(|s| s.retried),
        "no step counted"
    );
}

#[test]
fn an_interrupted_search_says_what_passed_and_resumes_to_the_same_answer() {
    let mut uninterrupted = FakeTarget::healthy();
    let whole = search(&mut uninterrupted, vec![]);

    let mut target = FakeTarget {
        cancel_after: Some(3),
        ..FakeTarget::healthy()
    };
    let first = search(&mut target, vec![]);
    assert!(first.result.interrupted);
    assert!(first.result.max_rate.is_none());
    assert_eq!(
        first.result.highest_passed,
        Some(200.0),
        "50, 100, 200 passed"
    );
    assert_eq!(
        first.result.finding(),
        CapacityFinding::AtLeast {
            rate: 200.0,
            steps: 3
        }
    );
    assert!(
        first.result.warnings.is_empty(),
        "{:?}",
        first.result.warnings
    );

    // The signal during step 4: that step is interrupted, not a failure, and nothing the
    // generator did wrong (no "were run again" warning).
    let mut signalled = FakeTarget {
        signal_during: Some(4),
        ..FakeTarget::healthy()
    };
    let cut = search(&mut signalled, vec![]);
    assert!(cut.result.interrupted);
    let last = cut.result.steps.last().unwrap();
    assert!(last.interrupted && !last.passed, "{last:?}");
    assert_eq!(cut.result.highest_passed, Some(200.0));
    assert!(cut.result.warnings.is_empty(), "{:?}", cut.result.warnings);

    let mut again = FakeTarget::healthy();
    let resumed = search(&mut again, first.result.steps.clone());
    assert_eq!(resumed.result.max_rate, whole.result.max_rate);
    assert_eq!(resumed.result.steps.len(), whole.result.steps.len());
    assert_eq!(
        again.made.len(),
        whole.result.steps.len() - 3,
        "only the missing steps run"
    );
}

#[test]
fn a_step_an_abort_threshold_cut_short_fails_its_slo_and_the_search_goes_on() {
    let mut target = FakeTarget {
        aborts: true,
        ..FakeTarget::healthy()
    };
    let out = search(&mut target, vec![]);
    assert!(out.stop.is_none(), "the search ends by itself");
    let r = out.result;
    let max = r.max_rate.expect("a capacity");
    assert!((352.0..=370.0).contains(&max), "{max}");
    let cut: Vec<&CapacityStep> = r.steps.iter().filter(|s| !s.passed).collect();
    assert!(!cut.is_empty());
    for s in &cut {
        assert!(s.rate > 370.0, "{}", s.rate);
        assert!(
            !s.retried,
            "a step cut short is an answer, not a spoiled run"
        );
        assert_eq!(
            s.reasons[0],
            "cut short at 4.2 s: threshold `latency.p95 < 500ms over 2s, abort` failed (900.00ms over the last 2 s)"
        );
    }
    assert!(!r.interrupted);
}

#[test]
fn poisson_arrivals_short_of_the_mean_by_chance_still_pass() {
    use loadlab_metrics::result::IntervalStats;
    let interval = |warmup: bool, requests: u64, in_flight: u64| IntervalStats {
        warmup,
        requests,
        in_flight,
        length_s: 1.0,
        ..IntervalStats::default()
    };
    // 10/s for 5 s: 50 arrivals expected, 45 came, and all ended.
    let mut r = RunResult::default();
    r.requests.total = 45;
    r.requests.rate = 9.0;
    r.duration_s = 5.0;
    r.load.model = loadlab_metrics::LoadModel::Open;
    r.load.planned_duration_s = 6.0;
    r.intervals = vec![interval(true, 10, 2)];
    r.intervals.extend((1..6).map(|t| IntervalStats {
        t: f64::from(t),
        ..interval(false, 9, 2)
    }));
    // What the run drains after the plan's end is not an arrival of the measured time.
    r.intervals.push(IntervalStats {
        t: 6.0,
        ..interval(false, 2, 0)
    });
    assert!(
        !judge_step(&r, 10.0, 0.01, false).passed,
        "evenly spaced: 9.0/s of 10/s is short"
    );
    r.load.poisson = true;
    let j = judge_step(&r, 10.0, 0.01, false);
    assert!(j.passed, "{:?}", j.reasons);
    // As many came, but the target fell behind: 20 still queued at the plan's end.
    r.intervals[5].in_flight = 22;
    r.requests.total = 45;
    r.requests.rate = 7.0;
    let j = judge_step(&r, 10.0, 0.01, false);
    assert!(!j.passed, "a queue growing in flight is a shortfall");
}
