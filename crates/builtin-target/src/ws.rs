//! WebSocket endpoints: `/ws/echo` sends every text or binary message back, `/ws/subscribe`
//! answers `{"subscribe": "x"}` with `{"status":"received","subscribe":"x"}` and then pushes
//! `{"update":n,"subscribe":"x"}` every `every_ms` milliseconds (query, default 100) until
//! the client closes. Sessions, messages and bytes each way are counted for `/metrics`, so
//! tests compare a run's counts with the server's.
//!
//! Messages are outside the capacity model (a session holds no worker): the upgrade is an
//! HTTP request, the messages are cheap echoes.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use hyper::body::Incoming;
use hyper::header::{HeaderValue, CONNECTION, SEC_WEBSOCKET_ACCEPT, SEC_WEBSOCKET_KEY, UPGRADE};
use hyper::{Request, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::{json, Value};
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;
use tokio_tungstenite::tungstenite::protocol::{Role, WebSocketConfig};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::WebSocketStream;

use crate::response::{self, Resp};

/// Largest message a session accepts.
const MAX_MESSAGE: usize = 1024 * 1024;
/// Fastest push interval `/ws/subscribe` allows.
const MIN_EVERY: Duration = Duration::from_millis(1);

/// A WebSocket endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Endpoint {
    Echo,
    Subscribe,
}

impl Endpoint {
    pub fn of(path: &str) -> Option<Endpoint> {
        match path {
            "/ws/echo" => Some(Endpoint::Echo),
            "/ws/subscribe" => Some(Endpoint::Subscribe),
            _ => None,
        }
    }
}

/// What the WebSocket endpoints did, for `/metrics`.
#[derive(Debug, Default)]
pub struct WsCounters {
    pub sessions: AtomicU64,
    pub received: AtomicU64,
    pub sent: AtomicU64,
    pub bytes_received: AtomicU64,
    pub bytes_sent: AtomicU64,
}

impl WsCounters {
    pub fn render(&self, out: &mut String) {
        use std::fmt::Write as _;
        for (name, help, v) in [
            (
                "loadlab_target_ws_sessions_total",
                "WebSocket sessions upgraded.",
                &self.sessions,
            ),
            (
                "loadlab_target_ws_messages_received_total",
                "WebSocket messages received (text and binary).",
                &self.received,
            ),
            (
                "loadlab_target_ws_messages_sent_total",
                "WebSocket messages sent (text and binary).",
                &self.sent,
            ),
            (
                "loadlab_target_ws_bytes_received_total",
                "Payload bytes of the WebSocket messages received.",
                &self.bytes_received,
            ),
            (
                "loadlab_target_ws_bytes_sent_total",
                "Payload bytes of the WebSocket messages sent.",
                &self.bytes_sent,
            ),
        ] {
            let _ = writeln!(
                out,
                "# HELP {name} {help}\n# TYPE {name} counter\n{name} {}",
                v.load(Relaxed)
            );
        }
    }
}

/// Answers an upgrade request with 101 and runs the session on the upgraded connection; a
/// plain request gets 426.
pub fn accept(counters: Arc<WsCounters>, endpoint: Endpoint, mut req: Request<Incoming>) -> Resp {
    let upgrade = req
        .headers()
        .get(UPGRADE)
        .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"websocket"));
    let Some(key) = req.headers().get(SEC_WEBSOCKET_KEY).filter(|_| upgrade) else {
        let mut resp = response::error(
            StatusCode::UPGRADE_REQUIRED,
            "this is a WebSocket endpoint: connect with ws://",
        );
        resp.headers_mut()
            .insert(UPGRADE, HeaderValue::from_static("websocket"));
        return resp;
    };
    let accept = derive_accept_key(key.as_bytes());
    let every = every(req.uri().query());
    let on_upgrade = hyper::upgrade::on(&mut req);
    tokio::spawn(async move {
        let Ok(upgraded) = on_upgrade.await else {
            return;
        };
        let config = WebSocketConfig::default()
            .max_message_size(Some(MAX_MESSAGE))
            .max_frame_size(Some(MAX_MESSAGE));
        let socket =
            WebSocketStream::from_raw_socket(TokioIo::new(upgraded), Role::Server, Some(config))
                .await;
        counters.sessions.fetch_add(1, Relaxed);
        match endpoint {
            Endpoint::Echo => echo(socket, &counters).await,
            Endpoint::Subscribe => subscribe(socket, &counters, every).await,
        }
    });
    let mut resp = response::raw_json(StatusCode::SWITCHING_PROTOCOLS, "");
    resp.headers_mut().remove(hyper::header::CONTENT_TYPE);
    let h = resp.headers_mut();
    h.insert(UPGRADE, HeaderValue::from_static("websocket"));
    h.insert(CONNECTION, HeaderValue::from_static("Upgrade"));
    if let Ok(v) = HeaderValue::from_str(&accept) {
        h.insert(SEC_WEBSOCKET_ACCEPT, v);
    }
    resp
}

/// `every_ms=N` from the query (default 100 ms).
fn every(query: Option<&str>) -> Duration {
    query
        .into_iter()
        .flat_map(|q| q.split('&'))
        .find_map(|kv| kv.strip_prefix("every_ms="))
        .and_then(|v| v.parse::<u64>().ok())
        .map_or(Duration::from_millis(100), Duration::from_millis)
        .max(MIN_EVERY)
}

type Socket = WebSocketStream<TokioIo<hyper::upgrade::Upgraded>>;

fn payload_len(m: &Message) -> Option<u64> {
    match m {
        Message::Text(t) => Some(t.len() as u64),
        Message::Binary(b) => Some(b.len() as u64),
        _ => None,
    }
}

fn count_received(c: &WsCounters, m: &Message) -> bool {
    match payload_len(m) {
        Some(n) => {
            c.received.fetch_add(1, Relaxed);
            c.bytes_received.fetch_add(n, Relaxed);
            true
        }
        None => false,
    }
}

async fn send(socket: &mut Socket, c: &WsCounters, m: Message) -> bool {
    let n = payload_len(&m).unwrap_or(0);
    if socket.send(m).await.is_err() {
        return false;
    }
    c.sent.fetch_add(1, Relaxed);
    c.bytes_sent.fetch_add(n, Relaxed);
    true
}

async fn echo(mut socket: Socket, c: &WsCounters) {
    while let Some(Ok(m)) = socket.next().await {
        if count_received(c, &m) && !send(&mut socket, c, m).await {
            return;
        }
    }
}

async fn subscribe(mut socket: Socket, c: &WsCounters, every: Duration) {
    let mut topic: Option<Value> = None;
    let mut tick = tokio::time::interval(every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut n = 0u64;
    loop {
        tokio::select! {
            m = socket.next() => {
                let Some(Ok(m)) = m else { return };
                if !count_received(c, &m) {
                    continue;
                }
                let asked = match &m {
                    Message::Text(t) => serde_json::from_str::<Value>(t.as_str()).ok().and_then(|v| v.get("subscribe").cloned()),
                    _ => None,
                };
                let answer = match asked {
                    Some(t) => {
                        topic = Some(t.clone());
                        tick.reset();
                        json!({"status": "received", "subscribe": t})
                    }
                    None => json!({"error": "send {\"subscribe\": \"<topic>\"} first"}),
                };
                if !send(&mut socket, c, Message::text(answer.to_string())).await {
                    return;
                }
            }
            _ = tick.tick(), if topic.is_some() => {
                n += 1;
                let update = json!({"update": n, "subscribe": topic});
                if !send(&mut socket, c, Message::text(update.to_string())).await {
                    return;
                }
            }
        }
    }
}
