//! gRPC on the target's own port, without tonic: `permits.v1.Permits` (`Create`, `Get`,
//! `Watch`; examples/proto/permits.proto) and server reflection (v1 and v1alpha), so the
//! gRPC steps of loadlab have a service to load with no setup. A request is gRPC when its
//! `content-type` starts with `application/grpc`; hyper-util's auto server already speaks
//! h2c (prior knowledge) and h2 over TLS (ALPN).
//!
//! Messages are hand-declared `prost::Message` structs in the 5-byte length-prefixed
//! framing (`wire`); the status travels in the `grpc-status`/`grpc-message` trailers, or in
//! the headers of a trailers-only answer when the call fails before any message. `Create`
//! and `Get` go through the capacity model like `/api/*`; `Watch` and reflection hold no
//! worker (like the WebSocket endpoints). `grpc-timeout` is honoured: a call still working
//! at its deadline ends `DEADLINE_EXCEEDED`.

mod counters;
mod messages;
mod permits;
mod reflection;
mod reflection_messages;
mod wire;

#[cfg(test)]
pub(crate) use messages::{CreateRequest, GetRequest, Permit, PermitEvent, WatchRequest};
#[cfg(test)]
pub(crate) use reflection_messages::{
    MessageRequest, MessageResponse, ServerReflectionRequest, ServerReflectionResponse,
};
#[cfg(test)]
pub(crate) use wire::{decode_all, split_messages};

use std::convert::Infallible;
use std::sync::Arc;

use bytes::Bytes;
use futures_util::stream::{self, BoxStream, StreamExt};
use http_body_util::{BodyExt, Either, Full, LengthLimitError, Limited, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::header::{HeaderMap, HeaderName, HeaderValue, CONTENT_TYPE};
use hyper::{Request, Response};
use tokio::time::Instant;

pub use counters::GrpcCounters;
use counters::Method;
use wire::{Code, Status};

use crate::capacity::Capacity;
use crate::error::TargetError;
use crate::metrics::TargetMetrics;

/// What a gRPC call uses of the server it runs in: the service's own state, and the capacity
/// model and counts every request shares (the HTTP handlers pass them; this module does not
/// know the rest of the server's state).
#[derive(Clone, Copy)]
pub struct Served<'a> {
    pub grpc: &'a GrpcState,
    pub capacity: &'a Capacity,
    pub metrics: &'a TargetMetrics,
}

pub use crate::response::Body;

const GRPC: HeaderValue = HeaderValue::from_static("application/grpc");
const GRPC_STATUS: HeaderName = HeaderName::from_static("grpc-status");
const GRPC_MESSAGE: HeaderName = HeaderName::from_static("grpc-message");

/// What the gRPC service keeps between calls.
#[derive(Debug)]
pub struct GrpcState {
    pub counters: Arc<GrpcCounters>,
    reflection: Arc<reflection::Descriptor>,
    next_id: std::sync::atomic::AtomicU64,
}

impl GrpcState {
    /// Compiles the embedded permits.proto for reflection (a failure is a bug of the build).
    pub fn new() -> Result<Self, TargetError> {
        Ok(GrpcState {
            counters: Arc::default(),
            reflection: Arc::new(reflection::Descriptor::compile()?),
            next_id: std::sync::atomic::AtomicU64::new(1),
        })
    }
}

/// Whether a request is a gRPC call (`content-type: application/grpc`, `+proto` or other).
pub fn is_grpc<B>(req: &Request<B>) -> bool {
    req.headers()
        .get(CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"application/grpc"))
}

/// Serves one gRPC call.
pub async fn handle(state: Served<'_>, req: Request<Incoming>) -> Response<Body> {
    let method = Method::of(req.uri().path());
    // The call's deadline and a watch's events both count from here.
    let received = Instant::now();
    let deadline = req
        .headers()
        .get("grpc-timeout")
        .and_then(|v| wire::parse_timeout(v.as_bytes()))
        .map(|d| received + d);
    // Counted once however the call ends, also when the client resets it mid-way.
    let mut end = CallEnd::new(state.grpc.counters.clone(), method, deadline);
    match method {
        Method::Other => {
            let status = Status::new(
                Code::Unimplemented,
                format!(
                    "no method {}: the target serves /permits.v1.Permits/Create, Get, Watch and \
                     server reflection",
                    req.uri().path()
                ),
            );
            trailers_only(&mut end, &status)
        }
        Method::ReflectionV1 | Method::ReflectionV1Alpha => {
            reflection::serve(end, state.grpc.reflection.clone(), req.into_body())
        }
        Method::Create | Method::Get | Method::Watch => {
            let work = permits::call(state, method, req.into_body());
            let answer = match deadline {
                Some(at) => tokio::time::timeout_at(at, work).await.unwrap_or_else(|_| {
                    Err(Status::new(
                        Code::DeadlineExceeded,
                        "the call's grpc-timeout passed before the answer was ready",
                    ))
                }),
                None => work.await,
            };
            match answer {
                Ok(permits::Answer::One(message)) => {
                    let frames = [end.send(message), end.finish(&Status::ok())];
                    streaming(stream::iter(frames.map(Ok)).boxed())
                }
                Ok(permits::Answer::Watch(watch)) => {
                    streaming(permits::watch_stream(end, watch, received, deadline))
                }
                Err(status) => trailers_only(&mut end, &status),
            }
        }
    }
}

/// Reads the one request message of a unary or server-streaming call.
async fn read_one(
    counters: &GrpcCounters,
    method: Method,
    body: Incoming,
) -> Result<Bytes, Status> {
    let body = match Limited::new(body, wire::MAX_MESSAGE + 5).collect().await {
        Ok(body) => body.to_bytes(),
        Err(e) if e.downcast_ref::<LengthLimitError>().is_some() => {
            let message = "the request is larger than the 1 MiB message the target accepts";
            return Err(Status::new(Code::ResourceExhausted, message));
        }
        Err(e) => {
            let message = format!("cannot read the request: {e}");
            return Err(Status::new(Code::Internal, message));
        }
    };
    let messages = wire::decode_all(&body)?;
    counters.received(method, messages.len());
    match <[Bytes; 1]>::try_from(messages) {
        Ok([one]) => Ok(one),
        Err(messages) => Err(Status::new(
            Code::Internal,
            format!("expected one request message, got {}", messages.len()),
        )),
    }
}

/// The trailers carrying a call's end.
fn trailers(status: &Status) -> HeaderMap {
    let mut map = HeaderMap::with_capacity(2);
    put_status(&mut map, status);
    map
}

fn put_status(map: &mut HeaderMap, status: &Status) {
    map.insert(GRPC_STATUS, HeaderValue::from(status.code.as_u8() as u16));
    if !status.message.is_empty() {
        if let Ok(v) = HeaderValue::from_str(&wire::percent_encode(&status.message)) {
            map.insert(GRPC_MESSAGE, v);
        }
    }
}

/// 200 with the gRPC content type and a body of messages and trailers.
fn streaming(frames: BoxStream<'static, Result<Frame<Bytes>, Infallible>>) -> Response<Body> {
    let mut resp = Response::new(Either::Right(StreamBody::new(frames)));
    resp.headers_mut().insert(CONTENT_TYPE, GRPC);
    resp
}

/// A call that fails before any message: the status in the headers, no body.
fn trailers_only(end: &mut CallEnd, status: &Status) -> Response<Body> {
    end.ended = true;
    end.counters.call(end.method, status.code);
    let mut resp = Response::new(Either::Left(Full::new(Bytes::new())));
    resp.headers_mut().insert(CONTENT_TYPE, GRPC);
    put_status(resp.headers_mut(), status);
    resp
}

/// Counts a call's end once: with the status it finished with, or, when it is dropped before
/// (the client reset the stream or went away), DEADLINE_EXCEEDED if its deadline has passed
/// (the client's timer fired first) and CANCELLED otherwise.
struct CallEnd {
    counters: Arc<GrpcCounters>,
    method: Method,
    deadline: Option<Instant>,
    ended: bool,
}

impl CallEnd {
    fn new(counters: Arc<GrpcCounters>, method: Method, deadline: Option<Instant>) -> Self {
        CallEnd {
            counters,
            method,
            deadline,
            ended: false,
        }
    }

    /// The trailers frame for `status`, counted.
    fn finish(&mut self, status: &Status) -> Frame<Bytes> {
        if !self.ended {
            self.ended = true;
            self.counters.call(self.method, status.code);
        }
        Frame::trailers(trailers(status))
    }

    /// A message frame, counted as sent.
    fn send(&self, message: Bytes) -> Frame<Bytes> {
        self.counters.sent(self.method, 1);
        Frame::data(message)
    }
}

impl Drop for CallEnd {
    fn drop(&mut self) {
        if !self.ended {
            let code = match self.deadline {
                Some(at) if Instant::now() >= at => Code::DeadlineExceeded,
                _ => Code::Cancelled,
            };
            self.counters.call(self.method, code);
        }
    }
}
