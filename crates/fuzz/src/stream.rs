//! A byte stream that plays a server's side from a script: the response bytes, cut into the
//! reads a client would see, then end of stream. Writes are accepted and dropped.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

pub struct ScriptedStream {
    data: Vec<u8>,
    /// Where each read ends (ascending offsets into `data`); the rest comes in one read.
    cuts: Vec<usize>,
    at: usize,
    next_cut: usize,
}

/// Its reads end when they return, like a socket read by tokio's reactor.
impl loadlab_engine::http::ReadStamp for ScriptedStream {}

impl ScriptedStream {
    /// `data` delivered in reads that end at the given offsets (unsorted, any size: taken
    /// modulo the length and sorted).
    pub fn new(data: Vec<u8>, cuts: &[usize]) -> Self {
        let len = data.len().max(1);
        let mut cuts: Vec<usize> = cuts.iter().map(|c| c % len).collect();
        cuts.sort_unstable();
        cuts.dedup();
        Self {
            data,
            cuts,
            at: 0,
            next_cut: 0,
        }
    }
}

impl AsyncRead for ScriptedStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        while this.next_cut < this.cuts.len() && this.cuts[this.next_cut] <= this.at {
            this.next_cut += 1;
        }
        let end = this
            .cuts
            .get(this.next_cut)
            .copied()
            .unwrap_or(this.data.len());
        let n = (end - this.at).min(buf.remaining());
        buf.put_slice(&this.data[this.at..this.at + n]);
        this.at += n;
        Poll::Ready(Ok(()))
    }
}

impl AsyncWrite for ScriptedStream {
    fn poll_write(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        b: &[u8],
    ) -> Poll<io::Result<usize>> {
        Poll::Ready(Ok(b.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}
