//! The load flags of `loadlab run` (`--vus`, `--rate`, `--duration`, `--requests`,
//! `--max-in-flight`, `--batch-window`, `--pace`): the whole load of a `--url` test, or an override of a scenario file's
//! load, as k6's `--vus`/`--duration` override a script's options. Given with a file they
//! replace its load, never ignored: what cannot apply to it is refused, naming the flag.

use crate::error::ScenarioError;
use crate::locate::Ctx;
use crate::model::{ClosedLoad, Load, OpenLoad, RateStage, Scenario, VuStage};
use crate::validate;
use std::time::Duration;

/// What the load flags asked for, parsed where they were read (clap's value parsers); the
/// checks here are those that need the other flags or the file's load.
#[derive(Debug, Clone, Default)]
pub struct LoadFlags {
    pub vus: Option<u32>,
    /// Arrivals per second.
    pub rate: Option<f64>,
    pub duration: Option<Duration>,
    pub requests: Option<u64>,
    pub max_in_flight: Option<u32>,
    /// Closed model: each VU's intended schedule, an iteration per this long (`load.pace`).
    pub pace: Option<Duration>,
    /// Open model: arrivals this close together start together (`load.batch_window`).
    pub batch_window: Option<Duration>,
}

impl LoadFlags {
    pub fn is_empty(&self) -> bool {
        self.vus.is_none()
            && self.rate.is_none()
            && self.duration.is_none()
            && self.requests.is_none()
            && self.max_in_flight.is_none()
            && self.pace.is_none()
            && self.batch_window.is_none()
    }

    fn checked_pace(&self) -> Result<Option<Duration>, ScenarioError> {
        match self.pace {
            Some(d) if d.is_zero() => Err(ScenarioError::flag(
                "--pace",
                "the pace must be above zero",
                Some("give how often each VU starts an iteration, e.g. --pace 1s".into()),
            )),
            pace => Ok(pace),
        }
    }

    /// `--batch-window` where the load is not an open model's.
    fn batch_window_needs_rate() -> ScenarioError {
        ScenarioError::flag(
            "--batch-window",
            "groups an open model's arrivals; this load has no arrival schedule to group",
            Some("give --rate R/s with it, or leave --batch-window out".into()),
        )
    }

    /// `--max-in-flight` where the load is not an open model's.
    fn max_in_flight_needs_rate() -> ScenarioError {
        ScenarioError::flag(
            "--max-in-flight",
            "bounds an open-model load; this load is not one (a closed model's VUs are its bound)",
            Some("give --rate as well, or leave the flag out".into()),
        )
    }

    /// `--pace` where the load is not a closed model's.
    fn pace_needs_vus() -> ScenarioError {
        ScenarioError::flag(
            "--pace",
            "paces each virtual user of a closed model; an open model's arrivals keep their schedule already",
            Some("give --vus N with it, or leave --pace out".into()),
        )
    }

    /// A constant load: `--vus N` (closed) or `--rate R` (open), for `--duration` or
    /// `default_duration`, bounded by `--requests`.
    pub fn constant_load(&self, default_duration: Option<Duration>) -> Result<Load, ScenarioError> {
        let duration = self.duration.or(default_duration);
        if duration.is_none() && self.requests.is_none() {
            return Err(ScenarioError::flag(
                "--duration",
                "give --duration (e.g. 30s) or --requests N",
                None,
            ));
        }
        match (self.vus, self.rate) {
            (Some(_), Some(_)) => Err(ScenarioError::flag(
                "--rate",
                "give either --vus (closed model) or --rate (open model), not both",
                None,
            )),
            (None, None) => Err(ScenarioError::flag(
                "--vus",
                "give --vus N (closed model) or --rate R/s (open model)",
                None,
            )),
            (Some(0), None) => Err(ScenarioError::flag("--vus", "need at least 1 VU", None)),
            (Some(_), None) if self.batch_window.is_some() => Err(Self::batch_window_needs_rate()),
            (Some(_), None) if self.max_in_flight.is_some() => {
                Err(Self::max_in_flight_needs_rate())
            }
            (Some(vus), None) => {
                let bound = duration.unwrap_or(validate::DEFAULT_MAX_DURATION);
                Ok(Load::Closed(ClosedLoad {
                    start_vus: vus,
                    stages: vec![VuStage {
                        duration: bound,
                        vus,
                    }],
                    iterations_per_vu: None,
                    shared_iterations: self.requests,
                    max_duration: bound,
                    pace: self.checked_pace()?,
                }))
            }
            (None, Some(_)) if self.pace.is_some() => Err(Self::pace_needs_vus()),
            (None, Some(rate)) => {
                if rate <= 0.0 {
                    return Err(ScenarioError::flag(
                        "--rate",
                        "the rate must be above zero",
                        None,
                    ));
                }
                let duration = match (duration, self.requests) {
                    (Some(d), _) => d,
                    (None, Some(0)) => {
                        return Err(ScenarioError::flag(
                            "--requests",
                            "must be at least 1",
                            None,
                        ))
                    }
                    (None, Some(n)) => {
                        crate::limits::duration_from_secs(n as f64 / rate).map_err(|m| {
                            ScenarioError::flag(
                                "--requests",
                                format!("{n} requests at {rate}/s: {m}"),
                                Some("give --duration as well, or raise --rate".into()),
                            )
                        })?
                    }
                    (None, None) => unreachable!("checked above"),
                };
                Ok(Load::Open(OpenLoad {
                    stages: vec![RateStage {
                        duration,
                        rate,
                        ramp_to: None,
                    }],
                    poisson: false,
                    max_in_flight: self
                        .max_in_flight
                        .unwrap_or(validate::DEFAULT_MAX_IN_FLIGHT),
                    max_in_flight_given: self.max_in_flight.is_some(),
                    max_arrivals: self.requests,
                    batch_window: self.batch_window.unwrap_or(OpenLoad::DEFAULT_BATCH_WINDOW),
                }))
            }
        }
    }

    /// Overrides a scenario file's load. `--vus`/`--rate` replace it with a constant load
    /// (for `--duration`, else as long as the file's); `--duration` alone sets the length of
    /// a load of one constant stage; `--requests` bounds the run; `--max-in-flight` bounds an
    /// open load. What cannot apply is refused, naming the flag: never ignored.
    pub fn apply_to(&self, scenario: &mut Scenario) -> Result<(), ScenarioError> {
        if self.is_empty() {
            return Ok(());
        }
        if self.vus.is_some() || self.rate.is_some() {
            let mut flags = self.clone();
            if let Load::Open(o) = &scenario.load {
                if flags.max_in_flight.is_none() && flags.rate.is_some() {
                    // A default stays a default (the engine may fit it to the open-files limit).
                    flags.max_in_flight = o.max_in_flight_given.then_some(o.max_in_flight);
                }
                if flags.rate.is_some() {
                    flags.batch_window = flags.batch_window.or(Some(o.batch_window));
                }
            }
            scenario.load = flags.constant_load(Some(scenario.plan().duration()))?;
        } else {
            self.adjust(&mut scenario.load)?;
        }
        if let Some(problem) = scenario.warmup_problem() {
            return Err(ScenarioError::flag(
                "--duration",
                problem,
                Some("give a longer --duration, or a shorter --warmup".into()),
            ));
        }
        validate::resolved(scenario, false, &Ctx::flags())
    }

    /// `--duration`, `--requests` and `--max-in-flight` without `--vus`/`--rate`.
    fn adjust(&self, load: &mut Load) -> Result<(), ScenarioError> {
        if let Some(d) = self.duration {
            let stages = match load {
                Load::Closed(c) => c.stages.len(),
                Load::Open(o) => o.stages.len(),
                Load::Burst(_) => 0,
            };
            let constant = match load {
                Load::Closed(c) => c.stages.len() == 1 && c.start_vus == c.stages[0].vus,
                Load::Open(o) => o.stages.len() == 1 && o.stages[0].ramp_to.is_none(),
                Load::Burst(_) => false,
            };
            if !constant {
                return Err(ScenarioError::flag(
                    "--duration",
                    if stages == 0 {
                        "a burst has no duration to change".to_string()
                    } else {
                        format!(
                            "the scenario's load has {stages} stage(s) or a ramp: which of them should last {}?",
                            crate::units::format_duration(d)
                        )
                    },
                    Some("give --vus N or --rate R/s as well to replace the load with a constant one, or edit the stages in the file".into()),
                ));
            }
            match load {
                Load::Closed(c) => {
                    c.stages[0].duration = d;
                    c.max_duration = d;
                }
                Load::Open(o) => o.stages[0].duration = d,
                Load::Burst(_) => unreachable!("refused above"),
            }
        }
        if let Some(n) = self.requests {
            if n == 0 {
                return Err(ScenarioError::flag(
                    "--requests",
                    "must be at least 1",
                    None,
                ));
            }
            match load {
                Load::Closed(c) => {
                    c.iterations_per_vu = None;
                    c.shared_iterations = Some(n);
                }
                Load::Open(o) => o.max_arrivals = Some(n),
                Load::Burst(_) => {
                    return Err(ScenarioError::flag(
                        "--requests",
                        "a burst sends its own count of requests",
                        Some("set `load.requests` in the file".into()),
                    ))
                }
            }
        }
        if let Some(pace) = self.checked_pace()? {
            match load {
                Load::Closed(c) => c.pace = Some(pace),
                _ => return Err(Self::pace_needs_vus()),
            }
        }
        if let Some(window) = self.batch_window {
            match load {
                Load::Open(o) => o.batch_window = window,
                _ => return Err(Self::batch_window_needs_rate()),
            }
        }
        if let Some(m) = self.max_in_flight {
            match load {
                Load::Open(o) => {
                    o.max_in_flight = m;
                    o.max_in_flight_given = true;
                }
                _ => return Err(Self::max_in_flight_needs_rate()),
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STAGED: &str = "
target: http://127.0.0.1:1
load:
  model: open
  stages:
    - { duration: 1s, rate: 5/s, ramp_to: 20/s }
    - { duration: 2s, rate: 20/s }
  max_in_flight: 50
flows:
  - name: f
    steps:
      - get: /
";
    const CONSTANT_VUS: &str = "
target: http://127.0.0.1:1
load: { model: closed, vus: 4, duration: 10s }
flows:
  - name: f
    steps:
      - get: /
";

    fn flags(vus: Option<u32>, rate: Option<&str>, duration: Option<&str>) -> LoadFlags {
        LoadFlags {
            vus,
            rate: rate.map(|r| crate::units::parse_rate(r).unwrap()),
            duration: duration.map(|d| crate::units::parse_duration(d).unwrap()),
            ..LoadFlags::default()
        }
    }

    /// What each combination of flags makes of a file's load: the model, the planned
    /// length, and the peak (VUs or arrivals/s); or the flag the refusal names.
    #[test]
    fn load_flags_override_a_files_load_or_say_why_not() {
        type Made = Result<(&'static str, f64, f64), &'static str>;
        let cases: [(&str, LoadFlags, Made); 10] = [
            (
                STAGED,
                flags(None, Some("50/s"), Some("2s")),
                Ok(("open", 2.0, 50.0)),
            ),
            (STAGED, flags(Some(3), None, None), Ok(("closed", 3.0, 3.0))),
            (STAGED, flags(None, None, Some("2s")), Err("--duration")),
            (
                CONSTANT_VUS,
                flags(None, None, Some("2s")),
                Ok(("closed", 2.0, 4.0)),
            ),
            (
                CONSTANT_VUS,
                flags(None, Some("10/s"), None),
                Ok(("open", 10.0, 10.0)),
            ),
            (STAGED, flags(Some(2), Some("5/s"), None), Err("--rate")),
            (
                CONSTANT_VUS,
                LoadFlags {
                    max_in_flight: Some(5),
                    ..LoadFlags::default()
                },
                Err("--max-in-flight"),
            ),
            (
                CONSTANT_VUS,
                LoadFlags {
                    pace: Some(Duration::from_millis(100)),
                    ..LoadFlags::default()
                },
                Ok(("closed", 10.0, 4.0)),
            ),
            (
                STAGED,
                LoadFlags {
                    pace: Some(Duration::from_millis(100)),
                    ..LoadFlags::default()
                },
                Err("--pace"),
            ),
            (
                CONSTANT_VUS,
                LoadFlags {
                    pace: Some(Duration::ZERO),
                    ..LoadFlags::default()
                },
                Err("--pace"),
            ),
        ];
        for (yaml, f, want) in cases {
            let mut s = Scenario::parse(yaml, "t.yaml").unwrap();
            let got = f.apply_to(&mut s).map(|()| {
                let plan = s.plan();
                let (model, peak) = match &s.load {
                    Load::Closed(c) => (
                        "closed",
                        f64::from(c.stages.iter().map(|x| x.vus).max().unwrap()),
                    ),
                    Load::Open(o) => ("open", o.stages.iter().map(|x| x.rate).fold(0.0, f64::max)),
                    Load::Burst(_) => ("burst", 0.0),
                };
                (model, plan.duration().as_secs_f64(), peak)
            });
            match (got, want) {
                (Ok(g), Ok(w)) => assert_eq!(g, w, "{f:?}"),
                (Err(e), Err(flag)) => {
                    assert!(e.to_string().contains(flag), "{f:?}: {e}")
                }
                (g, w) => panic!("{f:?}: got {g:?}, want {w:?}"),
            }
        }
        // An open file's in-flight bound is kept when --rate replaces its stages.
        let mut s = Scenario::parse(STAGED, "t.yaml").unwrap();
        flags(None, Some("50/s"), None).apply_to(&mut s).unwrap();
        assert!(matches!(&s.load, Load::Open(o) if o.max_in_flight == 50));
        assert_eq!(
            s.plan().duration(),
            Duration::from_secs(3),
            "as long as the file's"
        );
    }

    /// `--pace` sets a closed load's schedule, whether the file's load or the one `--vus`
    /// makes; with `--rate` it is refused.
    #[test]
    fn the_pace_flag_paces_a_closed_load() {
        let paced = |f: LoadFlags, yaml: &str| {
            let mut s = Scenario::parse(yaml, "t.yaml").unwrap();
            f.apply_to(&mut s).map(|()| match &s.load {
                Load::Closed(c) => c.pace,
                _ => None,
            })
        };
        let pace = Some(Duration::from_millis(250));
        let ms250 = Some(Duration::from_millis(250));
        let alone = LoadFlags {
            pace,
            ..LoadFlags::default()
        };
        assert_eq!(paced(alone, CONSTANT_VUS).unwrap(), ms250);
        let with_vus = LoadFlags {
            vus: Some(2),
            pace,
            ..LoadFlags::default()
        };
        assert_eq!(paced(with_vus, STAGED).unwrap(), ms250);
        let with_rate = LoadFlags {
            rate: Some(10.0),
            pace,
            ..LoadFlags::default()
        };
        let e = paced(with_rate, CONSTANT_VUS).unwrap_err().to_string();
        assert!(e.contains("--pace") && e.contains("--vus"), "{e}");
    }

    /// `--batch-window` sets an open load's window, whether the file's load or the one
    /// `--rate` makes; `--rate` alone keeps the file's; a closed load refuses it, and a window
    /// wider than the bound is refused naming the flag.
    #[test]
    fn the_batch_window_flag_sets_an_open_loads_window() {
        const WINDOWED: &str = "
target: http://127.0.0.1:1
load: { model: open, rate: 10/s, duration: 2s, batch_window: 200us }
flows:
  - name: f
    steps:
      - get: /
";
        let window = |f: LoadFlags, yaml: &str| {
            let mut s = Scenario::parse(yaml, "t.yaml").unwrap();
            f.apply_to(&mut s).map(|()| match &s.load {
                Load::Open(o) => Some(o.batch_window),
                _ => None,
            })
        };
        let given = |w: Duration, rate: Option<f64>, vus: Option<u32>| LoadFlags {
            batch_window: Some(w),
            rate,
            vus,
            ..LoadFlags::default()
        };
        let zero = Duration::ZERO;
        let us200 = Duration::from_micros(200);
        type Window = Result<Option<Duration>, &'static str>;
        let cases: [(&str, LoadFlags, Window); 7] = [
            (STAGED, given(zero, None, None), Ok(Some(zero))),
            (
                STAGED,
                LoadFlags::default(),
                Ok(Some(OpenLoad::DEFAULT_BATCH_WINDOW)),
            ),
            (WINDOWED, LoadFlags::default(), Ok(Some(us200))),
            (WINDOWED, flags(None, Some("50/s"), None), Ok(Some(us200))),
            (CONSTANT_VUS, given(zero, Some(20.0), None), Ok(Some(zero))),
            (CONSTANT_VUS, given(zero, None, None), Err("--batch-window")),
            (
                STAGED,
                given(Duration::from_millis(11), None, None),
                Err("--batch-window"),
            ),
        ];
        for (yaml, f, want) in cases {
            match (window(f.clone(), yaml), want) {
                (Ok(g), Ok(w)) => assert_eq!(g, w, "{f:?}"),
                (Err(e), Err(flag)) => assert!(e.to_string().contains(flag), "{f:?}: {e}"),
                (g, w) => panic!("{f:?}: got {g:?}, want {w:?}"),
            }
        }
        let e = window(given(zero, None, Some(3)), STAGED)
            .unwrap_err()
            .to_string();
        assert!(e.contains("--batch-window") && e.contains("--rate"), "{e}");
    }

    /// `--max-in-flight` bounds an open load only: with `--vus` (a closed model, whose VUs are
    /// its bound) it is refused naming both flags, never ignored; `--vus` over a file whose
    /// open load sets `max_in_flight` is no such conflict.
    #[test]
    fn max_in_flight_with_vus_is_refused() {
        let url = LoadFlags {
            vus: Some(1),
            max_in_flight: Some(5),
            duration: Some(Duration::from_secs(1)),
            ..LoadFlags::default()
        };
        let e = url.constant_load(None).unwrap_err().to_string();
        assert!(e.contains("--max-in-flight") && e.contains("--rate"), "{e}");
        let mut s = Scenario::parse(STAGED, "t.yaml").unwrap();
        let e = url.apply_to(&mut s).unwrap_err().to_string();
        assert!(e.contains("--max-in-flight"), "{e}");
        let vus_only = LoadFlags {
            vus: Some(2),
            ..LoadFlags::default()
        };
        vus_only.apply_to(&mut s).unwrap();
        assert!(matches!(s.load, Load::Closed(_)));
    }
}
