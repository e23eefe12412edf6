//! Capacity search: the largest arrival rate meeting the SLO. The serde types are the
//! `capacity.json` format (schema `loadlab.capacity.v1`, `docs/schema/capacity.v1.json`);
//! [`Search`] is the pure search state machine (geometric bracket, bisection, confirmation).

use serde::{Deserialize, Serialize};

pub const CAPACITY_SCHEMA: &str = "loadlab.capacity.v1";

/// Achieved throughput must be at least this fraction of the offered rate.
pub const MIN_ACHIEVED: f64 = 0.98;

/// `capacity.json`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CapacityResult {
    /// Always `loadlab.capacity.v1`.
    pub schema: String,
    pub tool_version: String,
    pub id: String,
    pub name: String,
    pub scenario_file: Option<String>,
    pub started_at: String,
    pub finished_at: String,
    /// What a step must meet: the scenario's thresholds and the built-in conditions.
    pub slo: Vec<String>,
    pub settings: CapacitySettings,
    /// Largest rate (req/s) that passed and was confirmed; `null` when none passed.
    pub max_rate: Option<f64>,
    /// Last bracket `[highest passing, lowest failing]` (req/s); `hi` is `null` when no rate failed.
    pub bracket: [Option<f64>; 2],
    /// Every run made, in order.
    pub steps: Vec<CapacityStep>,
    pub interrupted: bool,
    pub warnings: Vec<String>,
    /// Highest rate that met the SLO so far (an interrupted search still says it).
    #[serde(default)]
    pub highest_passed: Option<f64>,
    /// Fingerprint of the search's plan (scenario and settings): `--resume` checks it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan_hash: Option<String>,
}

/// What a capacity search found, the one statement every output of it makes (terminal,
/// report, JSON consumers): an interrupted search knows a lower bound, not the capacity.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum CapacityFinding {
    /// The search converged: `rate` met the SLO (and its confirmation runs); `lowest_failing`
    /// did not (`None`: no rate tried failed, the capacity may be higher).
    Capacity {
        rate: f64,
        confirmed_by: usize,
        lowest_failing: Option<f64>,
    },
    /// Interrupted after `steps` steps; `rate` met the SLO, so the capacity is at least that
    /// (not confirmed; the search had not converged).
    AtLeast { rate: f64, steps: usize },
    /// Interrupted after `steps` steps before any rate met the SLO: nothing is known yet.
    NothingYet { steps: usize },
    /// The search ended and no rate tried met the SLO.
    NoneMet,
}

impl CapacityResult {
    /// What the search found (see [`CapacityFinding`]).
    pub fn finding(&self) -> CapacityFinding {
        match (self.interrupted, self.max_rate, self.highest_passed) {
            (false, Some(rate), _) => CapacityFinding::Capacity {
                rate,
                confirmed_by: self.settings.confirm,
                lowest_failing: self.bracket[1],
            },
            (false, None, _) => CapacityFinding::NoneMet,
            (true, _, Some(rate)) => CapacityFinding::AtLeast {
                rate,
                steps: self.steps.len(),
            },
            (true, _, None) => CapacityFinding::NothingYet {
                steps: self.steps.len(),
            },
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CapacitySettings {
    /// First rate tried (req/s).
    pub start: f64,
    pub hold_s: f64,
    pub warmup_s: f64,
    /// Bisection stops when (hi − lo) / lo ≤ precision.
    pub precision: f64,
    /// Confirmation runs at the answer (all must pass).
    pub confirm: usize,
    /// Highest rate tried (req/s).
    pub max: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CapacityStep {
    /// Offered rate (req/s).
    pub rate: f64,
    pub passed: bool,
    /// Store id of the run.
    pub run: String,
    /// `bracket`, `bisect` or `confirm`.
    pub phase: String,
    pub achieved_rate: f64,
    pub p95_ms: f64,
    pub error_rate: f64,
    /// Why the step failed (empty when it passed).
    pub reasons: Vec<String>,
    /// The run was invalid because of the load generator (not the system under test) and
    /// was made again: this step did not count in the search.
    #[serde(default)]
    pub retried: bool,
    /// A signal stopped the search during this step: a partial run, neither pass nor fail,
    /// and no trouble of the generator's (it counts in no verdict or warning).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
}

/// What the search wants next.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Next {
    /// Run at this rate, in this phase.
    Run { rate: f64, phase: Phase },
    /// Done: the answer (None when nothing passed).
    Done(Option<f64>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Bracket,
    Bisect,
    Confirm,
}

impl Phase {
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Bracket => "bracket",
            Phase::Bisect => "bisect",
            Phase::Confirm => "confirm",
        }
    }
}

/// The search: feed it each step's outcome, it says what to run next.
#[derive(Debug, Clone)]
pub struct Search {
    pub lo: Option<f64>,
    pub hi: Option<f64>,
    start: f64,
    max: f64,
    min: f64,
    precision: f64,
    confirm: usize,
    confirmed: usize,
    passes: Vec<f64>,
    next: Next,
}

impl Search {
    pub fn new(settings: &CapacitySettings) -> Self {
        let start = settings.start.min(settings.max);
        Self {
            lo: None,
            hi: None,
            start,
            max: settings.max,
            min: (start / 1024.0).max(0.1),
            precision: settings.precision,
            confirm: settings.confirm,
            confirmed: 0,
            passes: Vec::new(),
            next: Next::Run {
                rate: start,
                phase: Phase::Bracket,
            },
        }
    }

    pub fn next(&self) -> Next {
        self.next
    }

    /// Steps still to run if nothing surprises the search: the bisections left to narrow
    /// the bracket to the precision, then the confirmations. `None` while the bracket is
    /// still open (how many doublings or halvings remain depends on where the target fails).
    pub fn steps_left(&self) -> Option<usize> {
        let Next::Run { phase, .. } = self.next else {
            return Some(0);
        };
        let confirmations = self.confirm;
        match phase {
            Phase::Confirm => Some(self.confirm.saturating_sub(self.confirmed)),
            Phase::Bracket => None,
            Phase::Bisect => {
                let (Some(lo), Some(hi)) = (self.lo, self.hi) else {
                    return None;
                };
                // Each bisection halves the bracket; it is narrow enough once
                // (hi − lo) / lo ≤ precision.
                let ratio = (hi - lo) / (lo * self.precision);
                let halvings = if ratio > 1.0 {
                    ratio.log2().ceil() as usize
                } else {
                    1
                };
                Some(halvings + confirmations)
            }
        }
    }

    /// Records the outcome of the step last returned by [`Search::next`].
    pub fn record(&mut self, passed: bool) {
        let Next::Run { rate, phase } = self.next else {
            return;
        };
        if phase == Phase::Confirm {
            if passed {
                self.confirmed += 1;
                self.next = if self.confirmed >= self.confirm {
                    Next::Done(self.lo)
                } else {
                    Next::Run { rate, phase }
                };
            } else {
                // Not reproducible: the answer is below this rate.
                self.hi = Some(rate);
                self.passes.retain(|&p| p < rate);
                self.lo = self
                    .passes
                    .iter()
                    .copied()
                    .fold(None, |m: Option<f64>, p| Some(m.map_or(p, |m| m.max(p))));
                self.next = self.after_bracket();
            }
            return;
        }
        if passed {
            self.passes.push(rate);
            self.lo = Some(self.lo.map_or(rate, |l| l.max(rate)));
        } else {
            self.hi = Some(self.hi.map_or(rate, |h| h.min(rate)));
        }
        self.next = match (self.lo, self.hi) {
            (Some(lo), None) => {
                if lo >= self.max {
                    self.start_confirm(lo)
                } else {
                    Next::Run {
                        rate: (lo * 2.0).min(self.max),
                        phase: Phase::Bracket,
                    }
                }
            }
            (None, Some(hi)) => {
                let r = hi / 2.0;
                if r < self.min {
                    Next::Done(None)
                } else {
                    Next::Run {
                        rate: r,
                        phase: Phase::Bracket,
                    }
                }
            }
            _ => self.after_bracket(),
        };
    }

    fn after_bracket(&mut self) -> Next {
        match (self.lo, self.hi) {
            (None, Some(hi)) => {
                let r = hi / 2.0;
                if r < self.min {
                    Next::Done(None)
                } else {
                    Next::Run {
                        rate: r,
                        phase: Phase::Bracket,
                    }
                }
            }
            (Some(lo), Some(hi)) if (hi - lo) / lo > self.precision => Next::Run {
                rate: round_rate((lo + hi) / 2.0),
                phase: Phase::Bisect,
            },
            (Some(lo), _) => self.start_confirm(lo),
            (None, None) => Next::Run {
                rate: self.start,
                phase: Phase::Bracket,
            },
        }
    }

    fn start_confirm(&mut self, lo: f64) -> Next {
        self.confirmed = 0;
        if self.confirm == 0 {
            Next::Done(Some(lo))
        } else {
            Next::Run {
                rate: lo,
                phase: Phase::Confirm,
            }
        }
    }
}

/// Rates are shown and run with 0.1 req/s resolution.
fn round_rate(r: f64) -> f64 {
    (r * 10.0).round() / 10.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(start: f64) -> CapacitySettings {
        CapacitySettings {
            start,
            hold_s: 1.0,
            warmup_s: 0.0,
            precision: 0.05,
            confirm: 3,
            max: 100_000.0,
        }
    }

    fn search(
        capacity: f64,
        start: f64,
        flaky_at: Option<f64>,
    ) -> (Option<f64>, Vec<(f64, Phase)>) {
        let mut s = Search::new(&settings(start));
        let mut steps = Vec::new();
        let mut flaked = false;
        for _ in 0..100 {
            match s.next() {
                Next::Done(a) => return (a, steps),
                Next::Run { rate, phase } => {
                    steps.push((rate, phase));
                    let mut pass = rate <= capacity;
                    if Some(rate) == flaky_at && phase == Phase::Confirm && !flaked {
                        flaked = true;
                        pass = false;
                    }
                    s.record(pass);
                }
            }
        }
        panic!("search did not end: {steps:?}");
    }

    #[test]
    fn brackets_up_then_bisects_to_precision() {
        let (answer, steps) = search(333.0, 50.0, None);
        let a = answer.unwrap();
        assert!((333.0 / 1.05..=333.0).contains(&a), "{a} {steps:?}");
        assert_eq!(
            steps[..4].iter().map(|s| s.0).collect::<Vec<_>>(),
            vec![50.0, 100.0, 200.0, 400.0]
        );
        assert_eq!(steps.iter().filter(|s| s.1 == Phase::Confirm).count(), 3);
    }

    #[test]
    fn steps_left_is_known_once_bracketed_and_close_to_what_is_run() {
        for capacity in [333.0, 90.0, 1234.0, 51.0, 7_777.0] {
            let mut s = Search::new(&settings(50.0));
            let mut forecasts = Vec::new();
            let mut ran = 0;
            while let Next::Run { rate, phase } = s.next() {
                forecasts.push((ran, phase, s.steps_left()));
                s.record(rate <= capacity);
                ran += 1;
            }
            for (at, phase, left) in forecasts {
                let actual = ran - at;
                match phase {
                    Phase::Bracket => assert_eq!(left, None, "{capacity}: open bracket"),
                    _ => {
                        let left = left.expect("known once bracketed");
                        assert!(
                            left >= actual && left <= actual + 1,
                            "{capacity} step {at}: forecast {left}, ran {actual}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn brackets_down_when_start_fails() {
        let (answer, _) = search(30.0, 400.0, None);
        let a = answer.unwrap();
        assert!((30.0 / 1.05..=30.0).contains(&a));
    }

    #[test]
    fn nothing_passes() {
        let (answer, _) = search(0.0, 10.0, None);
        assert_eq!(answer, None);
    }

    #[test]
    fn failed_confirmation_searches_lower() {
        let (first, _) = search(333.0, 50.0, None);
        let (answer, steps) = search(333.0, 50.0, first);
        assert!(
            answer.unwrap() < first.unwrap(),
            "{answer:?} {first:?} {steps:?}"
        );
    }
}
