//! Bytes an HTTP/2 connection really moves — frames, HPACK-compressed header blocks, the
//! connection's own SETTINGS, PING and WINDOW_UPDATE — counted under the `h2` crate, so data
//! sent and received are what went over the connection (below TLS: HTTP bytes, as for
//! HTTP/1.1), not the request and response re-counted as HTTP/1.1 would write them.
//!
//! Streams share a connection, so bytes are handed out as they are taken: each finished
//! exchange takes what the connection moved since the previous one took. Totals are exact;
//! one request's share is only as fine as the interleaving of its streams allows.

use crate::transport::{Failure, Response, WireBytes};
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// Bytes a connection moved and no exchange has taken yet.
#[derive(Debug, Default)]
pub struct WireCount {
    sent: AtomicU64,
    received: AtomicU64,
}

impl WireCount {
    /// (sent, received) since the last take.
    pub fn take(&self) -> (u64, u64) {
        (
            self.sent.swap(0, Ordering::Relaxed),
            self.received.swap(0, Ordering::Relaxed),
        )
    }

    /// An exchange's result with what the connection moved since the previous exchange took
    /// its share: on the response, or on the failure.
    pub fn attach(&self, result: Result<Response, Failure>) -> Result<Response, Failure> {
        let (sent, received) = self.take();
        match result {
            Ok(mut response) => {
                response.bytes_sent = Some(sent);
                response.bytes_received = received;
                Ok(response)
            }
            Err(mut failure) => {
                failure.wire = Some(WireBytes { sent, received });
                Err(failure)
            }
        }
    }
}

/// `inner`, counting into a [`WireCount`].
pub struct Counted<S> {
    inner: S,
    count: Arc<WireCount>,
}

impl<S> Counted<S> {
    pub fn new(inner: S, count: Arc<WireCount>) -> Self {
        Self { inner, count }
    }
}

impl<S: crate::http::stream::ReadStamp> crate::http::stream::ReadStamp for Counted<S> {
    fn received_at(&self) -> Option<tokio::time::Instant> {
        self.inner.received_at()
    }

    fn set_idle(&mut self, idle: bool) {
        self.inner.set_idle(idle);
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Counted<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        let read = (buf.filled().len() - before) as u64;
        self.count.received.fetch_add(read, Ordering::Relaxed);
        polled
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Counted<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.inner).poll_write(cx, buf);
        if let Poll::Ready(Ok(n)) = polled {
            self.count.sent.fetch_add(n as u64, Ordering::Relaxed);
        }
        polled
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        if let Poll::Ready(Ok(n)) = polled {
            self.count.sent.fetch_add(n as u64, Ordering::Relaxed);
        }
        polled
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    #[tokio::test]
    async fn what_moves_is_counted_once_and_taken_once() {
        let (client, mut server) = tokio::io::duplex(64);
        let count = Arc::new(WireCount::default());
        let mut counted = Counted::new(client, count.clone());
        counted.write_all(b"hello").await.unwrap();
        let mut got = [0u8; 5];
        server.read_exact(&mut got).await.unwrap();
        server.write_all(b"abc").await.unwrap();
        let mut back = [0u8; 3];
        counted.read_exact(&mut back).await.unwrap();
        assert_eq!(count.take(), (5, 3));
        assert_eq!(count.take(), (0, 0), "taken once");
    }
}
