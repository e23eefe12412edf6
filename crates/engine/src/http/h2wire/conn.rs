//! The handle tasks share to send requests on one connection, and the future of one
//! exchange: submitted under the lock with one wake of the driver per batch, completed by
//! the driver filling the exchange's slot and waking only its task.

use super::driver::{Driver, Shared};
use super::error::H2Error;
use super::hpack::HeaderBlock;
use super::response::{H2Response, Keep};
use super::state::{Phase, State};
use bytes::Bytes;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

/// Connection settings that are ours to choose.
#[derive(Debug, Clone, Copy)]
pub struct Config {
    /// The first stream id (odd); tests start near 2^31 to reach id exhaustion.
    pub first_stream: u32,
}

impl Default for Config {
    fn default() -> Self {
        Config { first_stream: 1 }
    }
}

/// A clonable handle to one HTTP/2 connection; tasks on any worker may use it at once.
#[derive(Clone)]
pub struct H2Wire {
    guard: Arc<Guard>,
}

/// When the last handle goes, the driver closes the connection once its streams end.
struct Guard {
    shared: Arc<Shared>,
}

impl Drop for Guard {
    fn drop(&mut self) {
        let mut st = self.shared.lock();
        st.handles_dropped = true;
        let driver = st.driver.take();
        drop(st);
        if let Some(d) = driver {
            d.wake();
        }
    }
}

impl H2Wire {
    /// A connection over `io` (already connected; h2c prior knowledge or TLS with ALPN h2).
    /// Nothing is sent until the driver runs: spawn it.
    pub fn new<IO>(io: IO) -> (H2Wire, Driver<IO>) {
        Self::with_config(io, Config::default())
    }

    pub fn with_config<IO>(io: IO, config: Config) -> (H2Wire, Driver<IO>) {
        let shared = Arc::new(Shared::new(State::new(config.first_stream)));
        let driver = Driver::new(io, shared.clone());
        (
            H2Wire {
                guard: Arc::new(Guard { shared }),
            },
            driver,
        )
    }

    /// Sends one request and waits for its whole response (body counted, not kept).
    pub fn exchange<'a>(&'a self, head: &HeaderBlock, body: Option<Bytes>) -> Exchange<'a> {
        self.exchange_keep(head, body, Keep::default())
    }

    /// As [`H2Wire::exchange`], keeping what `keep` asks for.
    pub fn exchange_keep<'a>(
        &'a self,
        head: &HeaderBlock,
        body: Option<Bytes>,
        keep: Keep,
    ) -> Exchange<'a> {
        Exchange {
            shared: &self.guard.shared,
            request: Some((head.bytes.clone(), body, keep)),
            slot: None,
        }
    }

    /// Streams the server allows at once: its SETTINGS_MAX_CONCURRENT_STREAMS once known
    /// (see [`H2Wire::settled`]), unlimited before. Exchanges beyond it wait for a stream.
    pub fn max_streams(&self) -> u32 {
        self.guard.shared.lock().peer_max_streams
    }

    /// Waits for the server's first SETTINGS (or the end of the connection), so that
    /// [`H2Wire::max_streams`] is the server's before many exchanges start. The driver must
    /// be running.
    pub fn settled(&self) -> Settled<'_> {
        Settled {
            shared: &self.guard.shared,
        }
    }

    /// False once the connection takes no new streams (GOAWAY, ids exhausted, closed).
    pub fn is_open(&self) -> bool {
        let st = self.guard.shared.lock();
        st.closed.is_none() && st.draining.is_none()
    }
}

/// The future of [`H2Wire::settled`]: the connection's error if it ended first.
pub struct Settled<'a> {
    shared: &'a Shared,
}

impl Future for Settled<'_> {
    type Output = Result<(), H2Error>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut st = self.shared.lock();
        if let Some(e) = &st.closed {
            return Poll::Ready(Err(e.clone()));
        }
        if st.got_settings {
            return Poll::Ready(Ok(()));
        }
        if !st.settle_waiters.iter().any(|w| w.will_wake(cx.waker())) {
            st.settle_waiters.push(cx.waker().clone());
        }
        Poll::Pending
    }
}

/// One request in flight. Dropping it before it completes resets its stream
/// (RST_STREAM CANCEL) and frees its slot.
pub struct Exchange<'a> {
    shared: &'a Shared,
    request: Option<(Bytes, Option<Bytes>, Keep)>,
    slot: Option<usize>,
}

impl Future for Exchange<'_> {
    type Output = Result<H2Response, H2Error>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        if let Some((block, body, keep)) = this.request.take() {
            let mut st = this.shared.lock();
            if let Some(e) = st.draining.as_ref().or(st.closed.as_ref()) {
                return Poll::Ready(Err(e.clone()));
            }
            let i = st.alloc();
            st.fill(i, block, body, keep, cx.waker().clone());
            st.queued.push_back(i);
            let driver = st.driver.take();
            drop(st);
            this.slot = Some(i);
            if let Some(d) = driver {
                d.wake();
            }
            return Poll::Pending;
        }
        let Some(i) = this.slot else {
            return Poll::Ready(Err(H2Error::Closed));
        };
        let mut st = this.shared.lock();
        let s = &mut st.slots[i];
        if s.phase != Phase::Done {
            if !s.waker.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
                s.waker = Some(cx.waker().clone());
            }
            return Poll::Pending;
        }
        let result = std::mem::replace(&mut s.result, Ok(()));
        let response = result.map(|()| H2Response {
            status: s.status,
            headers: std::mem::take(&mut s.headers),
            trailers: s.trailers.take(),
            body_len: s.body_len,
            body: s.body_buf.take(),
            frames: s.frames.take(),
            written_at: s.written_at,
            head_at: s.head_at,
            done_at: s.done_at,
        });
        st.free_slot(i);
        this.slot = None;
        Poll::Ready(response)
    }
}

impl Exchange<'_> {
    /// (bytes sent, total) of a request body the stream has not finished sending (the
    /// server's flow-control window is closed, or has not opened far enough); `None` when
    /// there is no body, it is all sent, or the stream is not open.
    pub fn body_pending(&self) -> Option<(usize, usize)> {
        let i = self.slot?;
        let st = self.shared.lock();
        let s = &st.slots[i];
        let total = s.body.as_ref()?.len();
        (s.phase == Phase::Open && s.body_sent < total).then_some((s.body_sent, total))
    }
}

impl Drop for Exchange<'_> {
    fn drop(&mut self) {
        let Some(i) = self.slot else { return };
        let mut st = self.shared.lock();
        match st.slots[i].phase {
            Phase::Done => st.free_slot(i),
            // The driver frees it when it reaches it in the queue.
            Phase::Queued => st.slots[i].cancelled = true,
            Phase::Open => {
                st.slots[i].cancelled = true;
                st.cancels.push(i);
                let driver = st.driver.take();
                drop(st);
                if let Some(d) = driver {
                    d.wake();
                }
            }
            Phase::Free => {}
        }
    }
}
