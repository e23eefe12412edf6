//! What happened to one request, as the recorder needs it (durations already computed).

use crate::ErrorKind;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Outcome {
    /// Index of the request step in the scenario (see `StepInfo`).
    pub step: u16,
    /// done − intended (open model) or done − sent (closed model), in µs.
    pub latency_us: u64,
    /// done − sent, in µs.
    pub service_us: u64,
    /// sent − intended, in µs; `None` in the closed model, where there is no intended time.
    pub lag_us: Option<u64>,
    /// What the server reported spending on the request (`Server-Timing`), in µs.
    pub server_us: Option<u64>,
    /// HTTP status, or 0 when no response arrived.
    pub status: u16,
    pub error: Option<ErrorKind>,
    pub bytes_sent: u64,
    pub bytes_received: u64,
    /// The W3C trace id sent with it (`defaults.trace: true`).
    pub trace_id: Option<u128>,
    /// Where its service time went (k6's `http_req_connecting`, `…_tls_handshaking`,
    /// `…_waiting`, `…_receiving`), as far as the transport measured it.
    pub phases: Phases,
}

/// The phases of one request, in µs; `None` where the phase did not happen or was not
/// measured (a fake transport, a request that failed before its response).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Phases {
    /// TCP connect, when a connection was opened for this request.
    pub connect_us: Option<u64>,
    /// TLS handshake, when a TLS connection was opened for this request.
    pub tls_us: Option<u64>,
    /// Time to first byte: from the request written (HTTP/1.1) or handed to its HTTP/2
    /// stream (body included) to the first response byte (HTTP/1.1) or the response head
    /// (HTTP/2).
    pub waiting_us: Option<u64>,
    /// From the first response byte (or head) to the complete response.
    pub receiving_us: Option<u64>,
}
