//! The control API of a running load (`--control`, and the dashboard's own controls):
//! `POST /api/pause|resume|stop|load` and `GET /api/control`, and what each request may do.
//! The client `loadlab control` calls it with is [`crate::control_client`].
//!
//! On loopback, any local process may steer (as it may send the load itself). Anywhere else a
//! token is required (`Authorization: Bearer …`, else 401). A command must come as
//! `application/json`, and a browser's `Origin` must be the page's own: a web page on another
//! site cannot steer a run through the user's browser.

use loadlab_metrics::SteerSource;
use loadlab_scenario::steer::{Level, SteerCommand, SteerError, SteerHandle, SteerRequest};
use loadlab_scenario::units::{parse_duration, parse_rate};
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

/// Largest command body read.
pub const MAX_BODY: usize = 4096;

/// What steers the runs behind the server, and who may.
#[derive(Clone)]
pub struct Control {
    pub handle: Arc<dyn SteerHandle>,
    /// Required of every command when set.
    pub token: Option<String>,
}

/// A request as the server read it.
pub struct ControlRequest<'a> {
    pub method: &'a str,
    pub path: &'a str,
    /// Header names in lower case.
    pub headers: &'a [(String, String)],
    pub body: &'a [u8],
    /// The address the server listens on (the page's own origin).
    pub host: SocketAddr,
}

impl ControlRequest<'_> {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// An answer: status line and JSON body.
#[derive(Debug, PartialEq)]
pub struct Answer {
    pub status: &'static str,
    pub body: String,
}

fn answer(status: &'static str, body: Value) -> Answer {
    Answer {
        status,
        body: body.to_string(),
    }
}

fn refused(status: &'static str, why: impl std::fmt::Display) -> Answer {
    answer(status, json!({ "error": why.to_string() }))
}

/// Whether `path` is a control route.
pub fn is_control_path(path: &str) -> bool {
    matches!(
        path,
        "/api/control" | "/api/pause" | "/api/resume" | "/api/stop" | "/api/load"
    )
}

/// Answers a control route; `control` is `None` when the command's runs follow their plan.
pub fn handle(control: Option<&Control>, req: &ControlRequest<'_>) -> Answer {
    let Some(control) = control else {
        return refused(
            "409 Conflict",
            "this command takes no steering: a study's or capacity search's runs follow their plan; steer a `loadlab run` started with --control or --dashboard",
        );
    };
    if let Some(token) = &control.token {
        let given = req
            .header("authorization")
            .and_then(|v| v.strip_prefix("Bearer "))
            .map(str::trim);
        if given != Some(token.as_str()) {
            return refused(
                "401 Unauthorized",
                "a token is required: send `Authorization: Bearer TOKEN` (loadlab control --token TOKEN); the run printed it when it started",
            );
        }
    }
    if req.path == "/api/control" {
        if req.method != "GET" {
            return refused("405 Method Not Allowed", "GET /api/control");
        }
        return answer("200 OK", status_json(control));
    }
    if req.method != "POST" {
        return refused("405 Method Not Allowed", format!("POST {}", req.path));
    }
    if let Some(origin) = req.header("origin") {
        if !same_origin(origin, req.host) {
            return refused(
                "403 Forbidden",
                format!("a page from {origin} may not steer this run"),
            );
        }
    }
    let json_body = req
        .header("content-type")
        .is_some_and(|t| t.starts_with("application/json"));
    if !json_body {
        return refused(
            "415 Unsupported Media Type",
            "send the command as `Content-Type: application/json` (an empty object for pause, resume and stop)",
        );
    }
    let request = match parse_command(req.path, req.body) {
        Ok(r) => r,
        Err(why) => return refused("400 Bad Request", why),
    };
    let source = SteerSource::parse(req.header("x-loadlab-source").unwrap_or("api"));
    match control.handle.steer(request, source) {
        Ok(event) => answer(
            "200 OK",
            json!({ "event": event, "status": control.handle.status() }),
        ),
        Err(e) => {
            let status = match e {
                SteerError::Refused(loadlab_scenario::steer::SteerRefusal::OutOfBounds(_)) => {
                    "400 Bad Request"
                }
                _ => "409 Conflict",
            };
            answer(
                status,
                json!({ "error": e.to_string(), "status": control.handle.status() }),
            )
        }
    }
}

fn status_json(control: &Control) -> Value {
    json!({ "status": control.handle.status() })
}

/// `http://127.0.0.1:5665` is the page served from `host` (also as `localhost`).
fn same_origin(origin: &str, host: SocketAddr) -> bool {
    let Some(rest) = origin.strip_prefix("http://") else {
        return false;
    };
    let port = host.port().to_string();
    let Some((name, p)) = rest.rsplit_once(':') else {
        return false;
    };
    if p != port {
        return false;
    }
    let name = name.trim_start_matches('[').trim_end_matches(']');
    name == "localhost"
        || name
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip == host.ip())
}

/// The command a route and its JSON body ask for.
pub fn parse_command(path: &str, body: &[u8]) -> Result<SteerRequest, String> {
    let value: Value = if body.iter().all(u8::is_ascii_whitespace) {
        json!({})
    } else {
        serde_json::from_slice(body).map_err(|e| format!("the body is not JSON: {e}"))?
    };
    let Some(fields) = value.as_object() else {
        return Err("the body must be a JSON object, e.g. {\"rate\": \"800/s\"}".into());
    };
    match path {
        "/api/pause" => Ok(SteerRequest::Command(SteerCommand::Pause)),
        "/api/resume" => Ok(SteerRequest::Command(SteerCommand::Resume)),
        "/api/stop" => Ok(SteerRequest::Stop),
        "/api/load" => {
            let over = match fields.get("over") {
                None | Some(Value::Null) => Duration::ZERO,
                Some(Value::String(s)) => parse_duration(s).map_err(|e| format!("over: {e}"))?,
                Some(Value::Number(n)) => {
                    Duration::try_from_secs_f64(n.as_f64().unwrap_or(-1.0))
                        .map_err(|_| format!("over: {n} is not a number of seconds"))?
                }
                Some(other) => {
                    return Err(format!(
                        "over: expected a duration like \"10s\", got {other}"
                    ))
                }
            };
            let level = match (fields.get("rate"), fields.get("vus")) {
                (Some(rate), None) => Level::Rate(match rate {
                    Value::String(s) => parse_rate(s).map_err(|e| format!("rate: {e}"))?,
                    Value::Number(n) => n.as_f64().unwrap_or(f64::NAN),
                    other => return Err(format!("rate: expected e.g. \"800/s\", got {other}")),
                }),
                (None, Some(vus)) => Level::Vus(
                    vus.as_u64()
                        .and_then(|v| u32::try_from(v).ok())
                        .ok_or_else(|| format!("vus: expected a whole number, got {vus}"))?,
                ),
                _ => {
                    return Err(
                        "give one of `rate` (open model, e.g. {\"rate\": \"800/s\"}) or `vus` (closed model, e.g. {\"vus\": 40})"
                            .into(),
                    )
                }
            };
            Ok(SteerRequest::Command(SteerCommand::Level { level, over }))
        }
        _ => Err(format!("no command at {path}")),
    }
}

/// A token of 128 random bits, hex, for a control API listening beyond loopback.
pub fn new_token() -> std::io::Result<String> {
    use std::io::Read;
    let mut bytes = [0u8; 16];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_become_commands_or_say_what_is_wrong() {
        let load = |b: &str| parse_command("/api/load", b.as_bytes());
        assert_eq!(
            load(r#"{"rate": "800/s", "over": "10s"}"#),
            Ok(SteerRequest::Command(SteerCommand::Level {
                level: Level::Rate(800.0),
                over: Duration::from_secs(10)
            }))
        );
        // `loadlab control … --over 2.5s` sends the seconds as a number.
        assert_eq!(
            load(r#"{"vus": 40, "over": 2.5}"#),
            Ok(SteerRequest::Command(SteerCommand::Level {
                level: Level::Vus(40),
                over: Duration::from_millis(2500)
            }))
        );
        assert!(load(r#"{"vus": 40, "over": -1}"#)
            .unwrap_err()
            .starts_with("over: "));
        assert_eq!(
            load(r#"{"vus": 40}"#),
            Ok(SteerRequest::Command(SteerCommand::Level {
                level: Level::Vus(40),
                over: Duration::ZERO
            }))
        );
        assert!(load(r#"{"rate": "fast"}"#)
            .unwrap_err()
            .starts_with("rate: "));
        assert!(load(r#"{"vus": -1}"#).unwrap_err().starts_with("vus: "));
        assert!(load(r#"{"rate": 1, "vus": 2}"#)
            .unwrap_err()
            .contains("one of"));
        assert!(load("[1]").unwrap_err().contains("JSON object"));
        assert_eq!(
            parse_command("/api/pause", b""),
            Ok(SteerRequest::Command(SteerCommand::Pause))
        );
        assert_eq!(parse_command("/api/stop", b"{}"), Ok(SteerRequest::Stop));
    }

    #[test]
    fn only_the_page_s_own_origin_may_steer() {
        let host: SocketAddr = "127.0.0.1:5665".parse().unwrap();
        assert!(same_origin("http://127.0.0.1:5665", host));
        assert!(same_origin("http://localhost:5665", host));
        assert!(!same_origin("http://127.0.0.1:8080", host));
        assert!(!same_origin("https://evil.example", host));
        assert!(!same_origin("null", host));
    }
}
