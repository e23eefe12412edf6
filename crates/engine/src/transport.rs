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

/// Opens connections to an origin and exchanges one request/response on them.
pub trait Transport: 'static {
    type Conn: 'static;

    fn connect(&self, origin: u16) -> impl Future<Output = Result<Self::Conn, Failure>>;

    fn send(
        &self,
        conn: &mut Self::Conn,
        req: &PreparedRequest,
    ) -> impl Future<Output = Result<Response, Failure>>;
}
