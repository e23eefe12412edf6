//! `--dashboard [ADDR]` and `--control [ADDR]` of a command: the live dashboard (or the
//! control API alone) started before any load (a busy port is bad input), its tap given to the
//! runs and the run its steering, and the page told how the command ended. What the user must
//! be told (the address, a control token) comes back as [`Notice`]s for the caller to print.

use crate::{exit_code, Outcome, PipelineError};
use loadlab_engine::Steering;
use loadlab_live::dashboard::control::{new_token, Control};
use loadlab_live::dashboard::{parse_addr, CommandEnd, Dashboard, DashboardError};
use loadlab_live::LiveTap;
use std::cell::RefCell;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// Whether the command's run may be steered (`loadlab run`), or its runs follow their plan
/// (a study, a capacity search).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Steerable {
    Yes,
    No,
}

/// The flags as given.
#[derive(Debug, Clone, Default)]
pub struct LiveFlags {
    pub dashboard: Option<String>,
    pub control: Option<String>,
    pub control_token: Option<String>,
    /// Keep the dashboard up this long after the command ends.
    pub linger: Duration,
}

/// What the user is told when the dashboard or the controls start.
#[derive(Debug, Clone, PartialEq)]
pub enum Notice {
    /// The page's address.
    Dashboard(String),
    /// The control API's address (no page).
    Control(SocketAddr),
    /// The token commands need (made because the controls listen beyond loopback); to be
    /// told even when quiet: without it nobody can steer the run.
    Token(String),
    /// `flag` listens on `addr`, beyond loopback: anyone who can reach it can watch.
    BeyondLoopback {
        flag: &'static str,
        addr: SocketAddr,
    },
}

/// The dashboard of one command, when `--dashboard` (or `--control`) was given.
pub struct Live {
    dashboard: Option<Arc<Dashboard>>,
    steering: Option<Steering>,
    linger: Duration,
    report: RefCell<Option<PathBuf>>,
    /// How the command's run ended, for the page's end: its verdict when it is not a result
    /// (interrupted, invalid), and why it is not ok (reasons, failed thresholds).
    judged: RefCell<(Option<String>, String)>,
}

impl Live {
    /// Starts what the flags ask for; `notice` hears what the user must be told.
    pub fn start(
        flags: &LiveFlags,
        steerable: Steerable,
        notice: &mut dyn FnMut(Notice),
    ) -> Result<Live, PipelineError> {
        let Some((given, flag)) = Self::asked(flags, steerable)? else {
            return Ok(Live::off());
        };
        let mut dashboard = parse_addr(given)
            .and_then(Dashboard::start)
            .map_err(|e| start_error(flag, &e))?;
        if flags.dashboard.is_none() {
            dashboard = dashboard.without_page();
        }
        let loopback = dashboard.addr().ip().is_loopback();
        let steering = (steerable == Steerable::Yes).then(Steering::new);
        if let Some(steering) = &steering {
            let token = match (&flags.control_token, loopback) {
                (Some(t), _) => Some(t.clone()),
                (None, true) => None,
                (None, false) => {
                    let t = new_token().map_err(|e| {
                        PipelineError::bad_input(format!("{flag}: cannot make a control token ({e}); give one with --control-token"))
                    })?;
                    notice(Notice::Token(t.clone()));
                    Some(t)
                }
            };
            dashboard = dashboard.with_control(Control {
                handle: Arc::new(steering.clone()),
                token,
            });
        }
        notice(match flags.dashboard {
            Some(_) => Notice::Dashboard(dashboard.url()),
            None => Notice::Control(dashboard.addr()),
        });
        if !loopback {
            notice(Notice::BeyondLoopback {
                flag,
                addr: dashboard.addr(),
            });
        }
        Ok(Live {
            dashboard: Some(Arc::new(dashboard)),
            steering,
            linger: flags.linger,
            report: RefCell::new(None),
            judged: RefCell::new((None, String::new())),
        })
    }

    /// The address asked for and the flag that asked, if any; the flags that cannot go
    /// together are bad input.
    fn asked(
        flags: &LiveFlags,
        steerable: Steerable,
    ) -> Result<Option<(&str, &'static str)>, PipelineError> {
        if steerable == Steerable::No && (flags.control.is_some() || flags.control_token.is_some())
        {
            return Err(PipelineError::bad_input(
                "--control steers one `loadlab run`: a study's or capacity search's runs must follow their plan; drop --control (--dashboard watches them)",
            ));
        }
        match (&flags.dashboard, &flags.control) {
            (Some(d), _) => Ok(Some((d, "--dashboard"))),
            (None, Some(c)) => Ok(Some((c, "--control"))),
            (None, None) if flags.control_token.is_some() => Err(PipelineError::bad_input(
                "--control-token guards the controls: give it with --control ADDR or --dashboard ADDR",
            )),
            (None, None) => Ok(None),
        }
    }

    /// What steers the run, when the command's run may be steered and something listens.
    pub fn steering(&self) -> Option<&Steering> {
        self.steering.as_ref()
    }

    /// No dashboard (`loadlab demo`, or no `--dashboard`).
    pub fn off() -> Live {
        Live {
            dashboard: None,
            steering: None,
            linger: Duration::ZERO,
            report: RefCell::new(None),
            judged: RefCell::new((None, String::new())),
        }
    }

    /// The run the command made, judged: the page's end says why it is not a result (an
    /// interrupted run apart from an invalid one), in the words of the terminal.
    pub fn run_judged(&self, r: &loadlab_metrics::RunResult, allow_saturated: bool) {
        let why = crate::why_not_ok(r, allow_saturated);
        let verdict = if r.interrupted {
            Some("interrupted: the numbers cover only what ran before it stopped")
        } else if !r.valid && r.validity_judged() {
            Some("not a valid measurement")
        } else {
            None
        };
        *self.judged.borrow_mut() = (verdict.map(str::to_string), why.join("; "));
    }

    /// The command wrote this HTML report: the page links it at the end.
    pub fn report_written(&self, path: &Path) {
        *self.report.borrow_mut() = Some(path.to_path_buf());
    }

    /// The taps every run of the command feeds.
    pub fn taps(&self) -> Vec<Arc<dyn LiveTap>> {
        self.dashboard
            .iter()
            .map(|d| d.clone() as Arc<dyn LiveTap>)
            .collect()
    }

    pub fn dashboard(&self) -> Option<&Dashboard> {
        self.dashboard.as_deref()
    }

    /// Tells the page how the command ended (its outcome, or the exit code and message of the
    /// error that stopped it; and serves the report), then lingers if asked.
    pub fn finish(&self, ended: Result<Outcome, (i32, &str)>) {
        let Some(dashboard) = &self.dashboard else {
            return;
        };
        let judged = self.judged.borrow();
        let end = match ended {
            Ok(Outcome::Ok) => end(exit_code::OK, "passed", ""),
            Ok(Outcome::ThresholdsFailed) => end(exit_code::FAILED, "thresholds failed", &judged.1),
            Ok(Outcome::Invalid) => match &*judged {
                (Some(verdict), why) => end(exit_code::ABORTED, verdict, why),
                (None, why) => end(
                    exit_code::ABORTED,
                    "interrupted or not a valid measurement",
                    why,
                ),
            },
            Err((code, message)) => end(code, "stopped by an error", message),
        };
        dashboard.finish(end, self.report.borrow().clone(), self.linger);
    }
}

fn end(exit_status: i32, verdict: &str, message: &str) -> CommandEnd {
    CommandEnd {
        exit_status,
        verdict: verdict.to_string(),
        message: message.to_string(),
        report: None,
    }
}

fn start_error(flag: &str, e: &DashboardError) -> PipelineError {
    match e {
        DashboardError::InUse { addr } => PipelineError::bad_input(format!(
            "{flag}: {addr} is already in use (another dashboard or server listens there); choose another port, e.g. {flag} {}",
            SocketAddr::new(addr.ip(), addr.port().wrapping_add(1).max(1024))
        )),
        DashboardError::BadAddress { .. } => PipelineError::bad_input(format!(
            "{flag}: {e}. Put {flag} after the scenario file, or write {flag}=ADDR"
        )),
        DashboardError::Bind { .. } => PipelineError::bad_input(format!(
            "{flag}: {e}; give an address of this host, e.g. {flag} 127.0.0.1:5665"
        )),
    }
}
