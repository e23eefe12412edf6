//! Why a request failed, as a closed set of kinds (never a free-form string).

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    Timeout,
    ConnectRefused,
    ConnectTimeout,
    Reset,
    AddrUnavailable,
    /// The generator ran out of file descriptors (EMFILE/ENFILE): its limit, not the target's.
    FdExhausted,
    Dns,
    Tls,
    Protocol,
    BodyTooLarge,
    CheckFailed,
    CaptureFailed,
    Http4xx,
    Http5xx,
    /// Any other I/O error; its text is logged once, the kind counted.
    Io,
    /// Sent, but the run stopped (a signal, or the end of the grace period) before its
    /// response came: counted, never hidden, and kept out of the latency histograms.
    Interrupted,
    /// The request rendered from templates was not valid HTTP (a variable put a line break
    /// or another control character into a header value), so it was not sent.
    InvalidRequest,
    /// The server reset the HTTP/2 stream (RST_STREAM: CANCEL, INTERNAL_ERROR...) before the
    /// response was complete.
    StreamReset,
    /// The server refused the HTTP/2 stream (RST_STREAM REFUSED_STREAM) without processing it.
    StreamRefused,
    /// HTTP/2 flow control failed: a FLOW_CONTROL_ERROR, or a window the server never opened.
    FlowControl,
    /// The server closed the HTTP/2 connection with GOAWAY and an error code while the
    /// request was open (a graceful GOAWAY drains and reconnects without errors).
    GoAway,
    /// The WebSocket upgrade failed: no `101 Switching Protocols` (another status, a bad
    /// `Sec-WebSocket-Accept`), or no answer within the timeout.
    WsHandshake,
    /// The WebSocket connection ended without a close frame (close code 1006).
    WsClosedAbnormally,
    /// The server broke RFC 6455: a malformed or oversized frame or message.
    WsProtocol,
    /// No message matched an `expect` within its `within`.
    WsExpectTimeout,
    /// The gRPC call ended with status `CANCELLED`.
    GrpcCancelled,
    /// The gRPC call ended with status `UNKNOWN`.
    GrpcUnknown,
    /// The gRPC call ended with status `INVALID_ARGUMENT`.
    GrpcInvalidArgument,
    /// The gRPC call ended with status `DEADLINE_EXCEEDED`.
    GrpcDeadlineExceeded,
    /// The gRPC call ended with status `NOT_FOUND`.
    GrpcNotFound,
    /// The gRPC call ended with status `ALREADY_EXISTS`.
    GrpcAlreadyExists,
    /// The gRPC call ended with status `PERMISSION_DENIED`.
    GrpcPermissionDenied,
    /// The gRPC call ended with status `RESOURCE_EXHAUSTED`.
    GrpcResourceExhausted,
    /// The gRPC call ended with status `FAILED_PRECONDITION`.
    GrpcFailedPrecondition,
    /// The gRPC call ended with status `ABORTED`.
    GrpcAborted,
    /// The gRPC call ended with status `OUT_OF_RANGE`.
    GrpcOutOfRange,
    /// The gRPC call ended with status `UNIMPLEMENTED`.
    GrpcUnimplemented,
    /// The gRPC call ended with status `INTERNAL`.
    GrpcInternal,
    /// The gRPC call ended with status `UNAVAILABLE`.
    GrpcUnavailable,
    /// The gRPC call ended with status `DATA_LOSS`.
    GrpcDataLoss,
    /// The gRPC call ended with status `UNAUTHENTICATED`.
    GrpcUnauthenticated,
    /// A streamed response (`stream:`) broke its format: an event above `max_event`, a line
    /// that never ends, bytes that are not UTF-8, an event that is not the JSON expected.
    StreamMalformed,
    /// A streamed response sent nothing for longer than its `stall` timeout.
    StreamStalled,
    /// A streamed response ended before its end marker (`done:`), or mid-event.
    StreamTruncated,
}

impl ErrorKind {
    pub const ALL: [ErrorKind; 44] = [
        ErrorKind::Timeout,
        ErrorKind::ConnectRefused,
        ErrorKind::ConnectTimeout,
        ErrorKind::Reset,
        ErrorKind::AddrUnavailable,
        ErrorKind::FdExhausted,
        ErrorKind::Dns,
        ErrorKind::Tls,
        ErrorKind::Protocol,
        ErrorKind::BodyTooLarge,
        ErrorKind::CheckFailed,
        ErrorKind::CaptureFailed,
        ErrorKind::Http4xx,
        ErrorKind::Http5xx,
        ErrorKind::Io,
        ErrorKind::Interrupted,
        ErrorKind::InvalidRequest,
        ErrorKind::StreamReset,
        ErrorKind::StreamRefused,
        ErrorKind::FlowControl,
        ErrorKind::GoAway,
        ErrorKind::WsHandshake,
        ErrorKind::WsClosedAbnormally,
        ErrorKind::WsProtocol,
        ErrorKind::WsExpectTimeout,
        ErrorKind::GrpcCancelled,
        ErrorKind::GrpcUnknown,
        ErrorKind::GrpcInvalidArgument,
        ErrorKind::GrpcDeadlineExceeded,
        ErrorKind::GrpcNotFound,
        ErrorKind::GrpcAlreadyExists,
        ErrorKind::GrpcPermissionDenied,
        ErrorKind::GrpcResourceExhausted,
        ErrorKind::GrpcFailedPrecondition,
        ErrorKind::GrpcAborted,
        ErrorKind::GrpcOutOfRange,
        ErrorKind::GrpcUnimplemented,
        ErrorKind::GrpcInternal,
        ErrorKind::GrpcUnavailable,
        ErrorKind::GrpcDataLoss,
        ErrorKind::GrpcUnauthenticated,
        ErrorKind::StreamMalformed,
        ErrorKind::StreamStalled,
        ErrorKind::StreamTruncated,
    ];

    /// Number of kinds (the length of per-kind counter arrays).
    pub const COUNT: usize = Self::ALL.len();

    pub fn index(self) -> usize {
        self as usize
    }

    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Timeout => "timeout",
            ErrorKind::ConnectRefused => "connect_refused",
            ErrorKind::ConnectTimeout => "connect_timeout",
            ErrorKind::Reset => "reset",
            ErrorKind::AddrUnavailable => "addr_unavailable",
            ErrorKind::FdExhausted => "fd_exhausted",
            ErrorKind::Dns => "dns",
            ErrorKind::Tls => "tls",
            ErrorKind::Protocol => "protocol",
            ErrorKind::BodyTooLarge => "body_too_large",
            ErrorKind::CheckFailed => "check_failed",
            ErrorKind::CaptureFailed => "capture_failed",
            ErrorKind::Http4xx => "http_4xx",
            ErrorKind::Http5xx => "http_5xx",
            ErrorKind::Io => "io",
            ErrorKind::Interrupted => "interrupted",
            ErrorKind::InvalidRequest => "invalid_request",
            ErrorKind::StreamReset => "stream_reset",
            ErrorKind::StreamRefused => "stream_refused",
            ErrorKind::FlowControl => "flow_control",
            ErrorKind::GoAway => "goaway",
            ErrorKind::WsHandshake => "ws_handshake",
            ErrorKind::WsClosedAbnormally => "ws_closed_abnormally",
            ErrorKind::WsProtocol => "ws_protocol",
            ErrorKind::WsExpectTimeout => "ws_expect_timeout",
            ErrorKind::GrpcCancelled => "grpc_cancelled",
            ErrorKind::GrpcUnknown => "grpc_unknown",
            ErrorKind::GrpcInvalidArgument => "grpc_invalid_argument",
            ErrorKind::GrpcDeadlineExceeded => "grpc_deadline_exceeded",
            ErrorKind::GrpcNotFound => "grpc_not_found",
            ErrorKind::GrpcAlreadyExists => "grpc_already_exists",
            ErrorKind::GrpcPermissionDenied => "grpc_permission_denied",
            ErrorKind::GrpcResourceExhausted => "grpc_resource_exhausted",
            ErrorKind::GrpcFailedPrecondition => "grpc_failed_precondition",
            ErrorKind::GrpcAborted => "grpc_aborted",
            ErrorKind::GrpcOutOfRange => "grpc_out_of_range",
            ErrorKind::GrpcUnimplemented => "grpc_unimplemented",
            ErrorKind::GrpcInternal => "grpc_internal",
            ErrorKind::GrpcUnavailable => "grpc_unavailable",
            ErrorKind::GrpcDataLoss => "grpc_data_loss",
            ErrorKind::GrpcUnauthenticated => "grpc_unauthenticated",
            ErrorKind::StreamMalformed => "stream_malformed",
            ErrorKind::StreamStalled => "stream_stalled",
            ErrorKind::StreamTruncated => "stream_truncated",
        }
    }

    /// What the user can do about it, shown beside the count in summaries and reports.
    pub fn hint(self) -> &'static str {
        match self {
            ErrorKind::Timeout => "no complete response within the timeout: the target is overloaded or stalled (raise `defaults.timeout` only if such waits are acceptable)",
            ErrorKind::ConnectRefused => "nothing listens at the target address, or its accept queue overflowed: check the URL and that the service is up",
            ErrorKind::ConnectTimeout => "TCP connect did not complete: the target's accept backlog is full or a firewall drops packets",
            ErrorKind::Reset => "the target closed the connection mid-request (crash, restart, or a keep-alive limit on its side)",
            ErrorKind::AddrUnavailable => "local ephemeral ports are exhausted (EADDRNOTAVAIL, `can't assign requested address`): keep connections alive (`connections: per_vu` or `shared`), or spread them over more source addresses (`source_addresses: 127.0.0.1-127.0.0.16`)",
            ErrorKind::FdExhausted => "the generator ran out of file descriptors (EMFILE, `too many open files`): its own limit, not a target error — raise it (`ulimit -n`, LimitNOFILE) or lower the concurrency",
            ErrorKind::Dns => "the target host name did not resolve",
            ErrorKind::Tls => "TLS handshake failed: wrong certificate or protocol (use --insecure only for test certificates)",
            ErrorKind::Protocol => "the response was not valid HTTP/1.1 or HTTP/2 (a PROTOCOL_ERROR, a malformed frame or header block); with `http.version: \"2\"` on a plain-text URL, check that the server speaks h2c with prior knowledge",
            ErrorKind::BodyTooLarge => "the response body exceeded `defaults.max_body`",
            ErrorKind::CheckFailed => "a response check failed",
            ErrorKind::CaptureFailed => "a capture found nothing in the response, so the rest of the iteration was skipped",
            ErrorKind::Http4xx => "the target answered 4xx: the request is wrong (path, auth, payload) rather than slow",
            ErrorKind::Http5xx => "the target answered 5xx: it failed or shed load",
            ErrorKind::Io => "another I/O error while talking to the target",
            ErrorKind::Interrupted => "the run was stopped while these requests were in flight: they were sent but their responses never came (not in any latency figure)",
            ErrorKind::InvalidRequest => "a template variable (a captured value or data cell) put a line break or another control character into a header value, so the request was not sent: check what the capture or data set holds",
            ErrorKind::StreamReset => "the server reset the HTTP/2 stream (RST_STREAM) before the response was complete: it cancelled the request or failed while serving it (see the example for the error code)",
            ErrorKind::StreamRefused => "the server refused the HTTP/2 stream (REFUSED_STREAM) without processing it: it is shedding load, or more streams were opened than it allows; lower `http.max_streams`, or check the server's concurrent-stream limit",
            ErrorKind::FlowControl => "HTTP/2 flow control failed: the server never opened its flow-control window (no WINDOW_UPDATE), so the request body could not be sent, or a FLOW_CONTROL_ERROR broke the connection",
            ErrorKind::GoAway => "the server closed the HTTP/2 connection (GOAWAY with an error code such as ENHANCE_YOUR_CALM or INTERNAL_ERROR) while requests were open; a graceful GOAWAY drains and reconnects without errors",
            ErrorKind::WsHandshake => "the WebSocket upgrade failed: the server answered without `101 Switching Protocols` (wrong path, auth, or no WebSocket there), or not within the step's timeout (`ws.timeout`)",
            ErrorKind::WsClosedAbnormally => "the WebSocket connection ended without a close frame (code 1006): the server or a proxy dropped it (crash, idle timeout, restart)",
            ErrorKind::WsProtocol => "the server broke the WebSocket protocol: a malformed frame, or a message above `ws.max_message` (raise it if such messages are expected)",
            ErrorKind::WsExpectTimeout => "no message matched an `expect` within its `within`: the server was slow to answer, or answered something else (see the example)",
            ErrorKind::GrpcCancelled => "the call was cancelled (by the server, or a proxy between)",
            ErrorKind::GrpcUnknown => "the server failed with an error it did not classify (an unhandled exception in a handler, or a status above 16)",
            ErrorKind::GrpcInvalidArgument => "the server refused the request message: check the step's `message` against the service's rules",
            ErrorKind::GrpcDeadlineExceeded => "the call's deadline (the step's `timeout`, sent as `grpc-timeout`) passed before the server answered: the server is slower than the timeout",
            ErrorKind::GrpcNotFound => "the server found no such entity: a captured id that is wrong, or data the test expects but the server lacks",
            ErrorKind::GrpcAlreadyExists => "the entity the call creates already exists: use unique data (a `unique` data set, or `{{ uuid }}`)",
            ErrorKind::GrpcPermissionDenied => "the caller may not do this: check the credentials sent in `metadata`",
            ErrorKind::GrpcResourceExhausted => "the server ran out of a resource or applied a quota or rate limit: lower the load, or raise the limit",
            ErrorKind::GrpcFailedPrecondition => "the system was not in the state the call needs (an earlier step did not happen, or happened differently)",
            ErrorKind::GrpcAborted => "the server aborted the call (a concurrency conflict, a transaction abort): retried calls usually succeed",
            ErrorKind::GrpcOutOfRange => "a value in the request is past the valid range",
            ErrorKind::GrpcUnimplemented => "the server does not implement this method: check `call` (package.Service/Method) against the server's services",
            ErrorKind::GrpcInternal => "the server broke an invariant (an internal error): see its logs",
            ErrorKind::GrpcUnavailable => "the service is unavailable (overloaded, shutting down, or a proxy found no backend): usually transient",
            ErrorKind::GrpcDataLoss => "the server reports unrecoverable data loss or corruption",
            ErrorKind::GrpcUnauthenticated => "the call carried no valid credentials: set them in `metadata` (e.g. `authorization: Bearer ...`)",
            ErrorKind::StreamMalformed => "the streamed response broke its format (an event above `stream.max_event`, a line that never ends, bytes that are not UTF-8, an event that is not JSON): check `stream.format` and `stream.tokens` against what the server sends",
            ErrorKind::StreamStalled => "the stream sent nothing for longer than `stream.stall`: the server stopped generating (overloaded, a stuck batch) without closing the response",
            ErrorKind::StreamTruncated => "the stream ended before its end marker (`stream.done`) or in the middle of an event: the server or a proxy cut it off",
        }
    }

    /// The kind of a gRPC call that ended with `code` (none for `OK`).
    pub fn from_grpc(code: crate::GrpcCode) -> Option<ErrorKind> {
        use crate::GrpcCode as C;
        Some(match code {
            C::Ok => return None,
            C::Cancelled => ErrorKind::GrpcCancelled,
            C::Unknown => ErrorKind::GrpcUnknown,
            C::InvalidArgument => ErrorKind::GrpcInvalidArgument,
            C::DeadlineExceeded => ErrorKind::GrpcDeadlineExceeded,
            C::NotFound => ErrorKind::GrpcNotFound,
            C::AlreadyExists => ErrorKind::GrpcAlreadyExists,
            C::PermissionDenied => ErrorKind::GrpcPermissionDenied,
            C::ResourceExhausted => ErrorKind::GrpcResourceExhausted,
            C::FailedPrecondition => ErrorKind::GrpcFailedPrecondition,
            C::Aborted => ErrorKind::GrpcAborted,
            C::OutOfRange => ErrorKind::GrpcOutOfRange,
            C::Unimplemented => ErrorKind::GrpcUnimplemented,
            C::Internal => ErrorKind::GrpcInternal,
            C::Unavailable => ErrorKind::GrpcUnavailable,
            C::DataLoss => ErrorKind::GrpcDataLoss,
            C::Unauthenticated => ErrorKind::GrpcUnauthenticated,
        })
    }

    pub fn from_status(status: u16) -> Option<ErrorKind> {
        match status {
            400..=499 => Some(ErrorKind::Http4xx),
            500..=599 => Some(ErrorKind::Http5xx),
            _ => None,
        }
    }
}

impl std::fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for ErrorKind {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ErrorKind::ALL
            .into_iter()
            .find(|k| k.as_str() == s)
            .ok_or_else(|| format!("unknown error kind `{s}`"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_is_listed_in_order_and_round_trips() {
        for (i, k) in ErrorKind::ALL.iter().enumerate() {
            assert_eq!(k.index(), i, "{k}");
            assert_eq!(k.as_str().parse::<ErrorKind>(), Ok(*k));
            assert!(!k.hint().is_empty());
        }
    }
}

/// A counter per error kind (index `ErrorKind::index`). A type of its own because arrays this
/// long have no `Default`; it derefs to the array.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ErrorCounts(pub [u64; ErrorKind::COUNT]);

impl Default for ErrorCounts {
    fn default() -> Self {
        ErrorCounts([0; ErrorKind::COUNT])
    }
}

impl std::ops::Deref for ErrorCounts {
    type Target = [u64; ErrorKind::COUNT];

    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl std::ops::DerefMut for ErrorCounts {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.0
    }
}
