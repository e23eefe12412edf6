//! The client of the control API (`loadlab control ADDR COMMAND`): which request each command
//! is (route and JSON body), sending it, and what the run's answer says in words. Beside the
//! server ([`crate::dashboard::control`]) so that the two sides of the API change together.

use loadlab_scenario::steer::{short_number, Level};
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::time::Duration;

/// A command for a running load, checked before anything is sent.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    Pause,
    Resume,
    Stop,
    Status,
    /// A new arrival rate (open model), as given (`800/s`), optionally reached linearly.
    Rate {
        rate: String,
        over: Option<Duration>,
    },
    /// A new VU count (closed model), optionally reached linearly.
    Vus {
        vus: u32,
        over: Option<Duration>,
    },
}

/// `GET` or `POST`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    Get,
    Post,
}

/// The HTTP request a command is: method, route and JSON body (`None` for a `GET`).
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    pub method: Method,
    pub path: &'static str,
    pub body: Option<Value>,
}

/// Why a command was not sent, or what came of sending it.
#[derive(Debug, thiserror::Error)]
pub enum ControlClientError {
    /// The command line does not make a command; the message says the fix.
    #[error("{0}")]
    BadCommand(String),
    #[error("cannot reach the run at {addr}: {message} (is it running with --control or --dashboard there?)")]
    Unreachable { addr: String, message: String },
    #[error("the run at {addr} refused `{command}`: {why}")]
    Refused {
        addr: SocketAddr,
        command: &'static str,
        why: String,
    },
}

fn bad(message: String) -> ControlClientError {
    ControlClientError::BadCommand(message)
}

impl Command {
    /// The command `word` (`pause`, `resume`, `stop`, `status`, `rate`, `vus`) with its
    /// `value` and `--over`; `addr` as the user gave it, for the example in a message.
    pub fn parse(
        word: &str,
        value: Option<&str>,
        over: Option<Duration>,
        addr: &str,
    ) -> Result<Command, ControlClientError> {
        let levelled = matches!(word, "rate" | "vus");
        if over.is_some() && !levelled {
            return Err(bad(format!(
                "--over ramps to a new level: use it with `rate` or `vus`, not `{word}`"
            )));
        }
        let plain = |command| match value {
            None => Ok(command),
            Some(v) => Err(bad(format!("`{word}` takes no value (got `{v}`)"))),
        };
        match word {
            "pause" => plain(Command::Pause),
            "resume" => plain(Command::Resume),
            "stop" => plain(Command::Stop),
            "status" => plain(Command::Status),
            "rate" | "vus" => {
                let Some(value) = value else {
                    let example = if word == "rate" {
                        "rate 800/s"
                    } else {
                        "vus 40"
                    };
                    return Err(bad(format!(
                        "`{word}` needs the new level: loadlab control {addr} {example}"
                    )));
                };
                if word == "rate" {
                    loadlab_scenario::units::parse_rate(value)
                        .map_err(|e| bad(format!("rate: {e}")))?;
                    Ok(Command::Rate {
                        rate: value.to_string(),
                        over,
                    })
                } else {
                    let vus = value.parse::<u32>().map_err(|_| {
                        bad(format!(
                            "vus: `{value}` is not a whole number of virtual users"
                        ))
                    })?;
                    Ok(Command::Vus { vus, over })
                }
            }
            other => Err(bad(format!(
                "unknown command `{other}`: use pause, resume, stop, rate RATE, vus N or status"
            ))),
        }
    }

    /// The command's word on the command line.
    pub fn word(&self) -> &'static str {
        match self {
            Command::Pause => "pause",
            Command::Resume => "resume",
            Command::Stop => "stop",
            Command::Status => "status",
            Command::Rate { .. } => "rate",
            Command::Vus { .. } => "vus",
        }
    }

    /// The request that carries the command to the control API.
    pub fn request(&self) -> Request {
        let post = |path, body| Request {
            method: Method::Post,
            path,
            body: Some(body),
        };
        let level = |key: &str, level: Value, over: &Option<Duration>| {
            let mut body = json!({ key: level });
            if let Some(over) = over {
                body["over"] = json!(over.as_secs_f64());
            }
            post("/api/load", body)
        };
        match self {
            Command::Pause => post("/api/pause", json!({})),
            Command::Resume => post("/api/resume", json!({})),
            Command::Stop => post("/api/stop", json!({})),
            Command::Status => Request {
                method: Method::Get,
                path: "/api/control",
                body: None,
            },
            Command::Rate { rate, over } => level("rate", json!(rate), over),
            Command::Vus { vus, over } => level("vus", json!(vus), over),
        }
    }
}

/// The run's answer to a command: what it did (its `event`) and where it stands (`status`).
#[derive(Debug, Clone, PartialEq)]
pub struct Reply(pub Value);

/// Sends `command` to the run whose control API listens at `addr`; its answer.
pub fn send(
    addr: SocketAddr,
    command: &Command,
    token: Option<&str>,
) -> Result<Reply, ControlClientError> {
    let request = command.request();
    let unreachable = |message: String| ControlClientError::Unreachable {
        addr: addr.to_string(),
        message,
    };
    let refused = |why: String| ControlClientError::Refused {
        addr,
        command: command.word(),
        why,
    };
    let client = loadlab_http_client::client(Duration::from_secs(5), "loadlab-control")
        .map_err(unreachable)?;
    let url = format!("http://{addr}{}", request.path);
    let mut http = match (request.method, &request.body) {
        (Method::Post, body) => client
            .post(&url)
            .header("Content-Type", "application/json")
            .header("X-Loadlab-Source", "cli")
            .body(body.as_ref().map(Value::to_string).unwrap_or_default()),
        (Method::Get, _) => client.get(&url),
    };
    if let Some(t) = token {
        http = http.header("Authorization", format!("Bearer {t}"));
    }
    let response = loadlab_http_client::send(http).map_err(unreachable)?;
    let ok = response.status().is_success();
    let text = response
        .text()
        .map_err(|e| unreachable(loadlab_http_client::error_chain(&e)))?;
    let value: Value = serde_json::from_str(&text)
        .map_err(|_| refused(format!("{addr} answered something else: {text}")))?;
    if ok {
        Ok(Reply(value))
    } else {
        Err(refused(
            value["error"].as_str().unwrap_or(&text).to_string(),
        ))
    }
}

/// `paused at 12.3 s (was 400/s)`, `rate 400/s → 800/s over 10s at 2.0 s`, or the status.
impl std::fmt::Display for Reply {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let answer = &self.0;
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
            return write!(
                f,
                "{state}: {} now, {} command(s) followed",
                unit(status["level"].as_f64().unwrap_or(0.0)),
                status["commands"]
            );
        };
        let at = event["at_s"].as_f64().unwrap_or(0.0);
        let before = unit(event["before"].as_f64().unwrap_or(0.0));
        let after = unit(event["after"].as_f64().unwrap_or(0.0));
        match event["action"].as_str().unwrap_or("") {
            "pause" => write!(f, "paused at {at:.1} s (was {before})"),
            "resume" => write!(f, "resumed at {at:.1} s at {after}"),
            "stop" => write!(f, "stopping at {at:.1} s: requests in flight finish"),
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
                write!(f, "{action} {before} → {after}{over} at {at:.1} s{paused}")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_command_is_one_request() {
        let secs = |s: f64| Some(Duration::from_secs_f64(s));
        let post = |path, body: Value| (Method::Post, path, Some(body));
        let table: Vec<(&str, Option<&str>, Option<Duration>, _)> = vec![
            ("pause", None, None, post("/api/pause", json!({}))),
            ("resume", None, None, post("/api/resume", json!({}))),
            ("stop", None, None, post("/api/stop", json!({}))),
            ("status", None, None, (Method::Get, "/api/control", None)),
            (
                "rate",
                Some("800/s"),
                None,
                post("/api/load", json!({ "rate": "800/s" })),
            ),
            (
                "rate",
                Some("800/s"),
                secs(10.0),
                post("/api/load", json!({ "rate": "800/s", "over": 10.0 })),
            ),
            (
                "vus",
                Some("40"),
                None,
                post("/api/load", json!({ "vus": 40 })),
            ),
            (
                "vus",
                Some("40"),
                secs(2.5),
                post("/api/load", json!({ "vus": 40, "over": 2.5 })),
            ),
        ];
        for (word, value, over, (method, path, body)) in table {
            let command = Command::parse(word, value, over, "5665").unwrap();
            assert_eq!(command.word(), word);
            let request = command.request();
            assert_eq!(
                (request.method, request.path, request.body.clone()),
                (method, path, body.clone()),
                "{word} {value:?} {over:?}"
            );
            // What the client sends is what the server reads as the same command.
            if let Some(body) = body {
                let bytes = body.to_string();
                assert!(
                    crate::dashboard::control::parse_command(path, bytes.as_bytes()).is_ok(),
                    "{word}: {bytes}"
                );
            }
        }
    }

    #[test]
    fn a_command_line_that_makes_no_command_says_the_fix() {
        let fails = |word, value, over: Option<Duration>| {
            Command::parse(word, value, over, "5665")
                .unwrap_err()
                .to_string()
        };
        let ramp = Some(Duration::from_secs(1));
        assert_eq!(
            fails("pause", None, ramp),
            "--over ramps to a new level: use it with `rate` or `vus`, not `pause`"
        );
        assert_eq!(
            fails("dance", None, ramp),
            "--over ramps to a new level: use it with `rate` or `vus`, not `dance`"
        );
        assert_eq!(
            fails("status", Some("x"), None),
            "`status` takes no value (got `x`)"
        );
        assert_eq!(
            fails("rate", None, None),
            "`rate` needs the new level: loadlab control 5665 rate 800/s"
        );
        assert_eq!(
            fails("vus", None, None),
            "`vus` needs the new level: loadlab control 5665 vus 40"
        );
        assert!(fails("rate", Some("fast"), None).starts_with("rate: "));
        assert_eq!(
            fails("vus", Some("-1"), None),
            "vus: `-1` is not a whole number of virtual users"
        );
        assert_eq!(
            fails("dance", None, None),
            "unknown command `dance`: use pause, resume, stop, rate RATE, vus N or status"
        );
    }

    #[test]
    fn replies_read_as_what_the_run_did() {
        let reply = |v: Value| Reply(v).to_string();
        assert_eq!(
            reply(json!({ "status": { "started": true, "level": 400.0, "commands": 2 } })),
            format!(
                "running: {} now, 2 command(s) followed",
                Level::Rate(400.0).words()
            )
        );
        assert_eq!(
            reply(json!({
                "event": { "action": "pause", "at_s": 12.34, "before": 400.0, "after": 0.0 },
                "status": { "paused": true }
            })),
            format!("paused at 12.3 s (was {})", Level::Rate(400.0).words())
        );
        assert_eq!(
            reply(json!({
                "event": { "action": "vus", "at_s": 2.0, "before": 10.0, "after": 40.0, "over_s": 10.0 },
                "status": { "unit": "vus" }
            })),
            format!(
                "vus {} → {} over 10s at 2.0 s",
                Level::Vus(10).words(),
                Level::Vus(40).words()
            )
        );
    }
}
