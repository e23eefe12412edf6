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
}
