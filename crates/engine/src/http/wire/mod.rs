//! HTTP/2 through the purpose-built client (`h2wire`, issue 42) behind the interface the
//! transport uses for the `h2` crate's connections (`http/h2/conn.rs`): the same responses,
//! byte counts, gRPC replies and error kinds, so `--http2-client wire` changes what a request
//! costs, not what a run reports. Streamed responses (`stream:`) are not read by this client:
//! the transport keeps the `h2` crate for a scenario that has any (`http/http2.rs`).

mod errors;
mod head;

pub use errors::failure;
pub use head::{build, WireHead};

use super::h2::counted::{Counted, WireCount};
use super::h2wire::{H2Response, H2Wire, Keep, KeepHeaders};
use crate::grpc_reply::{grpc_status_of, GrpcReply};
use crate::request::RenderedRequest;
use crate::transport::{ConnectTiming, Failure, Response, ResponseData, ResponseTiming};
use loadlab_metrics::{ErrorKind, Protocol};
use std::sync::Arc;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::time::Instant;

/// A handle on an HTTP/2 connection of the purpose-built client; clones share it.
#[derive(Clone)]
pub struct WireConn {
    wire: H2Wire,
    pub protocol: Protocol,
    /// How it was opened, until its first exchange reports it.
    pub opened: Option<ConnectTiming>,
    /// Bytes it moved that no exchange has taken yet.
    count: Arc<WireCount>,
}

impl WireConn {
    /// Starts the connection on `io`: its driver (which sends the preface and SETTINGS) is
    /// spawned on this runtime. `settle`: wait for the server's SETTINGS, so its
    /// concurrent-stream limit is known before the first streams (shared connections).
    pub async fn handshake<S>(io: S, protocol: Protocol, settle: bool) -> Result<WireConn, Failure>
    where
        S: AsyncRead + AsyncWrite + crate::http::ReadStamp + Unpin + Send + 'static,
    {
        let count = Arc::new(WireCount::default());
        let (wire, driver) = H2Wire::new(Counted::new(io, count.clone()));
        tokio::spawn(driver);
        if settle {
            wire.settled().await.map_err(|e| {
                let mut f = failure(&e);
                f.message = format!("HTTP/2 handshake: {}", f.message);
                f
            })?;
        }
        Ok(WireConn {
            wire,
            protocol,
            opened: None,
            count,
        })
    }

    /// The connection takes no new streams (closed, failed, or going away after GOAWAY).
    pub fn is_closed(&self) -> bool {
        !self.wire.is_open()
    }

    /// Streams the server allows at once (its SETTINGS_MAX_CONCURRENT_STREAMS, once known).
    pub fn max_streams(&self) -> usize {
        self.wire.max_streams() as usize
    }

    /// One request on a new stream of this connection, with the bytes the connection moved
    /// since the previous exchange took its share.
    pub async fn exchange(
        &mut self,
        req: &RenderedRequest<'_>,
        head: &WireHead,
        keep: Option<&mut ResponseData>,
    ) -> Result<Response, Failure> {
        let result = self.stream(req, head, keep).await;
        self.count.attach(result)
    }

    async fn stream(
        &mut self,
        req: &RenderedRequest<'_>,
        head: &WireHead,
        mut keep: Option<&mut ResponseData>,
    ) -> Result<Response, Failure> {
        if keep.as_ref().is_some_and(|k| k.stream.is_some()) {
            // The transport chooses the `h2` crate for scenarios that stream; never read a
            // stream as a plain body.
            return Err(Failure::new(
                ErrorKind::Protocol,
                "a streamed response over HTTP/2 needs --http2-client h2",
            ));
        }
        if self.is_closed() {
            return Err(Failure {
                kind: ErrorKind::Reset,
                message: "the HTTP/2 connection was closed while idle".into(),
                stale: true,
                wire: None,
            });
        }
        let asked = Keep {
            headers: if keep.as_ref().is_some_and(|k| k.keep_headers) {
                KeepHeaders::All
            } else {
                head.server_header
            },
            body: keep.as_ref().is_some_and(|k| k.keep_body),
            grpc: req.grpc,
            max_body: req.max_body,
        };
        let mut exchange = self
            .wire
            .exchange_keep(&head.block, head.body.clone(), asked);
        let r = if head.body.is_some() {
            // As the `h2` backend says it: a body the server's window held back until the
            // request's deadline is a flow-control failure, not a timeout.
            match tokio::time::timeout_at(req.deadline, &mut exchange).await {
                Ok(r) => r,
                Err(_) => match exchange.body_pending() {
                    Some((sent, total)) => return Err(super::h2::window_stalled(sent, total)),
                    None => exchange.await,
                },
            }
        } else {
            exchange.await
        }
        .map_err(|e| failure(&e))?;
        let server_us = r
            .headers
            .iter()
            .find_map(|(name, value)| req.server.read(std::str::from_utf8(name).ok()?, value));
        if let Some(k) = keep.as_deref_mut() {
            take_kept(k, &r);
        }
        let grpc = req.grpc.then(|| grpc_reply(&r, keep));
        let response = Response {
            status: r.status,
            close: self.is_closed(),
            server_us,
            bytes_received: 0,
            bytes_sent: None,
            timing: ResponseTiming {
                opened: self.opened.take(),
                written: Some(Instant::from_std(r.written_at)),
                first_byte: Some(Instant::from_std(r.head_at)),
                received: r.done_at.map(Instant::from_std),
            },
            grpc,
        };
        Ok(response)
    }
}

/// What a step keeps of the response: its status known, its headers and body.
fn take_kept(k: &mut ResponseData, r: &H2Response) {
    k.status_known(r.status);
    if k.keep_headers {
        for (name, value) in r.headers.iter() {
            k.add_header(name, value);
        }
    }
    if let (true, Some(body)) = (k.keep_body, &r.body) {
        k.body.extend_from_slice(body);
    }
}

/// A gRPC call's reply: `grpc-status` from a trailers-only head, else from the trailers (as
/// the `h2` backend reads them), its message kept in `keep`, and the messages counted.
fn grpc_reply(r: &H2Response, keep: Option<&mut ResponseData>) -> GrpcReply {
    let in_head = r.headers.get(b"grpc-status").map(|s| (s, &r.headers));
    let found = in_head.or_else(|| {
        let t = r.trailers.as_ref()?;
        Some((t.get(b"grpc-status")?, t))
    });
    let status = found.and_then(|(s, list)| grpc_status_of(s, list.get(b"grpc-message")));
    super::h2::grpc_reply(status, &r.frames.unwrap_or_default(), keep)
}
