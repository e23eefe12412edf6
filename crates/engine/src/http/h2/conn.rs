//! One HTTP/2 connection through the `h2` crate: the handshake (with, for shared connections,
//! a PING round trip so the server's SETTINGS are known before streams are opened), a task
//! driving the connection, and one exchange per stream — the request body sent as the
//! server's flow-control window allows, the response body read and its window given back.

use super::counted::{Counted, WireCount};
use super::errors::failure;
use super::request::Head;
use crate::grpc_reply::{FrameCounter, GrpcReply};
use crate::request::RenderedRequest;
use crate::transport::{ConnectTiming, Failure, Response, ResponseData, ResponseTiming};
use bytes::Bytes;
use h2::client::SendRequest;
use loadlab_metrics::{ErrorKind, GrpcCode, Protocol};
use std::future::poll_fn;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::time::Instant;

/// Receive windows: large, like h2load's, so a fast server is not held up by WINDOW_UPDATE
/// round trips (the data is read and discarded as it comes; nothing is buffered for long).
const STREAM_WINDOW: u32 = 4 << 20;
const CONNECTION_WINDOW: u32 = 16 << 20;

/// A gRPC call's status and message, as `grpc-status` and `grpc-message` give them.
pub type GrpcStatus = (GrpcCode, String);

/// A handle on an HTTP/2 connection; clones share it (one per concurrent stream).
#[derive(Clone)]
pub struct H2Conn {
    send: SendRequest<Bytes>,
    /// The task driving the connection has ended (closed, failed, or drained after GOAWAY).
    closed: Arc<AtomicBool>,
    pub protocol: Protocol,
    /// How it was opened, until its first exchange reports it (a shared connection's is
    /// taken by the request that opened it, before the connection is cloned).
    pub opened: Option<ConnectTiming>,
    /// Bytes it moved that no exchange has taken yet.
    wire: Arc<WireCount>,
}

impl H2Conn {
    /// Performs the HTTP/2 handshake on `io` and spawns the task that drives the connection.
    /// `settle`: wait one PING round trip, so the server's SETTINGS (its concurrent-stream
    /// limit) apply before the first stream.
    pub async fn handshake<S>(io: S, protocol: Protocol, settle: bool) -> Result<H2Conn, Failure>
    where
        S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    {
        let wire = Arc::new(WireCount::default());
        let io = Counted::new(io, wire.clone());
        let (send, mut connection) = h2::client::Builder::new()
            .initial_window_size(STREAM_WINDOW)
            .initial_connection_window_size(CONNECTION_WINDOW)
            .enable_push(false)
            .handshake::<Counted<S>, Bytes>(io)
            .await
            .map_err(|e| handshake_failure(&e))?;
        let ping = if settle { connection.ping_pong() } else { None };
        let closed = Arc::new(AtomicBool::new(false));
        let ended = closed.clone();
        tokio::spawn(async move {
            let _ = connection.await;
            ended.store(true, Ordering::Release);
        });
        if let Some(mut ping) = ping {
            ping.ping(h2::Ping::opaque())
                .await
                .map_err(|e| handshake_failure(&e))?;
        }
        Ok(H2Conn {
            send,
            closed,
            protocol,
            opened: None,
            wire,
        })
    }

    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    /// Streams the server allows at once (its SETTINGS_MAX_CONCURRENT_STREAMS, once known).
    pub fn max_streams(&self) -> usize {
        self.send.current_max_send_streams()
    }

    /// One request on a new stream of this connection, with the bytes the connection moved
    /// since the previous exchange took its share.
    pub async fn exchange(
        &mut self,
        req: &RenderedRequest<'_>,
        head: http::Request<()>,
        body: Option<Bytes>,
        keep: Option<&mut ResponseData>,
    ) -> Result<Response, Failure> {
        let result = self.stream(req, head, body, keep).await;
        self.wire.attach(result)
    }

    /// Sends the request on a new stream and reads its response: the head, then the body
    /// (kept, or only counted), then for a gRPC call its status.
    async fn stream(
        &mut self,
        req: &RenderedRequest<'_>,
        head: http::Request<()>,
        body: Option<Bytes>,
        mut keep: Option<&mut ResponseData>,
    ) -> Result<Response, Failure> {
        self.still_open()?;
        poll_fn(|cx| self.send.poll_ready(cx))
            .await
            .map_err(|e| failure(&e))?;
        let (response, stream) = self
            .send
            .send_request(head, body.is_none())
            .map_err(|e| failure(&e))?;
        if let Some(body) = body {
            send_body(stream, body, req.deadline).await?;
        }
        let written = Instant::now();
        let response = response.await.map_err(|e| failure(&e))?;
        let head = Instant::now();
        let status = response.status().as_u16();
        let (server_us, head_status) = read_head(req, response.headers(), keep.as_deref_mut());
        let mut frames = FrameCounter::default();
        let mut body = response.into_body();
        let mut received = 0u64;
        if let Some(k) = keep.as_deref_mut() {
            k.status_known(status);
        }
        while let Some(chunk) = next_data(&mut body, keep.as_deref()).await? {
            let chunk = chunk.map_err(|e| failure(&e))?;
            let _ = body.flow_control().release_capacity(chunk.len());
            received += chunk.len() as u64;
            take_data(req, &chunk, received, &mut frames, keep.as_deref_mut())?;
        }
        if let Some(k) = keep.as_deref_mut().filter(|k| k.stream.is_some()) {
            k.body_ended(Instant::now())?;
        }
        let grpc = if req.grpc {
            let status = match head_status {
                Some(s) => Some(s),
                None => body
                    .trailers()
                    .await
                    .map_err(|e| failure(&e))?
                    .as_ref()
                    .and_then(crate::grpc_reply::grpc_status),
            };
            Some(grpc_reply(status, &frames, keep))
        } else {
            None
        };
        Ok(self.response(status, server_us, written, head, grpc))
    }

    /// A connection that closed while idle: the request would never reach the server.
    #[inline]
    fn still_open(&self) -> Result<(), Failure> {
        if self.is_closed() {
            return Err(Failure {
                kind: ErrorKind::Reset,
                message: "the HTTP/2 connection was closed while idle".into(),
                stale: true,
                wire: None,
            });
        }
        Ok(())
    }

    /// The response, its head in at `head` for a request written at `written`. Its byte
    /// counts are the connection's, set by `exchange`.
    #[inline]
    fn response(
        &mut self,
        status: u16,
        server_us: Option<u64>,
        written: Instant,
        head: Instant,
        grpc: Option<GrpcReply>,
    ) -> Response {
        Response {
            status,
            close: self.is_closed(),
            server_us,
            bytes_received: 0,
            bytes_sent: None,
            timing: ResponseTiming {
                opened: self.opened.take(),
                written: Some(written),
                first_byte: Some(head),
                received: None,
            },
            grpc,
        }
    }
}

/// Reads a response head: the server's own timing header, and the headers into `keep` when
/// it keeps them. For a gRPC call, also its status when the head has one (a trailers-only
/// answer, an error before any message).
#[inline]
fn read_head(
    req: &RenderedRequest<'_>,
    headers: &http::HeaderMap,
    keep: Option<&mut ResponseData>,
) -> (Option<u64>, Option<GrpcStatus>) {
    let server_us = headers
        .iter()
        .find_map(|(name, value)| req.server.read(name.as_str(), value.as_bytes()));
    if let Some(k) = keep.filter(|k| k.keep_headers) {
        for (name, value) in headers {
            k.add_header(name.as_str().as_bytes(), value.as_bytes());
        }
    }
    let head_status = if req.grpc {
        crate::grpc_reply::grpc_status(headers)
    } else {
        None
    };
    (server_us, head_status)
}

/// Takes in a DATA frame's `chunk`, `received` bytes of body in all: a gRPC call's frames
/// are counted as they arrive, a body past `max_body` fails the response (dropping the
/// stream resets it, CANCEL: the rest is not read), and a kept body grows.
#[inline]
fn take_data(
    req: &RenderedRequest<'_>,
    chunk: &[u8],
    received: u64,
    frames: &mut FrameCounter,
    keep: Option<&mut ResponseData>,
) -> Result<(), Failure> {
    if req.grpc {
        frames.feed(chunk, Instant::now());
    }
    if received > req.max_body {
        return Err(Failure::new(
            ErrorKind::BodyTooLarge,
            format!("response body larger than {} bytes", req.max_body),
        ));
    }
    if let Some(k) = keep.filter(|k| k.keep_body) {
        k.body.extend_from_slice(chunk);
        if k.stream.is_some() {
            k.body_arrived(Instant::now())?;
        }
    }
    Ok(())
}

/// A gRPC call's reply from its `status` (with its message, kept in `keep` to say why a
/// call failed) and the messages counted in its body.
#[inline]
pub fn grpc_reply(
    status: Option<GrpcStatus>,
    frames: &FrameCounter,
    keep: Option<&mut ResponseData>,
) -> GrpcReply {
    if let (Some(k), Some((_, message))) = (keep, &status) {
        k.grpc_message.clone_from(message);
    }
    GrpcReply::new(status.map(|(code, _)| code), frames)
}

/// The next DATA of a response body, within a stream's stall timeout (`stream.stall`).
async fn next_data(
    body: &mut h2::RecvStream,
    keep: Option<&ResponseData>,
) -> Result<Option<Result<bytes::Bytes, h2::Error>>, Failure> {
    match keep.and_then(ResponseData::stall_deadline) {
        Some(at) => match tokio::time::timeout_at(at, body.data()).await {
            Ok(next) => Ok(next),
            Err(_) => Err(keep.map(ResponseData::stalled).expect("a stream")),
        },
        None => Ok(body.data().await),
    }
}

/// Sends the request body as the server's flow-control window allows. A window that stays
/// closed until the request times out is the server's doing, and is said so.
async fn send_body(
    mut stream: h2::SendStream<Bytes>,
    mut body: Bytes,
    deadline: tokio::time::Instant,
) -> Result<(), Failure> {
    let total = body.len();
    if total == 0 {
        return stream.send_data(body, true).map_err(|e| failure(&e));
    }
    stream.reserve_capacity(total);
    while !body.is_empty() {
        let capacity = tokio::time::timeout_at(deadline, poll_fn(|cx| stream.poll_capacity(cx)));
        let granted = match capacity.await {
            Ok(Some(Ok(n))) => n,
            Ok(Some(Err(e))) => return Err(failure(&e)),
            Ok(None) => {
                return Err(Failure::new(
                    ErrorKind::StreamReset,
                    "the stream was closed while the request body was being sent",
                ))
            }
            Err(_) => return Err(window_stalled(total - body.len(), total)),
        };
        if granted == 0 {
            continue;
        }
        let chunk = body.split_to(granted.min(body.len()));
        stream
            .send_data(chunk, body.is_empty())
            .map_err(|e| failure(&e))?;
    }
    Ok(())
}

/// A request body the server's flow-control window held back until the request timed out:
/// the server's doing, and said so.
pub fn window_stalled(sent: usize, total: usize) -> Failure {
    Failure::new(
        ErrorKind::FlowControl,
        format!(
            "the server's flow-control window stayed closed (no WINDOW_UPDATE): {sent} of {total} bytes of the request body could be sent before the timeout"
        ),
    )
}

/// A handshake that fails is a server that does not speak HTTP/2 here, or a broken one.
fn handshake_failure(e: &h2::Error) -> Failure {
    let mut f = failure(e);
    f.message = format!("HTTP/2 handshake: {}", f.message);
    f
}

/// Sends a request built from `head`; convenience for tests and the fuzz harness.
pub async fn exchange_head(
    conn: &mut H2Conn,
    req: &RenderedRequest<'_>,
    head: &Head,
    keep: Option<&mut ResponseData>,
) -> Result<Response, Failure> {
    conn.exchange(req, head.request(), head.body(), keep).await
}
