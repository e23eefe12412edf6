//! `loadlab control ADDR COMMAND`: steers a run started with --control or --dashboard through
//! its control API, and says what the run did (or why it refused).

use crate::cli::ControlArgs;
use crate::exit::{CliError, Outcome};
use loadlab_live::dashboard::control::{send, ClientError};
use loadlab_live::dashboard::parse_addr;
use loadlab_scenario::steer::{short_number, Level};
use serde_json::{json, Value};

pub fn execute(args: ControlArgs) -> Result<Outcome, CliError> {
    let addr = parse_addr(&args.addr).map_err(|e| CliError::bad_input(format!("ADDR: {e}")))?;
    let (path, body) = request(&args)?;
    let answer = send(addr, path, body.as_ref(), args.token.as_deref()).map_err(|e| match e {
        ClientError::Unreachable { .. } => CliError::bad_input(e.to_string()),
        ClientError::Refused(why) => CliError::bad_input(format!(
            "the run at {addr} refused `{}`: {why}",
            args.command
        )),
    })?;
    println!("{}", describe(&answer));
    Ok(Outcome::Ok)
}

/// The route and body of the command the arguments ask for.
fn request(args: &ControlArgs) -> Result<(&'static str, Option<Value>), CliError> {
    let command = args.command.as_str();
    let levelled = matches!(command, "rate" | "vus");
    if args.over.is_some() && !levelled {
        return Err(CliError::bad_input(format!(
            "--over ramps to a new level: use it with `rate` or `vus`, not `{command}`"
        )));
    }
    let plain = |path| match &args.value {
        None => Ok((path, Some(json!({})))),
        Some(v) => Err(CliError::bad_input(format!(
            "`{command}` takes no value (got `{v}`)"
        ))),
    };
    match command {
        "pause" => plain("/api/pause"),
        "resume" => plain("/api/resume"),
        "stop" => plain("/api/stop"),
        "status" => plain("/api/control").map(|(p, _)| (p, None)),
        "rate" | "vus" => {
            let Some(value) = &args.value else {
                let example = if command == "rate" {
                    "rate 800/s"
                } else {
                    "vus 40"
                };
                return Err(CliError::bad_input(format!(
                    "`{command}` needs the new level: loadlab control {} {example}",
                    args.addr
                )));
            };
            let level = if command == "rate" {
                loadlab_scenario::units::parse_rate(value)
                    .map_err(|e| CliError::bad_input(format!("rate: {e}")))?;
                json!(value)
            } else {
                json!(value
                    .parse::<u32>()
                    .map_err(|_| CliError::bad_input(format!(
                        "vus: `{value}` is not a whole number of virtual users"
                    )))?)
            };
            let mut body = json!({ command: level });
            if let Some(over) = &args.over {
                body["over"] = json!(over.as_secs_f64());
            }
            Ok(("/api/load", Some(body)))
        }
        other => Err(CliError::bad_input(format!(
            "unknown command `{other}`: use pause, resume, stop, rate RATE, vus N or status"
        ))),
    }
}

/// `paused at 12.3 s (was 400/s)`, `rate 400/s → 800/s over 10s at 2.0 s`, or the status.
fn describe(answer: &Value) -> String {
    let status = &answer["status"];
    let unit = |x: f64| match status["unit"].as_str() {
        Some("vus") => Level::Vus(x.round() as u32).words(),
        _ => Level::Rate(x).words(),
    };
    let Some(event) = answer.get("event") else {
        let state = if status["over"] == true {
            "over"
        } else if status["paused"] == true {
            "paused"
        } else if status["started"] == true {
            "running"
        } else {
            "not started"
        };
        return format!(
            "{state}: {} now, {} command(s) followed",
            unit(status["level"].as_f64().unwrap_or(0.0)),
            status["commands"]
        );
    };
    let at = event["at_s"].as_f64().unwrap_or(0.0);
    let before = unit(event["before"].as_f64().unwrap_or(0.0));
    let after = unit(event["after"].as_f64().unwrap_or(0.0));
    match event["action"].as_str().unwrap_or("") {
        "pause" => format!("paused at {at:.1} s (was {before})"),
        "resume" => format!("resumed at {at:.1} s at {after}"),
        "stop" => format!("stopping at {at:.1} s: requests in flight finish"),
        action => {
            let over = event["over_s"]
                .as_f64()
                .map(|s| format!(" over {}s", short_number(s)))
                .unwrap_or_default();
            let paused = if status["paused"] == true {
                " (paused: it takes effect on resume)"
            } else {
                ""
            };
            format!("{action} {before} → {after}{over} at {at:.1} s{paused}")
        }
    }
}
