//! `--dashboard [ADDR]` and `--control [ADDR]`: the flags handed to
//! `loadlab_pipeline::live_session`, and what it has to say printed.

use super::output::warn;
use crate::cli::DashboardArgs;
use crate::exit::{CliError, Outcome};
use loadlab_pipeline::live_session::{Live, LiveFlags, Notice, Steerable};

/// Starts the dashboard or the controls the flags ask for (none: [`Live::off`]).
pub fn start(args: &DashboardArgs, quiet: bool, steerable: Steerable) -> Result<Live, CliError> {
    let flags = LiveFlags {
        dashboard: args.dashboard.clone(),
        control: args.control.clone(),
        control_token: args.control_token.clone(),
        linger: args.dashboard_linger.unwrap_or_default(),
    };
    let live = Live::start(&flags, steerable, &mut |notice| {
        match notice {
        // Printed even when quiet: without it nobody can steer the run.
        Notice::Token(t) => eprintln!(
            "control token: {t} (send it as `Authorization: Bearer {t}`, or `loadlab control ... --token {t}`)"
        ),
        _ if quiet => {}
        Notice::Dashboard(url) => eprintln!("dashboard: {url}"),
        Notice::Control(addr) => eprintln!(
            "control: {addr} (loadlab control {addr} pause|resume|stop|rate 800/s|vus 40)"
        ),
        Notice::BeyondLoopback { flag, addr } => warn(&format!(
            "{flag} listens on {addr}: anyone who can reach this host on that port can watch the run (commands need the token)"
        )),
    }
    })?;
    Ok(live)
}

/// Tells the page how the command ended.
pub fn finish(live: &Live, outcome: &Result<Outcome, CliError>) {
    live.finish(match outcome {
        Ok(o) => Ok(*o),
        Err(e) => Err((e.code, e.message.as_str())),
    });
}
