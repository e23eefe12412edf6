//! One HTTP/2 connection through the `h2` crate: the handshake (with, for shared connections,
//! a PING round trip so the server's SETTINGS are known before streams are opened), a task
//! driving the connection, and one exchange per stream — the request body sent as the
//! server's flow-control window allows, the response body read and its window given back.

use super::counted::{Counted, WireCount};
use super::errors::failure;
use super::request::Head;
use crate::request::RenderedRequest;
use crate::transport::{ConnectTiming, Failure, Response, ResponseData, ResponseTiming, WireBytes};
use bytes::Bytes;
use h2::client::SendRequest;
use loadlab_metrics::{ErrorKind, Protocol};
use std::future::poll_fn;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::time::Instant;

/// Receive windows: large, like h2load's, so a fast server is not held up by WINDOW_UPDATE
/// round trips (the data is read and discarded as it comes; nothing is buffered for long).
const STREAM_WINDOW: u32 = 4 << 20;
const CONNECTION_WINDOW: u32 = 16 << 20;

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
        let (sent, received) = self.wire.take();
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

    async fn stream(
        &mut self,
        req: &RenderedRequest<'_>,
        head: http::Request<()>,
        body: Option<Bytes>,
        keep: Option<&mut ResponseData>,
    ) -> Result<Response, Failure> {
        if self.is_closed() {
            // Never reached the server: a connection that closed while idle.
            return Err(Failure {
                kind: ErrorKind::Reset,
                message: "the HTTP/2 connection was closed while idle".into(),
                stale: true,
                wire: None,
            });
        }
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
        let server_us = response
            .headers()
            .iter()
            .find_map(|(name, value)| req.server.read(name.as_str(), value.as_bytes()));
        let mut keep = keep;
        if let Some(k) = keep.as_deref_mut().filter(|k| k.keep_headers) {
            for (name, value) in response.headers() {
                k.add_header(name.as_str().as_bytes(), value.as_bytes());
            }
        }
        // A trailers-only answer (an error before any message) has its status in the head.
        let head_status = if req.grpc {
            crate::grpc_reply::grpc_status(response.headers())
        } else {
            None
        };
        let mut frames = crate::grpc_reply::FrameCounter::default();
        let mut body = response.into_body();
        let mut received = 0u64;
        if let Some(k) = keep.as_deref_mut() {
            k.status_known(status);
        }
        while let Some(chunk) = next_data(&mut body, keep.as_deref()).await? {
            let chunk = chunk.map_err(|e| failure(&e))?;
            let _ = body.flow_control().release_capacity(chunk.len());
            received += chunk.len() as u64;
            if req.grpc {
                frames.feed(&chunk, Instant::now());
            }
            if received > req.max_body {
                // Dropping the stream resets it (CANCEL): the rest is not read.
                return Err(Failure::new(
                    ErrorKind::BodyTooLarge,
                    format!("response body larger than {} bytes", req.max_body),
                ));
            }
            if let Some(k) = keep.as_deref_mut().filter(|k| k.keep_body) {
                k.body.extend_from_slice(&chunk);
                if k.stream.is_some() {
                    k.body_arrived(Instant::now())?;
                }
            }
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
            if let (Some(k), Some((_, message))) = (keep, &status) {
                k.grpc_message.clone_from(message);
            }
            Some(crate::grpc_reply::GrpcReply::new(
                status.map(|(code, _)| code),
                &frames,
            ))
        } else {
            None
        };
        Ok(Response {
            status,
            close: self.is_closed(),
            server_us,
            // Set from the connection's count by `exchange`.
            bytes_received: 0,
            bytes_sent: None,
            timing: ResponseTiming {
                opened: self.opened.take(),
                written: Some(written),
                first_byte: Some(head),
                received: None,
            },
            grpc,
        })
    }
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
            Err(_) => {
                return Err(Failure::new(
                    ErrorKind::FlowControl,
                    format!(
                        "the server's flow-control window stayed closed (no WINDOW_UPDATE): {} of {total} bytes of the request body could be sent before the timeout",
                        total - body.len()
                    ),
                ))
            }
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
