//! The live web dashboard (`--dashboard [ADDR]`): a small HTTP server on its own threads that
//! serves one embedded page and a server-sent-event stream of the run's frames, the progress of
//! a study or capacity search, and how the command ended.
//!
//! The engine's coordinator only builds the frame, serializes it once and offers it to each
//! browser's bounded queue (see [`hub`]); everything that can wait (sockets) runs elsewhere.

pub mod control;
mod cpu;
pub mod event;
pub mod hub;
mod observer;
mod server;

pub use event::{CommandEnd, Context, Event, ResultRow};
pub use server::Cost;

use crate::LiveTap;
use loadlab_analysis::thresholds::ThresholdWatch;
use loadlab_record::LiveObserver;
use server::Shared;
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long the end waits for the browsers to receive the last events.
const DRAIN: Duration = Duration::from_secs(2);

#[derive(Debug, thiserror::Error)]
pub enum DashboardError {
    #[error("`{given}` is not an address: give HOST:PORT (127.0.0.1:5665, [::1]:5665) or a port")]
    BadAddress { given: String },
    #[error("{addr} is already in use")]
    InUse { addr: SocketAddr },
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        source: std::io::Error,
    },
}

/// `127.0.0.1:5665`, `[::1]:5665`, `localhost:5665`, `:5665` or `5665` (loopback).
pub fn parse_addr(given: &str) -> Result<SocketAddr, DashboardError> {
    let text = given.trim();
    let bad = || DashboardError::BadAddress {
        given: given.to_string(),
    };
    if let Ok(a) = text.parse::<SocketAddr>() {
        return Ok(a);
    }
    let port = text
        .strip_prefix("localhost:")
        .or_else(|| text.strip_prefix(':'))
        .unwrap_or(text);
    let port: u16 = port.parse().map_err(|_| bad())?;
    Ok(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port))
}

/// What the observers and the handle share.
pub(crate) struct Inner {
    shared: Arc<Shared>,
    context: Mutex<Option<Context>>,
    runs: AtomicU32,
}

impl Inner {
    fn context(&self) -> Option<Context> {
        self.context
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

/// The running dashboard: a [`LiveTap`] for every run of the command, and the handle that
/// tells the page where a study stands and how the command ended.
pub struct Dashboard {
    inner: Arc<Inner>,
    addr: SocketAddr,
}

impl Dashboard {
    /// Listens on `addr` and serves from a thread of its own, before any load starts.
    pub fn start(addr: SocketAddr) -> Result<Dashboard, DashboardError> {
        let listener = TcpListener::bind(addr).map_err(|source| {
            if source.kind() == std::io::ErrorKind::AddrInUse {
                DashboardError::InUse { addr }
            } else {
                DashboardError::Bind { addr, source }
            }
        })?;
        let bound = listener
            .local_addr()
            .map_err(|source| DashboardError::Bind { addr, source })?;
        let shared = Arc::new(Shared::new());
        let serving = shared.clone();
        std::thread::Builder::new()
            .name("dashboard".into())
            .spawn(move || server::serve(listener, serving))
            .map_err(|source| DashboardError::Bind { addr, source })?;
        Ok(Dashboard {
            inner: Arc::new(Inner {
                shared,
                context: Mutex::new(None),
                runs: AtomicU32::new(0),
            }),
            addr: bound,
        })
    }

    /// Takes commands for the runs through `control` (else every command is refused: the
    /// runs follow their plan).
    pub fn with_control(self, control: control::Control) -> Self {
        *self
            .inner
            .shared
            .control
            .lock()
            .unwrap_or_else(|p| p.into_inner()) = Some(control);
        self
    }

    /// Serves the control API only, no page (`--control`).
    pub fn without_page(self) -> Self {
        self.inner.shared.page.store(false, Ordering::Relaxed);
        self
    }

    /// The address it listens on (the real port when 0 was asked).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:5665/`
    pub fn url(&self) -> String {
        format!("http://{}/", self.addr)
    }

    /// A study's or capacity search's progress: shown on the page and sent with every frame.
    pub fn set_context(&self, context: Context) {
        let event = Event::Context {
            context: context.clone(),
        };
        *self.inner.context.lock().unwrap_or_else(|p| p.into_inner()) = Some(context);
        if let Ok(json) = serde_json::to_string(&event) {
            self.inner.shared.hub.publish(hub::Kind::Context, json);
        }
    }

    /// The coordinator-side time of every observer call so far (frames, thresholds, fan-out).
    pub fn cost(&self) -> Cost {
        self.inner.shared.cost()
    }

    /// The command ended: tells the page (and serves `report` at `/report`), waits until the
    /// browsers got it (at most 2 s), keeps serving for `linger` (when a run was made), then
    /// stops listening.
    pub fn finish(&self, mut end: CommandEnd, report: Option<PathBuf>, linger: Duration) {
        let shared = &self.inner.shared;
        if let Some(path) = report {
            end.report = Some("/report".to_string());
            *shared.report.lock().unwrap_or_else(|p| p.into_inner()) = Some(path);
        }
        if let Ok(json) = serde_json::to_string(&Event::End(end)) {
            shared.hub.publish(hub::Kind::End, json);
        }
        let deadline = Instant::now() + DRAIN;
        while shared.hub.pending() > 0 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        // Lingering is for looking at a run: a command that stopped before any (bad input) exits.
        if self.inner.runs.load(Ordering::Relaxed) > 0 {
            std::thread::sleep(linger);
        }
        shared.stopping.store(true, Ordering::Relaxed);
        // Wake the accepting thread so it sees `stopping`.
        let mut wake = self.addr;
        if wake.ip().is_unspecified() {
            wake.set_ip(IpAddr::V4(Ipv4Addr::LOCALHOST));
        }
        let _ = TcpStream::connect_timeout(&wake, Duration::from_millis(200));
    }
}

impl LiveTap for Dashboard {
    fn observer(&self, thresholds: &ThresholdWatch) -> Box<dyn LiveObserver> {
        Box::new(observer::RunObserver::new(
            self.inner.clone(),
            thresholds.clone(),
        ))
    }
}

#[cfg(test)]
mod tests;
