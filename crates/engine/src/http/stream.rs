//! One stream type for plain and TLS connections, so the client code is written once.

use super::deferred::DeferredStream;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;

pub enum Stream {
    Plain(TcpStream),
    Tls(Box<TlsStream<TcpStream>>),
    /// Plain TCP read at the worker's wake-ups (the open model at moderate rates).
    Deferred(DeferredStream),
}

/// When the bytes of a stream's last read reached the host, if the stream knows it better than
/// the moment the read returned (a deferred read can return a millisecond later).
pub trait ReadStamp {
    fn received_at(&self) -> Option<tokio::time::Instant> {
        None
    }

    /// Says whether a response is awaited: a stream read at the worker's wake-ups puts off
    /// the reads of an idle connection until the worker wakes anyway.
    fn set_idle(&mut self, _idle: bool) {}
}

impl ReadStamp for Stream {
    fn received_at(&self) -> Option<tokio::time::Instant> {
        match self {
            Stream::Deferred(s) => s.received_at(),
            _ => None,
        }
    }

    fn set_idle(&mut self, idle: bool) {
        if let Stream::Deferred(s) = self {
            s.set_idle(idle);
        }
    }
}

impl ReadStamp for tokio::io::DuplexStream {}
impl ReadStamp for TcpStream {}

impl AsyncRead for Stream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_read(cx, buf),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_read(cx, buf),
            Stream::Deferred(s) => Pin::new(s).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Stream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_write(cx, buf),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_write(cx, buf),
            Stream::Deferred(s) => Pin::new(s).poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_flush(cx),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_flush(cx),
            Stream::Deferred(s) => Pin::new(s).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_shutdown(cx),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
            Stream::Deferred(s) => Pin::new(s).poll_shutdown(cx),
        }
    }
}
