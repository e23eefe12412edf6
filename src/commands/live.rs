//! `--dashboard [ADDR]`: starts the live dashboard before any load (a busy port is bad input,
//! exit 2), gives its tap to the runs, and tells the page how the command ended.

use super::output::{duration_flag, warn};
use crate::cli::DashboardArgs;
use crate::exit::{CliError, Outcome};
use loadlab_live::dashboard::{parse_addr, CommandEnd, Dashboard, DashboardError};
use loadlab_live::LiveTap;
use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// The dashboard of one command, when `--dashboard` was given.
pub struct Live {
    dashboard: Option<Arc<Dashboard>>,
    linger: Duration,
    report: RefCell<Option<PathBuf>>,
}

impl Live {
    pub fn start(args: &DashboardArgs, quiet: bool) -> Result<Live, CliError> {
        let linger = duration_flag("--dashboard-linger", args.dashboard_linger.as_deref())?
            .unwrap_or_default();
        let Some(given) = &args.dashboard else {
            return Ok(Live::off());
        };
        let dashboard = parse_addr(given)
            .and_then(Dashboard::start)
            .map_err(|e| start_error(&e))?;
        if !quiet {
            eprintln!("dashboard: {}", dashboard.url());
            if !dashboard.addr().ip().is_loopback() {
                warn(&format!(
                    "the dashboard listens on {}: anyone who can reach this host on that port can watch the run",
                    dashboard.addr()
                ));
            }
        }
        Ok(Live {
            dashboard: Some(Arc::new(dashboard)),
            linger,
            report: RefCell::new(None),
        })
    }

    /// No dashboard (`loadlab demo`, or no `--dashboard`).
    pub fn off() -> Live {
        Live {
            dashboard: None,
            linger: Duration::ZERO,
            report: RefCell::new(None),
        }
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
            Ok(Outcome::ThresholdsFailed) => end(crate::exit::FAILED, "thresholds failed", ""),
            Ok(Outcome::Invalid) => end(
                crate::exit::ABORTED,
                "interrupted or not a valid measurement",
                "",
            ),
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

fn start_error(e: &DashboardError) -> CliError {
    match e {
        DashboardError::InUse { addr } => CliError::bad_input(format!(
            "--dashboard: {addr} is already in use (another dashboard or server listens there); choose another port, e.g. --dashboard {}",
            std::net::SocketAddr::new(addr.ip(), addr.port().wrapping_add(1).max(1024))
        )),
        DashboardError::BadAddress { .. } => CliError::bad_input(format!(
            "--dashboard: {e}. Put --dashboard after the scenario file, or write --dashboard=ADDR"
        )),
        DashboardError::Bind { .. } => CliError::bad_input(format!(
            "--dashboard: {e}; give an address of this host, e.g. --dashboard 127.0.0.1:5665"
        )),
    }
}
