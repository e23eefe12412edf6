//! The `ws:` step: a WebSocket session (RFC 6455) as one step of a flow, with the messages it
//! sends, the messages it waits for, what it captures from them and how long it stays open.

use crate::step_parts::{Capture, ThinkTime};
use std::time::Duration;

/// Default bound on one received message (a larger one fails the session `ws_protocol`).
pub const DEFAULT_WS_MAX_MESSAGE: u64 = 1024 * 1024;

/// A WebSocket session: an upgrade, then its actions in order, then a normal close.
#[derive(Debug, Clone, PartialEq)]
pub struct WsStep {
    /// Shown in summaries; defaults to `WS path`.
    pub name: String,
    pub group: Option<String>,
    /// A path (joined to the target, whose `http`/`https` becomes `ws`/`wss`) or an absolute
    /// `ws://` / `wss://` URL.
    pub url: String,
    pub headers: Vec<(String, String)>,
    pub actions: Vec<WsAction>,
    /// The session stays open (receiving and counting what the server pushes) until this long
    /// after its upgrade, and is closed then even when actions are left.
    pub close_after: Option<Duration>,
    /// Bound on the upgrade (connect, TLS and handshake); the scenario's timeout by default.
    pub timeout: Option<Duration>,
    /// Largest message (and frame) accepted, in bytes.
    pub max_message: u64,
    pub tags: Vec<(String, String)>,
}

/// One thing a session does.
#[derive(Debug, Clone, PartialEq)]
pub enum WsAction {
    Send(WsMessage),
    /// Wait for a message that matches; recorded as a step of its own whose latency is the
    /// round trip from the session's last send.
    Expect(WsExpect),
    /// Values taken from the last message an `expect` matched.
    Capture(Vec<Capture>),
    Think(ThinkTime),
}

/// A message to send; both forms may hold templates.
#[derive(Debug, Clone, PartialEq)]
pub enum WsMessage {
    Text(String),
    /// Base64 text, decoded after rendering.
    Binary(String),
    /// A JSON value sent as a text message (templates in strings JSON-escaped).
    Json(serde_json::Value),
}

#[derive(Debug, Clone, PartialEq)]
pub struct WsExpect {
    pub matcher: WsMatch,
    pub within: Duration,
    /// The name of its step in results: `<session> › expect <what>`.
    pub name: String,
}

/// What an awaited message must be; messages that do not match are counted and skipped.
#[derive(Debug, Clone, PartialEq)]
pub enum WsMatch {
    /// Any message.
    Any,
    /// A JSON message whose value at `path` exists and, when given, equals `equals`.
    Json {
        path: crate::jsonpath::JsonPath,
        equals: Option<serde_json::Value>,
    },
    /// A text message holding this text.
    Contains(String),
}

impl WsMatch {
    /// How the expectation is named in results, e.g. `$.status == "received"`.
    pub fn describe(&self) -> String {
        match self {
            WsMatch::Any => "any message".into(),
            WsMatch::Json {
                path,
                equals: Some(v),
            } => format!("{} == {v}", path.text()),
            WsMatch::Json { path, equals: None } => path.text().to_string(),
            WsMatch::Contains(t) => format!("contains {t:?}"),
        }
    }
}

impl WsStep {
    /// The session's captures, in order.
    pub fn captures(&self) -> impl Iterator<Item = &Capture> {
        self.actions.iter().flat_map(|a| match a {
            WsAction::Capture(c) => c.as_slice(),
            _ => &[],
        })
    }

    /// The session's `expect` actions, in order.
    pub fn expects(&self) -> impl Iterator<Item = &WsExpect> {
        self.actions.iter().filter_map(|a| match a {
            WsAction::Expect(e) => Some(e),
            _ => None,
        })
    }
}
