//! Compiles a `ws:` step before the run: its origin, its upgrade request and messages as
//! programs (templates rendered per session), its expectations as steps of their own in the
//! record, and its captures bound to the VU's variables.

use super::build::{data_sets_read, split_templated_url, Builder};
use super::{PrepareError, PreparedCapture};
use crate::origin::{host_header, Origin};
use crate::render::{json_body, template, Esc, Piece, Pieces, Program};
use loadlab_metrics::StepInfo;
use loadlab_scenario::template::Names;
use loadlab_scenario::{HttpVersion, ThinkTime, WsAction, WsMatch, WsMessage, WsStep};
use std::time::Duration;

/// A WebSocket session ready to run.
#[derive(Debug, Clone)]
pub struct PreparedWs {
    /// The session's step in the record: its upgrade (latency, status 101) and its counters.
    pub step: u16,
    pub origin: u16,
    /// The upgrade's target and header fields.
    pub upgrade: Program,
    pub actions: Vec<PreparedWsAction>,
    pub close_after: Option<Duration>,
    pub timeout: Duration,
    pub max_message: usize,
    /// Data sets whose row the session reads.
    pub data_sets: Vec<u16>,
}

#[derive(Debug, Clone)]
pub enum PreparedWsAction {
    Send {
        /// The message as a program's body.
        program: Program,
        /// Base64 text, decoded after rendering, sent as a binary message.
        binary: bool,
    },
    Expect {
        /// Its own step in the record: latency is the round trip from the last send.
        step: u16,
        matcher: WsMatch,
        within: Duration,
    },
    /// From the message the last `expect` matched.
    Capture(Vec<PreparedCapture>),
    Think(ThinkTime),
}

impl Builder<'_> {
    /// Compiles session `w` and returns its index among the scenario's sessions.
    pub(super) fn ws(&mut self, w: &WsStep, index: usize) -> Result<u16, PrepareError> {
        let template_err = |message: String| PrepareError::Template {
            step: w.name.clone(),
            message,
        };
        let index = u16::try_from(index).map_err(|_| PrepareError::TooManySteps)?;
        let url = self.ws_url(w)?;
        let (tls, host, port, target) = split_templated_url(&url)?;
        let origin = self.ws_origin(tls, host, port);
        let step = self.push_step(StepInfo {
            name: w.name.clone(),
            group: w.group.clone(),
            tags: w.tags.iter().map(|(k, v)| format!("{k}={v}")).collect(),
            checks: Vec::new(),
        })?;
        let names = Names {
            data: self.names.data,
            captures: self.names.captures,
            available: None,
        };
        let upgrade = upgrade_program(w, &target, &self.scenario.defaults.headers, &names)
            .map_err(template_err)?;
        let mut data_sets = data_sets_read(&upgrade);
        let mut actions = Vec::new();
        for a in &w.actions {
            let action = match a {
                WsAction::Send(m) => {
                    let (pieces, binary) = message_pieces(m, &names).map_err(template_err)?;
                    let program = Program {
                        body: Some(pieces),
                        ..Program::default()
                    };
                    for set in data_sets_read(&program) {
                        if !data_sets.contains(&set) {
                            data_sets.push(set);
                        }
                    }
                    PreparedWsAction::Send { program, binary }
                }
                WsAction::Expect(e) => PreparedWsAction::Expect {
                    step: self.push_step(StepInfo {
                        name: e.name.clone(),
                        group: w.group.clone(),
                        tags: w.tags.iter().map(|(k, v)| format!("{k}={v}")).collect(),
                        checks: Vec::new(),
                    })?,
                    matcher: e.matcher.clone(),
                    within: e.within,
                },
                WsAction::Capture(list) => {
                    PreparedWsAction::Capture(self.captures(list).map_err(template_err)?)
                }
                WsAction::Think(t) => PreparedWsAction::Think(*t),
            };
            actions.push(action);
        }
        self.sessions.push(PreparedWs {
            step,
            origin,
            upgrade,
            actions,
            close_after: w.close_after,
            timeout: w.timeout.unwrap_or(self.scenario.defaults.timeout),
            max_message: usize::try_from(w.max_message).unwrap_or(usize::MAX),
            data_sets,
        });
        Ok(index)
    }

    /// The session's URL as `http(s)://...` (the scheme only says plain or TLS): a path joined
    /// to the target, or an absolute `ws://` / `wss://` URL.
    fn ws_url(&self, w: &WsStep) -> Result<String, PrepareError> {
        if let Some(rest) = w.url.strip_prefix("ws://") {
            return Ok(format!("http://{rest}"));
        }
        if let Some(rest) = w.url.strip_prefix("wss://") {
            return Ok(format!("https://{rest}"));
        }
        self.joined_to_target(&w.name, &w.url)
    }

    /// An HTTP/1.1 origin (the upgrade is HTTP/1.1; over TLS, ALPN offers `http/1.1` only),
    /// never one of shared connections: a session holds its connection to itself.
    fn ws_origin(&mut self, tls: bool, host: String, port: u16) -> u16 {
        let found = self.origins.iter().position(|o| {
            o.key() == (tls, host.as_str(), port, HttpVersion::Http1) && o.shared.is_none()
        });
        let i = found.unwrap_or_else(|| {
            self.origins.push(Origin {
                tls,
                host_header: host_header(&host, port, tls),
                host,
                port,
                version: HttpVersion::Http1,
                shared: None,
            });
            self.origins.len() - 1
        });
        i as u16
    }
}

/// The upgrade's target and header fields (the scenario's default headers, then the
/// session's); the WebSocket handshake fields are added when it is sent.
fn upgrade_program(
    w: &WsStep,
    target: &str,
    defaults: &[(String, String)],
    names: &Names,
) -> Result<Program, String> {
    let mut headers = defaults.to_vec();
    for (k, v) in &w.headers {
        headers.retain(|(hk, _)| !hk.eq_ignore_ascii_case(k));
        headers.push((k.clone(), v.clone()));
    }
    if !headers
        .iter()
        .any(|(k, _)| k.eq_ignore_ascii_case("user-agent"))
    {
        headers.push((
            "User-Agent".into(),
            concat!("loadlab/", env!("CARGO_PKG_VERSION")).into(),
        ));
    }
    let mut t = Pieces::default();
    t.target(&template(target, names)?);
    let mut fields = Vec::new();
    for (k, v) in headers {
        let mut p = Pieces::default();
        p.template(&template(&v, names)?, Esc::Header);
        fields.push((k.into_bytes().into_boxed_slice(), p.finish()));
    }
    Ok(Program {
        target: t.finish(),
        headers: fields,
        body: None,
    })
}

/// A message's pieces, and whether it is binary.
fn message_pieces(m: &WsMessage, names: &Names) -> Result<(Vec<Piece>, bool), String> {
    let mut p = Pieces::default();
    let binary = match m {
        WsMessage::Text(t) => {
            p.template(&template(t, names)?, Esc::Raw);
            false
        }
        WsMessage::Binary(b) => {
            p.template(&template(b.trim(), names)?, Esc::Raw);
            true
        }
        WsMessage::Json(v) => {
            json_body(v, names, &mut p)?;
            false
        }
    };
    Ok((p.finish(), binary))
}
