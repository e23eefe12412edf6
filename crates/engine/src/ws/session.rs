//! One session's life after its upgrade: actions in order, bounded by `close_after`, the
//! run's end and cancellation, then a close handshake; what it did is recorded.

use super::classify::{matches, payload, session_error};
use super::upgrade::Socket;
use crate::flow::Worker;
use crate::inspect::capture;
use crate::prepare::{PreparedWs, PreparedWsAction};
use crate::render::RenderCx;
use crate::transport::{ResponseData, Transport};
use crate::vu::VuState;
use futures_util::{SinkExt, StreamExt};
use loadlab_metrics::micros;
use loadlab_metrics::{ErrorKind, Outcome, Phases, WsCounts, CLOSE_ABNORMAL};
use tokio::time::{Duration, Instant};
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::{Error, Message};

/// How often a waiting session looks whether the run is stopping.
const STOP_POLL: Duration = Duration::from_millis(50);
/// How long a session waits for the server's answer to its close frame.
const CLOSE_WAIT: Duration = Duration::from_secs(1);

/// What a wait for a message came to.
enum Recv {
    Message(Message),
    /// The wait's deadline passed.
    Deadline,
    /// The run is stopping.
    Stopped,
    /// The server closed the session with this code (a close frame).
    Closed(u16),
    Failed(ErrorKind, String),
}

/// A session being run.
pub(super) struct Session<'a, T: Transport> {
    pub(super) worker: &'a Worker<T>,
    pub(super) ws: &'a PreparedWs,
    pub(super) socket: Socket,
    pub(super) counts: WsCounts,
    pub(super) last_send: Instant,
    /// Holding and thinking stop here: `close_after` from the upgrade, or the run's end.
    pub(super) end: Instant,
    /// `close_after` from the upgrade: no expectation waits past it.
    pub(super) close_at: Option<Instant>,
    /// The message the last `expect` matched, kept only when captures follow it (they read
    /// it): a message held keeps tungstenite's read buffer from being reused.
    pub(super) last: Option<Message>,
    /// The one timer of the session's waits, moved from one deadline to the next: a timer
    /// made for each wait was registered with, and removed from, the runtime's wheel for each
    /// message, while moving one to a later deadline costs nothing.
    pub(super) timer: std::pin::Pin<Box<tokio::time::Sleep>>,
    /// An expectation's outcome, recorded when the captures after it are done.
    pub(super) pending: Option<(Outcome, Option<String>)>,
    /// The session's close code once it is over.
    pub(super) close: Option<u16>,
    /// The session's own failure (not an expectation's).
    pub(super) error: Option<(ErrorKind, String)>,
    /// An expectation or capture failed: the actions after it are skipped.
    pub(super) failed_step: bool,
}

impl<T: Transport> Session<'_, T> {
    /// The actions in order, the hold until `close_after`, then the close.
    pub(super) async fn run(&mut self, vu: &mut VuState) {
        let ws = self.ws;
        for (i, action) in ws.actions.iter().enumerate() {
            if self.failed_step || self.error.is_some() || self.close.is_some() {
                break;
            }
            if !matches!(action, PreparedWsAction::Capture(_)) {
                self.flush_pending();
            }
            match action {
                PreparedWsAction::Send { program, binary } => self.send(program, *binary, vu).await,
                PreparedWsAction::Expect {
                    step,
                    matcher,
                    within,
                } => {
                    let captures_follow =
                        matches!(ws.actions.get(i + 1), Some(PreparedWsAction::Capture(_)));
                    self.expect(*step, matcher, *within, captures_follow).await
                }
                PreparedWsAction::Capture(list) => self.capture(list, vu),
                PreparedWsAction::Think(t) => {
                    let d = if t.max > t.min {
                        let span = (t.max - t.min).as_nanos() as u64;
                        t.min + Duration::from_nanos(self.worker.rng.borrow_mut().u64(0..=span))
                    } else {
                        t.min
                    };
                    self.hold((Instant::now() + d).min(self.end)).await;
                }
            }
        }
        self.flush_pending();
        if ws.close_after.is_some() && self.error.is_none() && !self.failed_step {
            self.hold(self.end).await;
        }
        self.finish().await;
    }

    /// Receives (and counts) what the server sends until `until`, answering pings.
    async fn hold(&mut self, until: Instant) {
        while self.error.is_none() && self.close.is_none() {
            match self.recv(until, true).await {
                Recv::Message(_) => {}
                Recv::Deadline | Recv::Stopped => return,
                Recv::Closed(code) => self.close = Some(code),
                Recv::Failed(kind, message) => self.fail(kind, message),
            }
        }
    }

    /// The next text or binary message before `deadline` (pings are answered by tungstenite
    /// as they are read; pongs skipped). `stoppable`: give up when the run stops (holding and
    /// thinking do; an expectation already waiting has its answer's grace, as a request has).
    async fn recv(&mut self, deadline: Instant, stoppable: bool) -> Recv {
        loop {
            if stoppable && self.worker.stopping.get() {
                return Recv::Stopped;
            }
            let now = Instant::now();
            if now >= deadline {
                return Recv::Deadline;
            }
            let slice = deadline.min(now + STOP_POLL);
            match self.before(slice, |socket| socket.next()).await {
                Err(_) => continue,
                Ok(None) => {
                    return Recv::Failed(
                        ErrorKind::WsClosedAbnormally,
                        "the connection ended without a close frame".into(),
                    )
                }
                // The close handshake is over (its frame was read before).
                Ok(Some(Err(Error::ConnectionClosed | Error::AlreadyClosed))) => {
                    return Recv::Closed(1005)
                }
                Ok(Some(Err(e))) => return Recv::Failed(session_error(&e), e.to_string()),
                Ok(Some(Ok(Message::Close(frame)))) => {
                    return Recv::Closed(frame.map_or(1005, |f| u16::from(f.code)))
                }
                Ok(Some(Ok(m))) => {
                    if let Some(bytes) = payload(&m) {
                        self.counts.messages_received += 1;
                        self.counts.bytes_received += bytes.len() as u64;
                        return Recv::Message(m);
                    }
                }
            }
        }
    }

    /// Renders and sends a message; the round trips of the expectations after it run from now.
    async fn send(&mut self, program: &crate::render::Program, binary: bool, vu: &mut VuState) {
        let mut parts = std::mem::take(&mut vu.parts);
        let rendered = program.render(
            &mut parts,
            &mut RenderCx {
                vu,
                data: &self.worker.scenario.data.sets,
                rng: &mut self.worker.rng.borrow_mut(),
            },
        );
        let body = parts.body().unwrap_or_default().to_vec();
        vu.parts = parts;
        if let Err(e) = rendered {
            return self.fail(ErrorKind::InvalidRequest, e.describe());
        }
        let message = if binary {
            use base64::Engine as _;
            match base64::engine::general_purpose::STANDARD.decode(body.trim_ascii()) {
                Ok(bytes) => Message::binary(bytes),
                Err(e) => {
                    return self.fail(
                        ErrorKind::InvalidRequest,
                        format!("a binary message is not base64 once rendered: {e}"),
                    )
                }
            }
        } else {
            Message::text(
                String::from_utf8(body)
                    .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()),
            )
        };
        let len = payload(&message).map_or(0, <[u8]>::len) as u64;
        self.last_send = Instant::now();
        let end = self.end;
        match self.before(end, |socket| socket.send(message)).await {
            Ok(Ok(())) => {
                self.counts.messages_sent += 1;
                self.counts.bytes_sent += len;
            }
            Ok(Err(e)) => self.fail(session_error(&e), e.to_string()),
            // The session's end came while the server was not reading.
            Err(_) => {}
        }
    }

    /// Waits for a message that matches; its round trip (from the last send) is recorded on
    /// the expectation's step once the captures after it are done.
    async fn expect(
        &mut self,
        step: u16,
        matcher: &loadlab_scenario::WsMatch,
        within: Duration,
        captures_follow: bool,
    ) {
        self.worker.begin(step);
        let started = Instant::now();
        let deadline = self
            .close_at
            .map_or(started + within, |at| at.min(started + within));
        let failure = loop {
            match self.recv(deadline, false).await {
                Recv::Message(m) if matches(&m, matcher) => {
                    self.last = captures_follow.then_some(m);
                    break None;
                }
                Recv::Message(_) => {}
                Recv::Deadline => {
                    break Some((
                        ErrorKind::WsExpectTimeout,
                        format!(
                            "no message matched `{}` within {}",
                            matcher.describe(),
                            loadlab_scenario::units::format_duration(deadline - started)
                        ),
                    ))
                }
                Recv::Stopped => {
                    break Some((ErrorKind::Interrupted, "the run stopped first".to_string()))
                }
                Recv::Closed(code) => {
                    self.close = Some(code);
                    break Some((
                        ErrorKind::WsExpectTimeout,
                        format!(
                            "the server closed the session (code {code}) before a message matched `{}`",
                            matcher.describe()
                        ),
                    ));
                }
                Recv::Failed(kind, message) => {
                    self.fail(kind, message.clone());
                    break Some((kind, message));
                }
            }
        };
        let done = Instant::now();
        let latency_us = micros(done.saturating_duration_since(self.last_send));
        self.failed_step |= failure.is_some();
        let outcome = Outcome {
            step,
            latency_us,
            service_us: latency_us,
            lag_us: None,
            server_us: None,
            trace_id: None,
            status: 0,
            error: failure.as_ref().map(|(k, _)| *k),
            bytes_sent: 0,
            bytes_received: 0,
            phases: Phases::default(),
        };
        self.pending = Some((outcome, failure.map(|(_, m)| m)));
    }

    /// Takes captures from the message the last expectation matched.
    fn capture(&mut self, list: &[crate::prepare::PreparedCapture], vu: &mut VuState) {
        let body = self.last.as_ref().and_then(payload).unwrap_or_default();
        let json = serde_json::from_slice::<serde_json::Value>(body).ok();
        let mut data = ResponseData::new(false, true);
        data.body = body.to_vec();
        for c in list {
            match capture(&c.source, Some(&data), json.as_ref()) {
                Some(value) => vu.set_var(c.var as usize, value),
                None => {
                    self.failed_step = true;
                    let message = format!(
                        "capture `{}` found nothing in the message; the rest of the iteration was skipped",
                        c.name
                    );
                    match &mut self.pending {
                        Some((o, m)) if o.error.is_none() => {
                            o.error = Some(ErrorKind::CaptureFailed);
                            *m = Some(message);
                        }
                        Some(_) => {}
                        None => self.fail(ErrorKind::CaptureFailed, message),
                    }
                    return;
                }
            }
        }
    }

    /// `io` on the session's socket, given up at `deadline` (`Err(())`), on the session's
    /// one timer.
    async fn before<'s, F: std::future::Future>(
        &'s mut self,
        deadline: Instant,
        io: impl FnOnce(&'s mut Socket) -> F,
    ) -> Result<F::Output, ()> {
        self.timer.as_mut().reset(deadline);
        let io = std::pin::pin!(io(&mut self.socket));
        let timer = self.timer.as_mut();
        match futures_util::future::select(io, timer).await {
            futures_util::future::Either::Left((out, _)) => Ok(out),
            futures_util::future::Either::Right(_) => Err(()),
        }
    }

    /// Records the last expectation's outcome.
    fn flush_pending(&mut self) {
        let Some((outcome, message)) = self.pending.take() else {
            return;
        };
        let mut rec = self.worker.recorder.borrow_mut();
        rec.record(&outcome);
        if let (Some(kind), Some(message)) = (outcome.error, message) {
            let name = &self.worker.scenario.steps[outcome.step as usize].name;
            rec.note_error(kind, || format!("step `{name}`: {message}"));
        }
    }

    fn fail(&mut self, kind: ErrorKind, message: String) {
        if kind == ErrorKind::WsClosedAbnormally {
            self.close.get_or_insert(CLOSE_ABNORMAL);
        }
        self.error.get_or_insert((kind, message));
    }

    /// Closes the session normally (unless it is over), waiting a little for the server's
    /// close frame, whose code is the session's.
    async fn finish(&mut self) {
        if self.close.is_some() || self.error.is_some() {
            let _ = tokio::time::timeout(CLOSE_WAIT, self.socket.close(None)).await;
            if self.close.is_none() {
                self.close = Some(match self.error {
                    Some((ErrorKind::WsProtocol, _)) => 1002,
                    Some((ErrorKind::WsClosedAbnormally, _)) | None => CLOSE_ABNORMAL,
                    Some(_) => 1011,
                });
            }
            return;
        }
        let frame = CloseFrame {
            code: CloseCode::Normal,
            reason: "".into(),
        };
        let deadline = Instant::now() + CLOSE_WAIT;
        if tokio::time::timeout_at(deadline, self.socket.close(Some(frame)))
            .await
            .is_err()
        {
            self.close = Some(1000);
            return;
        }
        loop {
            match tokio::time::timeout_at(deadline, self.socket.next()).await {
                Ok(Some(Ok(Message::Close(f)))) => {
                    self.close = Some(f.map_or(1005, |f| u16::from(f.code)));
                    return;
                }
                Ok(Some(Ok(m))) => {
                    if let Some(bytes) = payload(&m) {
                        self.counts.messages_received += 1;
                        self.counts.bytes_received += bytes.len() as u64;
                    }
                }
                // Closed after our close frame: the close is done (tungstenite may not hand
                // the server's frame over once the handshake completes).
                Ok(None) | Ok(Some(Err(_))) | Err(_) => {
                    self.close = Some(1000);
                    return;
                }
            }
        }
    }
}
