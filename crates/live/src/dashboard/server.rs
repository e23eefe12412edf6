//! The dashboard's HTTP server: std `TcpListener`, one thread per connection, four routes
//! (`/`, `/events`, `/api/state`, `/report`) and the control API (see [`super::control`]).
//! No tokio here: the crate stays off the engine's runtime, and a handful of browsers needs
//! no more than threads.

use super::control::{self, Control, ControlRequest};
use super::hub::{Hub, Subscription};
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The page, embedded in the binary.
const PAGE: &str = include_str!("page.html");
/// A comment line on an idle stream, so proxies and browsers keep it open.
const HEARTBEAT: Duration = Duration::from_secs(10);
/// How long a browser waits before reconnecting (SSE `retry:`), in ms.
const RETRY_MS: u64 = 1000;
/// Connections served at once; more get 503 (each holds a thread).
const MAX_CONNECTIONS: usize = 32;

/// What the connection threads share.
pub struct Shared {
    pub hub: Hub,
    pub report: Mutex<Option<PathBuf>>,
    pub stopping: AtomicBool,
    /// What the control routes steer (none: the command's runs follow their plan).
    pub control: Mutex<Option<Control>>,
    /// Serve the page (`--dashboard`), or only the API (`--control`).
    pub page: AtomicBool,
    connections: std::sync::atomic::AtomicUsize,
    /// Wall time and CPU time the observers spent on the coordinator's thread, and how many
    /// calls.
    cost_ns: AtomicU64,
    cost_cpu_ns: AtomicU64,
    cost_calls: AtomicU64,
}

/// What the dashboard cost the coordinator so far.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cost {
    pub calls: u64,
    /// Wall time (counts preemption on a busy host).
    pub total: Duration,
    /// The coordinator thread's CPU time.
    pub cpu: Duration,
}

impl Shared {
    pub fn new() -> Self {
        Self {
            hub: Hub::default(),
            report: Mutex::new(None),
            stopping: AtomicBool::new(false),
            control: Mutex::new(None),
            page: AtomicBool::new(true),
            connections: Default::default(),
            cost_ns: AtomicU64::new(0),
            cost_cpu_ns: AtomicU64::new(0),
            cost_calls: AtomicU64::new(0),
        }
    }

    pub fn charge(&self, spent: Duration, cpu: Duration) {
        self.cost_ns
            .fetch_add(spent.as_nanos() as u64, Ordering::Relaxed);
        self.cost_cpu_ns
            .fetch_add(cpu.as_nanos() as u64, Ordering::Relaxed);
        self.cost_calls.fetch_add(1, Ordering::Relaxed);
    }

    pub fn cost(&self) -> Cost {
        Cost {
            calls: self.cost_calls.load(Ordering::Relaxed),
            total: Duration::from_nanos(self.cost_ns.load(Ordering::Relaxed)),
            cpu: Duration::from_nanos(self.cost_cpu_ns.load(Ordering::Relaxed)),
        }
    }

    /// `/api/state`: the hub's state and the cost so far.
    fn state_json(&self) -> String {
        let cost = self.cost();
        let state = self.hub.state_json();
        let head = state.strip_suffix('}').unwrap_or(&state);
        format!(
            "{head},\"cost\":{{\"coordinator_calls\":{},\"coordinator_us\":{},\"coordinator_cpu_us\":{},\"dropped_clients\":{}}}}}",
            cost.calls,
            cost.total.as_micros(),
            cost.cpu.as_micros(),
            self.hub.dropped_clients()
        )
    }
}

/// Accepts connections until `shared.stopping`, each on its own thread.
pub fn serve(listener: TcpListener, shared: Arc<Shared>) {
    for stream in listener.incoming() {
        if shared.stopping.load(Ordering::Relaxed) {
            return;
        }
        let Ok(stream) = stream else { continue };
        let shared = shared.clone();
        let _ = std::thread::Builder::new()
            .name("dashboard-conn".into())
            .spawn(move || {
                let n = shared.connections.fetch_add(1, Ordering::Relaxed);
                if n < MAX_CONNECTIONS {
                    let _ = handle(stream, &shared);
                } else {
                    let _ = respond(&stream, "503 Service Unavailable", "text/plain", b"busy\n");
                }
                shared.connections.fetch_sub(1, Ordering::Relaxed);
            });
    }
}

fn handle(stream: TcpStream, shared: &Shared) -> std::io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(5)))?;
    stream.set_write_timeout(Some(Duration::from_secs(5)))?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut request_line = String::new();
    reader.read_line(&mut request_line)?;
    // The headers (bounded: a request has no business being large here).
    let mut headers = Vec::new();
    let mut line = String::new();
    for _ in 0..100 {
        line.clear();
        if reader.read_line(&mut line)? == 0 || line == "\r\n" || line == "\n" {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            headers.push((name.trim().to_ascii_lowercase(), value.trim().to_string()));
        }
    }
    let mut parts = request_line.split_whitespace();
    let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    let path = target.split('?').next().unwrap_or("");
    if control::is_control_path(path) {
        return steer(&stream, &mut reader, shared, method, path, &headers);
    }
    if method != "GET" {
        return respond(
            &stream,
            "405 Method Not Allowed",
            "text/plain",
            b"GET only\n",
        );
    }
    let page = shared.page.load(Ordering::Relaxed);
    match path {
        "/" | "/index.html" if !page => respond(
            &stream,
            "404 Not Found",
            "text/plain",
            b"no page here (--control serves the API only: POST /api/pause, /api/resume, /api/stop, /api/load; GET /api/control)\n",
        ),
        "/" | "/index.html" => respond(
            &stream,
            "200 OK",
            "text/html; charset=utf-8",
            PAGE.as_bytes(),
        ),
        "/events" => events(stream, shared.hub.subscribe(), shared),
        "/api/state" => respond(
            &stream,
            "200 OK",
            "application/json",
            shared.state_json().as_bytes(),
        ),
        "/report" => report(&stream, shared),
        _ => respond(&stream, "404 Not Found", "text/plain", b"not found\n"),
    }
}

/// A control route: the body (by `Content-Length`, bounded), then the command's answer.
fn steer(
    stream: &TcpStream,
    reader: &mut BufReader<TcpStream>,
    shared: &Shared,
    method: &str,
    path: &str,
    headers: &[(String, String)],
) -> std::io::Result<()> {
    let length = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .and_then(|(_, v)| v.parse::<usize>().ok())
        .unwrap_or(0);
    if length > control::MAX_BODY {
        return respond(
            stream,
            "413 Payload Too Large",
            "application/json",
            b"{\"error\":\"the body is too large\"}",
        );
    }
    let mut body = vec![0u8; length];
    std::io::Read::read_exact(reader, &mut body)?;
    let control = shared
        .control
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone();
    let host = stream.local_addr()?;
    let request = ControlRequest {
        method,
        path,
        headers,
        body: &body,
        host,
    };
    let answer = control::handle(control.as_ref(), &request);
    respond(
        stream,
        answer.status,
        "application/json",
        answer.body.as_bytes(),
    )
}

fn respond(mut stream: &TcpStream, status: &str, kind: &str, body: &[u8]) -> std::io::Result<()> {
    write!(
        stream,
        "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n",
        body.len()
    )?;
    stream.write_all(body)?;
    stream.flush()
}

fn report(stream: &TcpStream, shared: &Shared) -> std::io::Result<()> {
    let path = shared
        .report
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone();
    match path.map(std::fs::read) {
        Some(Ok(body)) => respond(stream, "200 OK", "text/html; charset=utf-8", &body),
        _ => respond(
            stream,
            "404 Not Found",
            "text/plain",
            b"no report was written (yet)\n",
        ),
    }
}

/// The SSE stream: `retry:`, then every queued event as it comes, a heartbeat comment when
/// idle; ends when the client goes, or when the hub dropped it (its queue was full).
fn events(mut stream: TcpStream, sub: Subscription, shared: &Shared) -> std::io::Result<()> {
    write!(
        stream,
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-store\r\nConnection: keep-alive\r\n\r\nretry: {RETRY_MS}\n\n"
    )?;
    stream.flush()?;
    loop {
        match sub.messages.recv_timeout(HEARTBEAT) {
            Ok(m) => {
                stream.write_all(m.as_bytes())?;
                stream.flush()?;
                sub.pending.fetch_sub(1, Ordering::Relaxed);
            }
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                if shared.stopping.load(Ordering::Relaxed) {
                    return Ok(());
                }
                stream.write_all(b": heartbeat\n\n")?;
                stream.flush()?;
            }
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => return Ok(()),
        }
    }
}
