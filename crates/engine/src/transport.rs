//! The seam between executors and the network: a rendered request goes in, status, header
//! fields and (when asked) the body come out. Real HTTP/1.1 and HTTP/2 in production, fakes in
//! tests.

use crate::request::RenderedRequest;
use loadlab_metrics::{ErrorKind, Protocol};
use std::borrow::Cow;
use std::future::Future;
use tokio::time::Instant;

/// What came back, as much as the executors need.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Response {
    pub status: u16,
    /// The connection cannot carry another request (the server asked to close it, it is
    /// HTTP/1.0 without keep-alive, or an HTTP/2 connection is going away).
    pub close: bool,
    /// What the server said it spent on the request (`Server-Timing` or the configured
    /// header), in µs.
    pub server_us: Option<u64>,
    /// Bytes of the response as read from the connection (HTTP/1.1), or what the connection
    /// received since the previous exchange on it took its share (HTTP/2: frames and
    /// compressed header blocks). 0 when the transport does not count them.
    pub bytes_received: u64,
    /// Bytes of the request as written (HTTP/1.1), or what the connection sent since the
    /// previous exchange on it took its share (HTTP/2); `None`: not counted (the caller
    /// estimates).
    pub bytes_sent: Option<u64>,
    /// When its phases happened, as far as the transport measured them.
    pub timing: ResponseTiming,
    /// A gRPC call's status and messages (`None` for any other request).
    pub grpc: Option<crate::grpc_reply::GrpcReply>,
}

/// The instants of a request's phases (k6's connecting, TLS handshaking, waiting,
/// receiving); receiving ends when the caller sees the response complete.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ResponseTiming {
    /// The connection was opened for this request.
    pub opened: Option<ConnectTiming>,
    /// The request was written (HTTP/1.1), or handed to its HTTP/2 stream, body included.
    pub written: Option<Instant>,
    /// The first byte of the response arrived (HTTP/1.1), or its head (HTTP/2).
    pub first_byte: Option<Instant>,
    /// The response's last bytes reached the host, when the transport knows it from the kernel
    /// (a deferred read); `None`: the response is complete when the caller sees it.
    pub received: Option<Instant>,
}

/// How long opening a connection took, measured once per connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ConnectTiming {
    /// TCP connect, in µs.
    pub connect_us: u64,
    /// TLS handshake, in µs (`None`: plain TCP).
    pub tls_us: Option<u64>,
}

/// A failed exchange: its kind, a message for the user, and whether the connection is still usable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub kind: ErrorKind,
    pub message: String,
    /// The server never processed the request (an idle keep-alive connection it had closed,
    /// a stream above an HTTP/2 GOAWAY's last stream): safe to retry once on a new connection.
    pub stale: bool,
    /// What the connection moved for it, when the transport counts it (HTTP/2).
    pub wire: Option<WireBytes>,
}

/// Bytes a connection really moved for an exchange (see `http/h2/counted.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct WireBytes {
    pub sent: u64,
    pub received: u64,
}

impl Failure {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
            stale: false,
            wire: None,
        }
    }
}

/// The parts of a response a step's captures and checks read, copied only when they need
/// them: header fields in one buffer (any version), and the body.
#[derive(Debug, Default, Clone)]
pub struct ResponseData {
    pub keep_headers: bool,
    pub keep_body: bool,
    fields: Vec<u8>,
    /// (name start, name end, value end) into `fields`; values start where names end.
    spans: Vec<(u32, u32, u32)>,
    /// The body (de-chunked), when `keep_body` was asked; bounded by `max_body`.
    pub body: Vec<u8>,
    /// A gRPC call's `grpc-message` (why it failed), when it sent one.
    pub grpc_message: String,
    /// A streamed response (`stream:`): its events are read out of `body` as they arrive,
    /// so `body` holds at most one incomplete event.
    pub stream: Option<Box<crate::stream::StreamReader>>,
}

impl ResponseData {
    /// Asks for the header fields, the body, or both.
    pub fn new(keep_headers: bool, keep_body: bool) -> Self {
        Self {
            keep_headers,
            keep_body,
            ..Self::default()
        }
    }

    pub fn clear(&mut self) {
        self.fields.clear();
        self.spans.clear();
        self.body.clear();
        self.grpc_message.clear();
        if let Some(s) = &mut self.stream {
            s.reset();
        }
    }

    /// The response's status is known: only a successful (2xx) response is read as a
    /// stream; any other's body is an error document, kept as a body.
    pub fn status_known(&mut self, status: u16) {
        if !(200..300).contains(&status) {
            self.stream = None;
        }
    }

    /// Body bytes were appended at `at`: a stream reads its complete events out of them.
    pub fn body_arrived(&mut self, at: Instant) -> Result<(), Failure> {
        match &mut self.stream {
            Some(s) => s.feed(&mut self.body, at).map_err(stream_failure),
            None => Ok(()),
        }
    }

    /// The body is complete: a stream reads its last event and checks its end.
    pub fn body_ended(&mut self, at: Instant) -> Result<(), Failure> {
        match &mut self.stream {
            Some(s) => s.finish(&mut self.body, at).map_err(stream_failure),
            None => Ok(()),
        }
    }

    /// When a stream being read is stalled if no byte arrives before (`stream.stall`).
    pub fn stall_deadline(&self) -> Option<Instant> {
        self.stream.as_ref().and_then(|s| s.stall_deadline())
    }

    /// The failure of a stream that waited past its stall deadline.
    pub fn stalled(&self) -> Failure {
        let waited = self
            .stream
            .as_ref()
            .map(|s| s.stall_timeout())
            .unwrap_or_default();
        stream_failure(crate::stream::StreamError::Stalled(waited))
    }

    /// The failure of a stream whose connection closed before the body was complete.
    pub fn cut_off(&self) -> Option<Failure> {
        let s = self.stream.as_ref()?;
        Some(stream_failure(crate::stream::StreamError::Truncated(
            format!(
                "the connection closed after {} events, before the response was complete",
                s.events
            ),
        )))
    }

    /// Keeps a header field (the transport calls this only when `keep_headers` is set).
    pub fn add_header(&mut self, name: &[u8], value: &[u8]) {
        let start = self.fields.len() as u32;
        self.fields.extend_from_slice(name);
        let name_end = self.fields.len() as u32;
        self.fields.extend_from_slice(value.trim_ascii());
        self.spans.push((start, name_end, self.fields.len() as u32));
    }

    /// Header fields as received (HTTP/2 names are lower case), values trimmed.
    pub fn headers(&self) -> impl Iterator<Item = (&[u8], &[u8])> {
        self.spans.iter().map(|&(s, n, e)| {
            (
                &self.fields[s as usize..n as usize],
                &self.fields[n as usize..e as usize],
            )
        })
    }

    /// Bytes the kept header fields take.
    pub fn header_bytes(&self) -> usize {
        self.fields.len()
    }

    /// The value of the first header field named `name` (case-insensitive), trimmed; no copy.
    pub fn header_value(&self, name: &str) -> Option<&[u8]> {
        self.headers()
            .find(|(n, _)| n.eq_ignore_ascii_case(name.as_bytes()))
            .map(|(_, v)| v)
    }

    /// [`ResponseData::header_value`] as text (borrowed unless it is not UTF-8).
    pub fn header(&self, name: &str) -> Option<Cow<'_, str>> {
        self.header_value(name).map(String::from_utf8_lossy)
    }
}

/// A byte stream that a protocol of its own runs over (a WebSocket session).
pub trait ByteStream: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin {}

impl<S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin> ByteStream for S {}

/// Opens connections to an origin and exchanges requests and responses on them.
pub trait Transport: 'static {
    type Conn: 'static;

    fn connect(&self, origin: u16) -> impl Future<Output = Result<Self::Conn, Failure>>;

    /// How long the TCP connect of a connection `connect` just returned took (without TLS or
    /// protocol handshakes), if the transport measured it; the caller times `connect` itself
    /// otherwise.
    fn connect_time(&self, _conn: &Self::Conn) -> Option<std::time::Duration> {
        None
    }

    /// Sends `req` on `conn`; copies header fields and body into `keep` when it is given and
    /// asks for them.
    fn send(
        &self,
        conn: &mut Self::Conn,
        req: &RenderedRequest<'_>,
        keep: Option<&mut ResponseData>,
    ) -> impl Future<Output = Result<Response, Failure>>;

    /// True when requests to `origin` share the transport's multiplexed connections
    /// (`http.connections`) instead of a VU's own: they take a stream slot with
    /// [`Transport::lease`].
    fn shared(&self, _origin: u16) -> bool {
        false
    }

    /// Waits for a free stream slot on one of `origin`'s shared connections and lends it
    /// (dropping the returned connection gives the slot back; one not open yet is opened by
    /// `send`). True when it had to wait: every slot was taken.
    fn lease(&self, _origin: u16) -> impl Future<Output = (Self::Conn, bool)> {
        async { unreachable!("only shared origins are leased") }
    }

    /// Connections opened since the last call, by origin and the protocol they spoke.
    fn take_opened(&self) -> Vec<(u16, Protocol, u64)> {
        Vec::new()
    }

    /// Opens a connection of its own to `origin` for a session that is not request/response
    /// (WebSocket): TCP, then TLS (ALPN `http/1.1`) when the origin asks for it, and how long
    /// each took.
    fn open_stream(
        &self,
        _origin: u16,
    ) -> impl Future<Output = Result<(Box<dyn ByteStream>, ConnectTiming), Failure>> {
        async {
            Err(Failure::new(
                ErrorKind::Protocol,
                "this transport opens no byte streams",
            ))
        }
    }
}

/// The failure a stream error is counted as.
fn stream_failure(e: crate::stream::StreamError) -> Failure {
    Failure::new(e.kind(), e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_fields_are_found_without_copying() {
        let mut d = ResponseData::default();
        d.add_header(b"Content-Type", b" text/plain ");
        d.add_header(b"server-timing", b"app;dur=1.5");
        d.add_header(b"X-Bin", b"\xff");
        assert_eq!(d.header("content-type").as_deref(), Some("text/plain"));
        assert!(matches!(
            d.header("Server-Timing"),
            Some(Cow::Borrowed("app;dur=1.5"))
        ));
        assert_eq!(d.header_value("x-bin"), Some(&b"\xff"[..]));
        assert_eq!(d.header("missing"), None);
        assert_eq!(d.headers().count(), 3);
        d.clear();
        assert_eq!(d.headers().count(), 0);
    }
}
