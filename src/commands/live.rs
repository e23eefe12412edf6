//! `--dashboard [ADDR]` and `--control [ADDR]`: starts the live dashboard (or the control API
//! alone) before any load (a busy port is bad input, exit 2), gives its tap to the runs and
//! the run its steering, and tells the page how the command ended.

use super::output::warn;
use crate::cli::DashboardArgs;
use crate::exit::{CliError, Outcome};
use loadlab_engine::Steering;
use loadlab_live::dashboard::control::{new_token, Control};
use loadlab_live::dashboard::{parse_addr, CommandEnd, Dashboard, DashboardError};
use loadlab_live::LiveTap;
use std::cell::RefCell;
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
    pub fn start(
        args: &DashboardArgs,
        quiet: bool,
        steerable: Steerable,
    ) -> Result<Live, CliError> {
        let linger = args.dashboard_linger.unwrap_or_default();
        if steerable == Steerable::No && (args.control.is_some() || args.control_token.is_some()) {
            return Err(CliError::bad_input(
                "--control steers one `loadlab run`: a study's or capacity search's runs must follow their plan; drop --control (--dashboard watches them)",
            ));
        }
        let (given, flag) = match (&args.dashboard, &args.control) {
            (Some(d), _) => (d, "--dashboard"),
            (None, Some(c)) => (c, "--control"),
            (None, None) if args.control_token.is_some() => {
                return Err(CliError::bad_input(
                    "--control-token guards the controls: give it with --control ADDR or --dashboard ADDR",
                ))
            }
            (None, None) => return Ok(Live::off()),
        };
        let mut dashboard = parse_addr(given)
            .and_then(Dashboard::start)
            .map_err(|e| start_error(flag, &e))?;
        if args.dashboard.is_none() {
            dashboard = dashboard.without_page();
        }
        let loopback = dashboard.addr().ip().is_loopback();
        let steering = (steerable == Steerable::Yes).then(Steering::new);
        if let Some(steering) = &steering {
            let token = match (&args.control_token, loopback) {
                (Some(t), _) => Some(t.clone()),
                (None, true) => None,
                (None, false) => {
                    let t = new_token().map_err(|e| {
                        CliError::bad_input(format!("{flag}: cannot make a control token ({e}); give one with --control-token"))
                    })?;
                    // Printed even when quiet: without it nobody can steer the run.
                    eprintln!("control token: {t} (send it as `Authorization: Bearer {t}`, or `loadlab control ... --token {t}`)");
                    Some(t)
                }
            };
            dashboard = dashboard.with_control(Control {
                handle: Arc::new(steering.clone()),
                token,
            });
        }
        if !quiet {
            match (args.dashboard.is_some(), steering.is_some()) {
                (true, _) => eprintln!("dashboard: {}", dashboard.url()),
                (false, _) => eprintln!(
                    "control: {} (loadlab control {} pause|resume|stop|rate 800/s|vus 40)",
                    dashboard.addr(),
                    dashboard.addr()
                ),
            }
            if !loopback {
                warn(&format!(
                    "{flag} listens on {}: anyone who can reach this host on that port can watch the run (commands need the token)",
                    dashboard.addr()
                ));
            }
        }
        Ok(Live {
            dashboard: Some(Arc::new(dashboard)),
            steering,
            linger,
            report: RefCell::new(None),
            judged: RefCell::new((None, String::new())),
        })
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
        let why = loadlab_pipeline::why_not_ok(r, allow_saturated);
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

    /// Tells the page how the command ended (and serves the report), then lingers if asked.
    pub fn finish(&self, result: &Result<Outcome, CliError>) {
        let Some(dashboard) = &self.dashboard else {
            return;
        };
        let end = match result {
            Ok(Outcome::Ok) => end(crate::exit::OK, "passed", ""),
            Ok(Outcome::ThresholdsFailed) => end(
                crate::exit::FAILED,
                "thresholds failed",
                &self.judged.borrow().1,
            ),
            Ok(Outcome::Invalid) => match &*self.judged.borrow() {
                (Some(verdict), why) => end(crate::exit::ABORTED, verdict, why),
                (None, why) => end(
                    crate::exit::ABORTED,
                    "interrupted or not a valid measurement",
                    why,
                ),
            },
            Err(e) => end(e.code, "stopped by an error", &e.message),
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

fn start_error(flag: &str, e: &DashboardError) -> CliError {
    match e {
        DashboardError::InUse { addr } => CliError::bad_input(format!(
            "{flag}: {addr} is already in use (another dashboard or server listens there); choose another port, e.g. {flag} {}",
            std::net::SocketAddr::new(addr.ip(), addr.port().wrapping_add(1).max(1024))
        )),
        DashboardError::BadAddress { .. } => CliError::bad_input(format!(
            "{flag}: {e}. Put {flag} after the scenario file, or write {flag}=ADDR"
        )),
        DashboardError::Bind { .. } => CliError::bad_input(format!(
            "{flag}: {e}; give an address of this host, e.g. {flag} 127.0.0.1:5665"
        )),
    }
}
