//! Steering a running load from outside (the control API, `loadlab control`, the dashboard's
//! controls): each command becomes the load as driven (`loadlab_scenario::steer`) under one
//! lock, is kept for the record, and is announced to every worker, which re-plans at its
//! next arrival or iteration boundary. A run without a steering handle never looks: the
//! request path pays nothing for it.

use crate::cancel::Cancel;
use loadlab_metrics::{SteerAction, SteerEvent, SteerSource};
use loadlab_scenario::steer::{
    Driven, Level, SteerCommand, SteerError, SteerHandle, SteerRequest, SteerStatus,
};
use loadlab_scenario::Load;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use tokio::sync::watch;
// The workers' clock: the same as the system's in a run, paused with them in a test.
use tokio::time::Instant;

/// The handle a run is steered through; cheap to clone, shared with the control server.
#[derive(Clone)]
pub struct Steering(Arc<Inner>);

struct Inner {
    state: Mutex<State>,
    /// Bumped at each change the workers must follow.
    changed: watch::Sender<u64>,
}

#[derive(Default)]
struct State {
    run: Option<Running>,
    events: Vec<SteerEvent>,
    over: bool,
}

struct Running {
    start: Instant,
    driven: Driven,
    cancel: Cancel,
    /// When the last change took effect, from the start: workers re-plan from there.
    changed_at: Duration,
}

impl Default for Steering {
    fn default() -> Self {
        Self::new()
    }
}

impl Steering {
    pub fn new() -> Self {
        Self(Arc::new(Inner {
            state: Mutex::new(State::default()),
            changed: watch::Sender::new(0),
        }))
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.0.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The run begins: its start, its plan (after the engine's own bounds) and its stop flag.
    pub(crate) fn begin(&self, start: Instant, driven: Driven, cancel: Cancel) {
        let mut state = self.state();
        state.run = Some(Running {
            start,
            driven,
            cancel,
            changed_at: Duration::ZERO,
        });
        state.over = false;
        state.events.clear();
    }

    /// The run is over: no command is followed any more; the commands it followed.
    pub(crate) fn finish(&self) -> Vec<SteerEvent> {
        let mut state = self.state();
        state.over = true;
        state.events.clone()
    }

    /// Follows `request` from now on, or says why not.
    pub fn command_from(
        &self,
        request: SteerRequest,
        source: SteerSource,
    ) -> Result<SteerEvent, SteerError> {
        let mut state = self.state();
        if state.over {
            return Err(SteerError::Over);
        }
        let run = state.run.as_mut().ok_or(SteerError::NotStarted)?;
        let at = Instant::now().saturating_duration_since(run.start);
        let level_now = run.driven.level_at(at);
        let event = match request {
            SteerRequest::Stop => {
                if run.cancel.is_cancelled() {
                    return Err(SteerError::Over);
                }
                run.cancel.drain_because(crate::StopCause::Control);
                SteerEvent {
                    at_s: at.as_secs_f64(),
                    source,
                    action: SteerAction::Stop,
                    before: level_now,
                    after: 0.0,
                    over_s: None,
                }
            }
            SteerRequest::Command(command) => {
                let (before, after) = run.driven.apply(at, command)?;
                run.changed_at = at;
                let (action, over_s) = match command {
                    SteerCommand::Pause => (SteerAction::Pause, None),
                    SteerCommand::Resume => (SteerAction::Resume, None),
                    SteerCommand::Level { level, over } => (
                        match level {
                            Level::Rate(_) => SteerAction::Rate,
                            Level::Vus(_) => SteerAction::Vus,
                        },
                        (!over.is_zero()).then_some(over.as_secs_f64()),
                    ),
                };
                // While paused a new level only waits for the resume: say what it will be.
                let after = match command {
                    SteerCommand::Level { level, .. } => level.value(),
                    _ => after,
                };
                SteerEvent {
                    at_s: at.as_secs_f64(),
                    source,
                    action,
                    before,
                    after,
                    over_s,
                }
            }
        };
        state.events.push(event.clone());
        drop(state);
        // A stop reaches the workers through the run's flag; only a new plan is announced (a
        // stop announced would have them re-plan from the last change again).
        if !matches!(request, SteerRequest::Stop) {
            self.0.changed.send_modify(|v| *v += 1);
        }
        Ok(event)
    }

    /// Where the run stands now.
    pub fn status(&self) -> SteerStatus {
        let state = self.state();
        let (paused, level, unit) = match &state.run {
            Some(run) => {
                let at = Instant::now().saturating_duration_since(run.start);
                let unit = match run.driven.load {
                    Load::Closed(_) => "vus",
                    _ => "rate",
                };
                (run.driven.paused(), run.driven.level_at(at), unit)
            }
            None => (false, 0.0, "rate"),
        };
        SteerStatus {
            started: state.run.is_some(),
            over: state.over,
            paused,
            level,
            unit,
            commands: state.events.len(),
        }
    }

    /// A worker's view of the changes.
    pub(crate) fn watch(&self) -> SteerWatch {
        SteerWatch {
            rx: self.0.changed.subscribe(),
            steering: self.clone(),
            pending: false,
        }
    }
}

impl SteerHandle for Steering {
    fn steer(&self, request: SteerRequest, source: SteerSource) -> Result<SteerEvent, SteerError> {
        self.command_from(request, source)
    }

    fn status(&self) -> SteerStatus {
        Steering::status(self)
    }
}

/// One worker's view: whether the load changed since it last looked, and the load to follow.
pub(crate) struct SteerWatch {
    rx: watch::Receiver<u64>,
    steering: Steering,
    /// A change [`SteerWatch::wait`] saw and [`SteerWatch::changed`] has not handed out.
    pending: bool,
}

impl SteerWatch {
    /// The load as driven and the offset it changed at, when it changed since the last call.
    pub fn changed(&mut self) -> Option<(Load, Duration)> {
        if !(self.pending || self.rx.has_changed().unwrap_or(false)) {
            return None;
        }
        self.pending = false;
        self.rx.mark_unchanged();
        let state = self.steering.state();
        let run = state.run.as_ref()?;
        Some((run.driven.load.clone(), run.changed_at))
    }

    /// Waits until the load changes (never returns once the handle is gone).
    pub async fn wait(&mut self) {
        if self.pending {
            return;
        }
        match self.rx.changed().await {
            Ok(()) => self.pending = true,
            Err(_) => std::future::pending::<()>().await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use loadlab_scenario::steer::SteerRefusal;
    use loadlab_scenario::{OpenLoad, RateStage};

    fn open(rate: f64) -> Load {
        Load::Open(OpenLoad {
            stages: vec![RateStage {
                duration: Duration::from_secs(60),
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

    #[test]
    fn commands_are_followed_only_while_the_run_goes_and_each_is_kept() {
        let steering = Steering::new();
        let pause = SteerRequest::Command(SteerCommand::Pause);
        assert_eq!(
            steering.command_from(pause, SteerSource::Api),
            Err(SteerError::NotStarted)
        );
        let cancel = Cancel::new();
        steering.begin(Instant::now(), Driven::new(open(100.0)), cancel.clone());
        let mut watch = steering.watch();
        assert!(watch.changed().is_none());
        let raise = SteerRequest::Command(SteerCommand::Level {
            level: Level::Rate(400.0),
            over: Duration::ZERO,
        });
        let e = steering.command_from(raise, SteerSource::Cli).unwrap();
        assert_eq!(
            (e.action, e.before, e.after),
            (SteerAction::Rate, 100.0, 400.0)
        );
        let (load, _) = watch.changed().expect("a change to follow");
        assert!(matches!(&load, Load::Open(o) if o.stages.last().unwrap().rate == 400.0));
        assert!(watch.changed().is_none(), "seen once");
        assert_eq!(
            steering.command_from(
                SteerRequest::Command(SteerCommand::Resume),
                SteerSource::Page
            ),
            Err(SteerError::Refused(SteerRefusal::NotPaused))
        );
        let stop = steering
            .command_from(SteerRequest::Stop, SteerSource::Page)
            .unwrap();
        assert_eq!(stop.action, SteerAction::Stop);
        assert!(cancel.is_cancelled() && cancel.drains());
        let events = steering.finish();
        assert_eq!(events.len(), 2, "the refused command is not kept");
        assert_eq!(
            steering.command_from(pause, SteerSource::Api),
            Err(SteerError::Over)
        );
    }
}
