//! The seam between executors and the network: real HTTP in production, a fake in tests.

use crate::prepare::PreparedRequest;
use loadlab_metrics::ErrorKind;
use std::future::Future;

/// What came back, as much as the executors need.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Response {
    pub status: u16,
    /// The server asked to close the connection (or it is HTTP/1.0 without keep-alive).
    pub close: bool,
    /// What the server said it spent on the request (`Server-Timing` or the configured
    /// header), in µs.
    pub server_us: Option<u64>,
}

/// A failed exchange: its kind, a message for the user, and whether the connection is still usable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub kind: ErrorKind,
    pub message: String,
    /// No byte of a response arrived on a reused connection: safe to retry once on a new one.
    pub stale: bool,
}

impl Failure {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
            stale: false,
        }
    }
}

/// The parts of a response a step's captures and checks read, copied only when they need them.
#[derive(Debug, Default, Clone)]
pub struct ResponseData {
    /// The whole response head (status line and headers), when `keep_head` was asked.
    pub head: Vec<u8>,
    /// The body (de-chunked), when `keep_body` was asked; bounded by `max_body`.
    pub body: Vec<u8>,
    pub keep_head: bool,
    pub keep_body: bool,
}

impl ResponseData {
    pub fn clear(&mut self) {
        self.head.clear();
        self.body.clear();
    }

    /// The value of the first header named `name` (case-insensitive), trimmed.
    pub fn header(&self, name: &str) -> Option<String> {
        crate::http::parse_head(&self.head, |resp, _| {
            resp.headers
                .iter()
                .find(|h| h.name.eq_ignore_ascii_case(name))
                .map(|h| String::from_utf8_lossy(h.value).trim().to_string())
        })
        .ok()??
    }
}

/// Opens connections to an origin and exchanges one request/response on them.
pub trait Transport: 'static {
    type Conn: 'static;

    fn connect(&self, origin: u16) -> impl Future<Output = Result<Self::Conn, Failure>>;

    /// Sends `bytes` (the request, pre-built or rendered for this VU); copies the head and
    /// body into `keep` when it is given and asks for them.
    fn send(
        &self,
        conn: &mut Self::Conn,
        req: &PreparedRequest,
        bytes: &[u8],
        keep: Option<&mut ResponseData>,
    ) -> impl Future<Output = Result<Response, Failure>>;
}
