//! `loadlab control`: the flags of a command sent to a running load.

use super::values;
use clap::Args;
use std::time::Duration;

#[derive(Args)]
pub struct ControlArgs {
    /// Where the run takes commands: the address of its --control or --dashboard
    /// (127.0.0.1:5665, or a port for loopback).
    #[arg(value_name = "ADDR")]
    pub addr: String,
    /// pause, resume, stop, rate RATE (open model, e.g. rate 800/s), vus N (closed model), or
    /// status.
    #[arg(value_name = "COMMAND")]
    pub command: String,
    /// The new rate or VU count, for `rate` and `vus`.
    #[arg(value_name = "VALUE")]
    pub value: Option<String>,
    /// Reach the new level linearly over this long (e.g. 10s) instead of at once.
    #[arg(long, value_name = "DURATION", value_parser = values::duration)]
    pub over: Option<Duration>,
    /// The run's control token (it printed one when its controls listen beyond loopback).
    #[arg(long, value_name = "TOKEN")]
    pub token: Option<String>,
}
