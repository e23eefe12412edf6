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
}

impl ErrorKind {
    pub const ALL: [ErrorKind; 25] = [
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
        }
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
