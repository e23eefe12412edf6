//! Why an exchange failed, in the terms the engine will count and retry by: each variant
//! names the `loadlab_metrics::ErrorKind` it maps to (as `http/h2/errors.rs` maps the `h2`
//! crate's errors today).

use super::frame::code;

/// The failure of one exchange, or of its whole connection.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum H2Error {
    /// The server reset the stream (RST_STREAM with this code). Engine: REFUSED_STREAM →
    /// `StreamRefused` (the server did not process it: retryable), FLOW_CONTROL_ERROR →
    /// `FlowControl`, PROTOCOL/COMPRESSION/FRAME_SIZE_ERROR → `Protocol`, others →
    /// `StreamReset`.
    #[error("the server reset the HTTP/2 stream: RST_STREAM {}", code_name(*.0))]
    Reset(u32),
    /// The server sent GOAWAY. `retryable`: the stream was above its last stream id or never
    /// sent, so the server did not process it (engine: a stale failure, retried on a new
    /// connection, not counted); otherwise the connection closed under an open stream after
    /// an error GOAWAY (engine: `GoAway`).
    #[error("the server closed the HTTP/2 connection: GOAWAY {}{}", code_name(*code),
        if *retryable { " (this stream was not processed)" } else { "" })]
    GoAway { code: u32, retryable: bool },
    /// The server broke RFC 9113 or HPACK (a connection or stream error we detected and
    /// answered with GOAWAY or RST_STREAM). Engine: `Protocol`.
    #[error("HTTP/2 protocol error: {0}")]
    Protocol(String),
    /// The server broke flow control (a window past 2^31-1, more DATA than our window).
    /// Engine: `FlowControl`.
    #[error("HTTP/2 flow-control error")]
    FlowControl,
    /// The socket failed. Engine: `classify_io` on the kind (`Reset`, `Timeout`, `Io`...).
    #[error("HTTP/2 connection: {1}")]
    Io(std::io::ErrorKind, String),
    /// The body grew past [`super::Keep::max_body`] (this many bytes); the stream was reset
    /// (CANCEL). Engine: `BodyTooLarge`.
    #[error("response body larger than {0} bytes")]
    BodyTooLarge(u64),
    /// The connection ended (EOF, or all handles dropped) with the stream open. Engine:
    /// `Reset` (the server closed the connection), a stale failure when nothing was sent.
    #[error("the HTTP/2 connection closed")]
    Closed,
}

impl H2Error {
    /// True when the server certainly did not process the request, so it may be sent again.
    pub fn is_retryable(&self) -> bool {
        match self {
            H2Error::Reset(c) => *c == code::REFUSED_STREAM,
            H2Error::GoAway { retryable, .. } => *retryable,
            _ => false,
        }
    }
}

/// The error code's name as RFC 9113 writes it.
pub fn code_name(c: u32) -> String {
    let known = match c {
        0x0 => "NO_ERROR",
        0x1 => "PROTOCOL_ERROR",
        0x2 => "INTERNAL_ERROR",
        0x3 => "FLOW_CONTROL_ERROR",
        0x4 => "SETTINGS_TIMEOUT",
        0x5 => "STREAM_CLOSED",
        0x6 => "FRAME_SIZE_ERROR",
        0x7 => "REFUSED_STREAM",
        0x8 => "CANCEL",
        0x9 => "COMPRESSION_ERROR",
        0xa => "CONNECT_ERROR",
        0xb => "ENHANCE_YOUR_CALM",
        0xc => "INADEQUATE_SECURITY",
        0xd => "HTTP_1_1_REQUIRED",
        other => return format!("error code {other:#x}"),
    };
    known.to_string()
}
