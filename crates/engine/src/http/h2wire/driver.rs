//! The one task that owns a connection's socket: per wake-up it encodes everything tasks
//! submitted into one buffer and writes it with one call, then reads all that is available,
//! applies every complete frame under one lock and wakes only the tasks whose streams ended.

use super::error::H2Error;
use super::frame::{self, code};
use super::state::{ConnError, Phase, State};
use crate::http::stream::ReadStamp;
use std::future::Future;
use std::ops::ControlFlow;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};
use std::time::Instant;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// What the handles and the driver share.
pub struct Shared {
    state: Mutex<State>,
}

impl Shared {
    pub fn new(state: State) -> Self {
        Shared {
            state: Mutex::new(state),
        }
    }

    /// The state; a panic while it was held leaves it usable (every change is whole).
    pub fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

const READ_CHUNK: usize = 64 << 10;

/// Drives one connection until it closes; spawn it (`tokio::spawn` or `spawn_local`).
pub struct Driver<IO> {
    io: IO,
    shared: Arc<Shared>,
    rbuf: Vec<u8>,
    rstart: usize,
    rend: usize,
    wbuf: Vec<u8>,
    wpos: usize,
    /// Slots whose HEADERS are in `wbuf`.
    in_wbuf: Vec<usize>,
    /// Written, to be stamped at the next lock.
    written: Vec<usize>,
    written_at: Option<Instant>,
    wakers: Vec<Waker>,
    /// This wake-up was put off once already (see `poll`).
    deferred: bool,
}

impl<IO> Driver<IO> {
    pub(crate) fn new(io: IO, shared: Arc<Shared>) -> Self {
        Driver {
            io,
            shared,
            rbuf: vec![0; READ_CHUNK],
            rstart: 0,
            rend: 0,
            wbuf: Vec::with_capacity(16 << 10),
            wpos: 0,
            in_wbuf: Vec::new(),
            written: Vec::new(),
            written_at: None,
            wakers: Vec::new(),
            deferred: false,
        }
    }

    fn stamp(&mut self, st: &mut State) {
        if let Some(at) = self.written_at.take() {
            for &i in &self.written {
                let s = &mut st.slots[i];
                if s.phase == Phase::Open {
                    s.written_at = at;
                }
            }
            self.written.clear();
        }
    }

    /// Takes the tasks to wake out of the state, to wake them after the lock is released.
    fn collect_wakers(&mut self, st: &mut State) {
        std::mem::swap(&mut self.wakers, &mut st.to_wake);
    }

    fn wake_all(&mut self) {
        for w in self.wakers.drain(..) {
            w.wake();
        }
    }

    /// The socket failed or ended: every exchange fails with `error`.
    fn end(&mut self, error: H2Error) -> Poll<()> {
        let shared = self.shared.clone();
        let mut st = shared.lock();
        st.fail_all(error);
        self.collect_wakers(&mut st);
        drop(st);
        self.wake_all();
        Poll::Ready(())
    }
}

fn io_error(e: &std::io::Error) -> H2Error {
    H2Error::Io(e.kind(), e.to_string())
}

impl<IO: AsyncRead + AsyncWrite + ReadStamp + Unpin> Future for Driver<IO> {
    type Output = ();

    /// One pass: encode what was submitted, write it, read what arrived, apply its frames;
    /// again until the socket has nothing to read.
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = &mut *self;
        loop {
            let finished = match this.take_submissions(cx) {
                Some(finished) => finished,
                None => return Poll::Pending,
            };
            this.wake_all();
            if let ControlFlow::Break(done) = this.write_batch(cx, finished) {
                return done;
            }
            match this.read_available(cx) {
                ControlFlow::Break(done) => return done,
                ControlFlow::Continue(false) => return Poll::Pending,
                ControlFlow::Continue(true) => this.apply_frames(),
            }
        }
    }
}

impl<IO: AsyncRead + AsyncWrite + ReadStamp + Unpin> Driver<IO> {
    /// Encodes what was submitted since the last pass into the write buffer; whether the
    /// connection is finished (nothing open, nothing may start). `None`: put off once.
    fn take_submissions(&mut self, cx: &mut Context<'_>) -> Option<bool> {
        let shared = self.shared.clone();
        let mut st = shared.lock();
        if !st.driver.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
            st.driver = Some(cx.waker().clone());
        }
        self.stamp(&mut st);
        if !self.deferred && !st.queued.is_empty() && self.wbuf.is_empty() {
            // Woken by a submission: go to the back of the run queue once, so the
            // other tasks woken by the same read submit too and one write carries
            // them all (on a multi-thread runtime the submitter's wake puts us in
            // its worker's LIFO slot, ahead of them).
            self.deferred = true;
            drop(st);
            cx.waker().wake_by_ref();
            return None;
        }
        self.deferred = false;
        st.encode();
        // Read at the worker's wake-ups, an idle connection's reads wait for the next one.
        self.io
            .set_idle(st.got_settings && st.open == 0 && st.queued.is_empty());
        let finished = st.finished();
        if finished && !st.sent_goaway {
            // A graceful close: nothing open, nothing may start.
            frame::put_goaway(&mut st.out, 0, code::NO_ERROR, b"");
            st.sent_goaway = true;
        }
        if self.wbuf.is_empty() && !st.out.is_empty() {
            std::mem::swap(&mut self.wbuf, &mut st.out);
            std::mem::swap(&mut self.in_wbuf, &mut st.unwritten);
        }
        self.collect_wakers(&mut st);
        Some(finished)
    }

    /// Writes the batch: one call per pass unless the socket takes less. Ends the
    /// connection on an error, or once `finished` and everything is written.
    fn write_batch(&mut self, cx: &mut Context<'_>, finished: bool) -> ControlFlow<Poll<()>> {
        while self.wpos < self.wbuf.len() {
            match Pin::new(&mut self.io).poll_write(cx, &self.wbuf[self.wpos..]) {
                Poll::Ready(Ok(0)) => {
                    return ControlFlow::Break(self.end(H2Error::Io(
                        std::io::ErrorKind::WriteZero,
                        "the socket took no bytes".into(),
                    )));
                }
                Poll::Ready(Ok(n)) => self.wpos += n,
                Poll::Ready(Err(e)) => return ControlFlow::Break(self.end(io_error(&e))),
                Poll::Pending => break,
            }
        }
        if self.wpos == self.wbuf.len() && !self.wbuf.is_empty() {
            self.wbuf.clear();
            self.wpos = 0;
            // A buffering stream (TLS) must pass the bytes on now.
            if let Poll::Ready(Err(e)) = Pin::new(&mut self.io).poll_flush(cx) {
                return ControlFlow::Break(self.end(io_error(&e)));
            }
            if !self.in_wbuf.is_empty() {
                self.written_at = Some(Instant::now());
                self.written.append(&mut self.in_wbuf);
            }
        }
        if finished && self.wbuf.is_empty() {
            let _ = Pin::new(&mut self.io).poll_shutdown(cx);
            let error = self.shared.lock().eof_error();
            return ControlFlow::Break(self.end(error));
        }
        ControlFlow::Continue(())
    }

    /// Reads all that is available; whether anything came. Ends the connection at its end
    /// or on an error.
    fn read_available(&mut self, cx: &mut Context<'_>) -> ControlFlow<Poll<()>, bool> {
        let mut got = false;
        loop {
            if self.rbuf.len() - self.rend < READ_CHUNK / 4 {
                self.rbuf.copy_within(self.rstart..self.rend, 0);
                self.rend -= self.rstart;
                self.rstart = 0;
                if self.rbuf.len() - self.rend < READ_CHUNK / 4 {
                    self.rbuf.resize(self.rbuf.len() + READ_CHUNK, 0);
                }
            }
            let mut rb = ReadBuf::new(&mut self.rbuf[self.rend..]);
            match Pin::new(&mut self.io).poll_read(cx, &mut rb) {
                Poll::Ready(Ok(())) => {
                    let n = rb.filled().len();
                    if n == 0 {
                        let error = self.shared.lock().eof_error();
                        return ControlFlow::Break(self.end(error));
                    }
                    self.rend += n;
                    got = true;
                    if self.rend < self.rbuf.len() {
                        // The socket had less than we asked for: it is drained.
                        break;
                    }
                }
                Poll::Ready(Err(e)) => return ControlFlow::Break(self.end(io_error(&e))),
                Poll::Pending => break,
            }
        }
        ControlFlow::Continue(got)
    }

    /// Applies every complete frame read so far under one lock, and wakes the tasks whose
    /// streams ended.
    fn apply_frames(&mut self) {
        // A stream read at the worker's wake-ups knows when the bytes arrived: the frames
        // happened then, not when they were read (up to a wake-up later).
        let stamped = self.io.received_at();
        let now = stamped.map_or_else(Instant::now, |at| at.into_std());
        let shared = self.shared.clone();
        let mut st = shared.lock();
        st.reads_stamped = stamped.is_some();
        self.stamp(&mut st);
        loop {
            match frame::parse(
                &self.rbuf[self.rstart..self.rend],
                frame::DEFAULT_MAX_FRAME_SIZE,
            ) {
                Ok(Some((f, used))) => {
                    self.rstart += used;
                    if let Err(e) = st.on_frame(f, now) {
                        st.fail_connection(e);
                        break;
                    }
                }
                Ok(None) => break,
                Err(fe) => {
                    st.fail_connection(ConnError {
                        code: fe.code,
                        error: H2Error::Protocol(fe.to_string()),
                    });
                    break;
                }
            }
            if st.closed.is_some() {
                break;
            }
        }
        if self.rstart == self.rend {
            self.rstart = 0;
            self.rend = 0;
        }
        self.collect_wakers(&mut st);
        drop(st);
        self.wake_all();
    }
}
