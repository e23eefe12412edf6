//! Runs the built-in target from the command line, for benchmarking it on its own:
//!
//! ```text
//! cargo run --release -p loadlab-builtin-target --example serve -- [ADDR] [--threads N]
//!     [--workers N] [--service-ms MS] [--dist fixed|exp] [--queue-limit N] [--error-rate P]
//!     [--tls]
//! ```
//!
//! ADDR defaults to 127.0.0.1:8080; `--tls` serves HTTPS with a self-signed certificate.
//! Stops on Ctrl-C or SIGTERM.

use std::process::ExitCode;
use std::time::Duration;

use loadlab_builtin_target::{run_until_ctrl_c, TargetConfig};

fn parse_args() -> Result<TargetConfig, String> {
    let mut config = TargetConfig::default();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = |name: &str| args.next().ok_or(format!("{name} needs a value"));
        let bad = |name: &str, e: &dyn std::fmt::Display| format!("invalid {name}: {e}");
        match arg.as_str() {
            "--threads" => config.threads = value(&arg)?.parse().map_err(|e| bad(&arg, &e))?,
            "--workers" => config.workers = Some(value(&arg)?.parse().map_err(|e| bad(&arg, &e))?),
            "--service-ms" => {
                let ms: u64 = value(&arg)?.parse().map_err(|e| bad(&arg, &e))?;
                config.service_time = Duration::from_millis(ms);
            }
            "--dist" => config.service_dist = value(&arg)?.parse().map_err(|e| bad(&arg, &e))?,
            "--queue-limit" => {
                config.queue_limit = Some(value(&arg)?.parse().map_err(|e| bad(&arg, &e))?)
            }
            "--tls" => config.tls = Some(loadlab_builtin_target::TargetTls::SelfSigned),
            "--error-rate" => {
                config.error_rate = value(&arg)?.parse().map_err(|e| bad(&arg, &e))?
            }
            addr if !addr.starts_with('-') => {
                config.listen = addr.parse().map_err(|e| bad("address", &e))?
            }
            other => return Err(format!("unknown option {other}")),
        }
    }
    Ok(config)
}

fn main() -> ExitCode {
    let result =
        parse_args().and_then(|config| run_until_ctrl_c(config).map_err(|e| e.to_string()));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
