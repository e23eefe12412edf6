//! Steering a run while it goes: a pause, a resume or a new level (rate or VUs, optionally
//! ramped) turns the planned load into the load as driven, a plan of the same kind over the
//! same run, so that the engine keeps timing every arrival from its intended start and the
//! record can say exactly what was offered. A steered plan never outlasts the planned one.

use crate::{ClosedLoad, Load, OpenLoad, RateStage, VuStage};
use std::time::Duration;

/// What a user asks of a running load.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SteerCommand {
    /// No new arrival or iteration starts; those in flight finish.
    Pause,
    /// The load goes on at the level it had before the pause (or the one set meanwhile).
    Resume,
    /// A new level: arrivals per second (open model) or VUs (closed), reached linearly
    /// `over` this long from the level of now.
    Level { level: Level, over: Duration },
}

/// A load level of one model or the other.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Level {
    Rate(f64),
    Vus(u32),
}

impl Level {
    pub fn value(self) -> f64 {
        match self {
            Level::Rate(r) => r,
            Level::Vus(v) => f64::from(v),
        }
    }

    /// `800/s` or `40 VUs`, as the summary writes it.
    pub fn words(self) -> String {
        match self {
            Level::Rate(r) => format!("{}/s", short_number(r)),
            Level::Vus(v) => format!("{v} VU{}", if v == 1 { "" } else { "s" }),
        }
    }
}

/// A level or a length as the summary and `loadlab control` write it: at most two decimals,
/// none when whole (`800`, `12.5`).
pub fn short_number(x: f64) -> String {
    if x.fract() == 0.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.2}")
            .trim_end_matches('0')
            .trim_end_matches('.')
            .to_string()
    }
}

/// Why a command was not followed; the run goes on as before.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SteerRefusal {
    #[error("the run is already paused")]
    AlreadyPaused,
    #[error("the run is not paused: nothing to resume")]
    NotPaused,
    #[error("this run is an open model (arrivals per second): set a rate, e.g. `rate 800/s`")]
    RateWanted,
    #[error("this run is a closed model (virtual users): set a VU count, e.g. `vus 40`")]
    VusWanted,
    #[error("a burst cannot be steered: it starts all of its iterations at once")]
    Burst,
    #[error("{0}")]
    OutOfBounds(String),
    #[error("the plan has ended: nothing is left to steer")]
    Ended,
}

/// What a client asks of the run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SteerRequest {
    Command(SteerCommand),
    /// End the run now: no new arrival or iteration, those in flight finish.
    Stop,
}

/// Why a request was not followed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SteerError {
    #[error("the run has not started yet")]
    NotStarted,
    #[error("the run is over")]
    Over,
    #[error(transparent)]
    Refused(#[from] SteerRefusal),
}

/// Where a steered run stands, for the control API's answers and the page.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SteerStatus {
    pub started: bool,
    pub over: bool,
    pub paused: bool,
    /// Arrivals per second or VUs now.
    pub level: f64,
    /// `rate` (open model) or `vus` (closed).
    pub unit: &'static str,
    /// Commands followed so far.
    pub commands: usize,
}

/// What steers a running load: the engine's handle, seen by the control server (which must
/// not depend on the engine) through this.
pub trait SteerHandle: Send + Sync {
    /// Follows `request` from now on (recorded as coming from `source`), or says why not.
    fn steer(
        &self,
        request: SteerRequest,
        source: loadlab_metrics::SteerSource,
    ) -> Result<loadlab_metrics::SteerEvent, SteerError>;

    fn status(&self) -> SteerStatus;
}

/// The most arrivals per second or VUs a command may ask for: beyond any single generator.
pub const MAX_RATE: f64 = 10_000_000.0;
pub const MAX_VUS: u32 = 1_000_000;
/// The longest ramp a command may ask for.
pub const MAX_OVER: Duration = Duration::from_secs(24 * 3600);

/// The load as driven so far: the planned load up to the first command, then what each
/// command made of it, up to the planned end.
#[derive(Debug, Clone, PartialEq)]
pub struct Driven {
    pub load: Load,
    /// While paused: the level to resume at.
    paused_from: Option<f64>,
    /// The most VUs this generator can hold (its open files), and why.
    vu_ceiling: Option<(u32, String)>,
}

impl Driven {
    pub fn new(planned: Load) -> Self {
        Self {
            load: planned,
            paused_from: None,
            vu_ceiling: None,
        }
    }

    /// VU counts above `most` are refused with `why` (the open files they would need).
    pub fn with_vu_ceiling(mut self, most: u32, why: String) -> Self {
        self.vu_ceiling = Some((most, why));
        self
    }

    pub fn paused(&self) -> bool {
        self.paused_from.is_some()
    }

    /// Arrivals per second or VUs at `t` (0 while paused).
    pub fn level_at(&self, t: Duration) -> f64 {
        match &self.load {
            Load::Open(o) => o.rate_at(t),
            Load::Closed(c) => f64::from(c.vus_at(t)),
            Load::Burst(_) => 0.0,
        }
    }

    /// Follows `command` from `at` (since the run's start) on: the level before and after.
    pub fn apply(
        &mut self,
        at: Duration,
        command: SteerCommand,
    ) -> Result<(f64, f64), SteerRefusal> {
        let end = planned_end(&self.load);
        if matches!(self.load, Load::Burst(_)) {
            return Err(SteerRefusal::Burst);
        }
        if at >= end {
            return Err(SteerRefusal::Ended);
        }
        let before = self.level_at(at);
        match command {
            SteerCommand::Pause => {
                if self.paused() {
                    return Err(SteerRefusal::AlreadyPaused);
                }
                self.paused_from = Some(before);
                self.drive(at, before, 0.0, Duration::ZERO);
                Ok((before, 0.0))
            }
            SteerCommand::Resume => {
                let level = self.paused_from.take().ok_or(SteerRefusal::NotPaused)?;
                self.drive(at, 0.0, level, Duration::ZERO);
                Ok((before, level))
            }
            SteerCommand::Level { level, over } => {
                let to = self.checked(level, over)?;
                if self.paused() {
                    // Paused, it stays so: the new level is the one it resumes at.
                    self.paused_from = Some(to);
                    return Ok((before, before));
                }
                self.drive(at, before, to, over);
                Ok((before, to))
            }
        }
    }

    fn checked(&self, level: Level, over: Duration) -> Result<f64, SteerRefusal> {
        if over > MAX_OVER {
            return Err(SteerRefusal::OutOfBounds(format!(
                "a ramp of {over:?} is longer than the {} h allowed",
                MAX_OVER.as_secs() / 3600
            )));
        }
        match (&self.load, level) {
            (Load::Open(_), Level::Rate(r)) => {
                if !(r.is_finite() && r > 0.0 && r <= MAX_RATE) {
                    return Err(SteerRefusal::OutOfBounds(format!(
                        "a rate of {r}/s: give one above 0 and at most {MAX_RATE}/s (pause to stop the arrivals)"
                    )));
                }
                Ok(r)
            }
            (Load::Closed(_), Level::Vus(v)) => {
                if v > MAX_VUS {
                    return Err(SteerRefusal::OutOfBounds(format!(
                        "{v} VUs: at most {MAX_VUS} (0 pauses the iterations)"
                    )));
                }
                if let Some((most, why)) = &self.vu_ceiling {
                    if v > *most {
                        return Err(SteerRefusal::OutOfBounds(format!(
                            "{v} VUs: this generator can hold at most {most} ({why})"
                        )));
                    }
                }
                Ok(f64::from(v))
            }
            (Load::Open(_), Level::Vus(_)) => Err(SteerRefusal::RateWanted),
            _ => Err(SteerRefusal::VusWanted),
        }
    }

    /// The plan up to `at`, then a line from `from` to `to` over `over`, then `to` to the end.
    fn drive(&mut self, at: Duration, from: f64, to: f64, over: Duration) {
        let end = planned_end(&self.load);
        let over = over.min(end - at);
        let rest = end - at - over;
        match &mut self.load {
            Load::Open(o) => {
                let mut stages = rate_stages_until(&o.stages, at);
                if !over.is_zero() {
                    stages.push(RateStage {
                        duration: over,
                        rate: from,
                        ramp_to: Some(to),
                    });
                }
                stages.push(RateStage {
                    duration: rest,
                    rate: to,
                    ramp_to: None,
                });
                o.stages = stages;
            }
            Load::Closed(c) => {
                let mut stages = vu_stages_until(c, at);
                let to = to.round() as u32;
                if !over.is_zero() {
                    stages.push(VuStage {
                        duration: over,
                        vus: to,
                    });
                } else {
                    // A step: reached at once, then held.
                    stages.push(VuStage {
                        duration: Duration::ZERO,
                        vus: to,
                    });
                }
                stages.push(VuStage {
                    duration: rest,
                    vus: to,
                });
                c.stages = stages;
            }
            Load::Burst(_) => {}
        }
    }
}

/// Where the plan ends (an iteration-bound one at the latest).
fn planned_end(load: &Load) -> Duration {
    match load {
        Load::Open(o) => o.duration(),
        Load::Closed(c) => c.duration(),
        Load::Burst(b) => b.max_duration,
    }
}

/// The stages up to `at`, the one running then cut there (a ramp ends at its level of then).
fn rate_stages_until(stages: &[RateStage], at: Duration) -> Vec<RateStage> {
    let mut out = Vec::new();
    let mut start = Duration::ZERO;
    for s in stages {
        if start >= at {
            break;
        }
        let end = start + s.duration;
        if end <= at {
            out.push(*s);
        } else {
            let cut = at - start;
            let ramp_to = s
                .ramp_to
                .map(|to| s.rate + (to - s.rate) * cut.as_secs_f64() / s.duration.as_secs_f64());
            out.push(RateStage {
                duration: cut,
                rate: s.rate,
                ramp_to,
            });
        }
        start = end;
    }
    out
}

/// The closed plan's stages up to `at`, the one running then cut at its level of then.
fn vu_stages_until(c: &ClosedLoad, at: Duration) -> Vec<VuStage> {
    let mut out = Vec::new();
    let mut start = Duration::ZERO;
    for s in &c.stages {
        if start >= at {
            break;
        }
        let end = start + s.duration;
        if end <= at {
            out.push(*s);
        } else {
            out.push(VuStage {
                duration: at - start,
                vus: c.vus_at(at),
            });
        }
        start = end;
    }
    out
}

impl OpenLoad {
    /// Arrivals the plan intends before `t`: Λ(t).
    pub fn count_before(&self, t: Duration) -> f64 {
        let mut total = 0.0;
        for s in rate_stages_until(&self.stages, t) {
            total += (s.rate + s.ramp_to.unwrap_or(s.rate)) / 2.0 * s.duration.as_secs_f64();
        }
        total
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn open(rate: f64, secs: u64) -> Load {
        Load::Open(OpenLoad {
            stages: vec![RateStage {
                duration: Duration::from_secs(secs),
                rate,
                ramp_to: None,
            }],
            poisson: false,
            max_in_flight: 100,
            max_in_flight_given: false,
            max_arrivals: None,
            batch_window: OpenLoad::DEFAULT_BATCH_WINDOW,
        })
    }

    fn closed(vus: u32, secs: u64) -> Load {
        Load::Closed(ClosedLoad {
            start_vus: vus,
            stages: vec![VuStage {
                duration: Duration::from_secs(secs),
                vus,
            }],
            iterations_per_vu: None,
            shared_iterations: None,
            max_duration: Duration::from_secs(secs),
            pace: None,
        })
    }

    fn s(x: f64) -> Duration {
        Duration::from_secs_f64(x)
    }

    #[test]
    fn a_rate_raised_then_paused_and_resumed_drives_the_plan_it_says() {
        let mut d = Driven::new(open(100.0, 10));
        let rate = |r| SteerCommand::Level {
            level: Level::Rate(r),
            over: Duration::ZERO,
        };
        assert_eq!(d.apply(s(2.0), rate(400.0)), Ok((100.0, 400.0)));
        assert_eq!(d.apply(s(4.0), SteerCommand::Pause), Ok((400.0, 0.0)));
        assert_eq!(
            d.apply(s(4.5), SteerCommand::Pause),
            Err(SteerRefusal::AlreadyPaused)
        );
        assert_eq!(d.apply(s(6.0), SteerCommand::Resume), Ok((0.0, 400.0)));
        assert_eq!(
            d.apply(s(6.5), SteerCommand::Resume),
            Err(SteerRefusal::NotPaused)
        );
        let Load::Open(o) = &d.load else { panic!() };
        // 2 s at 100, 2 s at 400, 2 s paused, 4 s at 400.
        assert!((o.expected_arrivals() - (200.0 + 800.0 + 1600.0)).abs() < 1e-6);
        assert_eq!(o.duration(), s(10.0), "the planned end is kept");
        for (t, want) in [(1.0, 100.0), (3.0, 400.0), (5.0, 0.0), (9.9, 400.0)] {
            assert_eq!(d.level_at(s(t)), want, "at {t} s");
        }
        assert!((o.count_before(s(3.0)) - 600.0).abs() < 1e-6);
    }

    #[test]
    fn a_ramp_goes_linearly_from_the_level_of_now() {
        let mut d = Driven::new(open(100.0, 10));
        let cmd = SteerCommand::Level {
            level: Level::Rate(300.0),
            over: s(2.0),
        };
        assert_eq!(d.apply(s(1.0), cmd), Ok((100.0, 300.0)));
        for (t, want) in [(0.5, 100.0), (2.0, 200.0), (3.0, 300.0), (8.0, 300.0)] {
            assert!((d.level_at(s(t)) - want).abs() < 1e-9, "at {t} s");
        }
        // A second ramp begins where the first had reached.
        let cmd = SteerCommand::Level {
            level: Level::Rate(100.0),
            over: s(4.0),
        };
        assert_eq!(d.apply(s(2.0), cmd), Ok((200.0, 100.0)));
        assert!((d.level_at(s(4.0)) - 150.0).abs() < 1e-9);
    }

    #[test]
    fn vus_step_and_ramp_and_a_pause_idles_them() {
        let mut d = Driven::new(closed(10, 10));
        let vus = |v, over| SteerCommand::Level {
            level: Level::Vus(v),
            over: s(over),
        };
        assert_eq!(d.apply(s(1.0), vus(40, 0.0)), Ok((10.0, 40.0)));
        assert_eq!(d.level_at(s(1.0)), 40.0);
        assert_eq!(d.apply(s(2.0), vus(20, 2.0)), Ok((40.0, 20.0)));
        assert_eq!(d.level_at(s(3.0)), 30.0);
        assert_eq!(d.apply(s(5.0), SteerCommand::Pause), Ok((20.0, 0.0)));
        assert_eq!(d.level_at(s(5.5)), 0.0);
        // A new level while paused is where it resumes.
        assert_eq!(d.apply(s(6.0), vus(5, 0.0)), Ok((0.0, 0.0)));
        assert_eq!(d.apply(s(7.0), SteerCommand::Resume), Ok((0.0, 5.0)));
        assert_eq!(d.level_at(s(9.0)), 5.0);
    }

    #[test]
    fn re_planned_arrivals_keep_their_numbers_across_workers() {
        use crate::plan::Segment;
        let mut d = Driven::new(open(100.0, 10));
        let raise = SteerCommand::Level {
            level: Level::Rate(400.0),
            over: Duration::ZERO,
        };
        d.apply(s(2.0), raise).unwrap();
        let Load::Open(o) = d.load.clone() else {
            panic!("an open load stays open")
        };
        let whole: Vec<Duration> = o
            .clone()
            .into_arrivals_from(Segment::WHOLE, 1, s(2.0))
            .collect();
        assert_eq!(whole.len(), 3200, "8 s at 400/s");
        assert!(whole[0] >= s(2.0) && whole[0] < s(2.0025), "{:?}", whole[0]);
        let mut split: Vec<Duration> = (0..3)
            .flat_map(|i| {
                o.clone()
                    .into_arrivals_from(Segment::WHOLE.split(i, 3), 1, s(2.0))
                    .collect::<Vec<_>>()
            })
            .collect();
        split.sort();
        assert_eq!(split, whole, "three workers share the arrivals out exactly");
    }

    #[test]
    fn commands_the_model_cannot_follow_are_refused_with_the_fix() {
        let mut d = Driven::new(open(100.0, 10));
        let vus = SteerCommand::Level {
            level: Level::Vus(3),
            over: Duration::ZERO,
        };
        assert_eq!(d.apply(s(1.0), vus), Err(SteerRefusal::RateWanted));
        for bad in [0.0, -1.0, f64::NAN, 1e9] {
            let cmd = SteerCommand::Level {
                level: Level::Rate(bad),
                over: Duration::ZERO,
            };
            assert!(matches!(
                d.apply(s(1.0), cmd),
                Err(SteerRefusal::OutOfBounds(_))
            ));
        }
        assert_eq!(
            d.apply(s(10.0), SteerCommand::Pause),
            Err(SteerRefusal::Ended)
        );
        let mut c = Driven::new(closed(2, 5));
        let rate = SteerCommand::Level {
            level: Level::Rate(3.0),
            over: Duration::ZERO,
        };
        assert_eq!(c.apply(s(1.0), rate), Err(SteerRefusal::VusWanted));
        let mut c = Driven::new(closed(2, 5)).with_vu_ceiling(100, "the open files".into());
        let vus = |v| SteerCommand::Level {
            level: Level::Vus(v),
            over: Duration::ZERO,
        };
        assert!(matches!(
            c.apply(s(1.0), vus(101)),
            Err(SteerRefusal::OutOfBounds(m)) if m.contains("at most 100 (the open files)")
        ));
        assert_eq!(c.apply(s(1.0), vus(100)), Ok((2.0, 100.0)));
        assert_eq!(planned_end(&d.load), s(10.0));
    }
}
