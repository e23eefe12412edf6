//! A scope's HDR histograms as `run.json` carries them: base64 of HdrHistogram's compressed
//! V2 encoding, which HdrHistogram's own tools read, so that percentiles can be recomputed
//! and merged exactly after the run.

use crate::histogram::LatencyHistogram;
use serde::{Deserialize, Serialize};

/// Base64 HdrHistogram V2 (deflate) encodings of a scope's histograms (empty: no data).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct Histograms {
    #[serde(default)]
    pub latency: String,
    /// Closed model: the latency compensated for coordinated omission (`compensation`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub latency_compensated: String,
    #[serde(default)]
    pub service_time: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub lag: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub server_latency: String,
    /// The phases of requests (runs and steps only).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub connect: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub tls_handshake: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub waiting: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub receiving: String,
    /// Iteration durations (the run only).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub iteration_duration: String,
    /// WebSocket session durations (WebSocket steps only).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub session: String,
    /// gRPC server streams: call start to first message (gRPC steps only).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub first_message: String,
    /// Streamed responses (steps with `stream:`, and the run over them): time to first
    /// token, every inter-token gap, time per output token, end to end, events per stream
    /// (a count, not µs).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub ttft: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub itl: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub tpot: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub stream_e2e: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub stream_events: String,
}

impl Histograms {
    /// A stream time series' encoded histogram (empty when nothing streamed).
    pub fn stream(&self, t: crate::StreamTime) -> &str {
        match t {
            crate::StreamTime::Ttft => &self.ttft,
            crate::StreamTime::Itl => &self.itl,
            crate::StreamTime::Tpot => &self.tpot,
            crate::StreamTime::E2e => &self.stream_e2e,
        }
    }

    /// A phase's histogram (empty for groups and for records written before phases).
    pub fn phase(&self, phase: crate::Phase) -> &str {
        match phase {
            crate::Phase::Connect => &self.connect,
            crate::Phase::TlsHandshake => &self.tls_handshake,
            crate::Phase::Waiting => &self.waiting,
            crate::Phase::Receiving => &self.receiving,
        }
    }
}

/// Base64 of the compressed V2 encoding (what HdrHistogram logs and tools read). Code that
/// encodes many histograms keeps a [`HistogramEncoder`](super::HistogramEncoder) instead.
pub fn encode_histogram(h: &LatencyHistogram) -> String {
    super::HistogramEncoder::new().encode(h)
}

/// Empty for an empty histogram (a scope with no data), else [`encode_histogram`].
pub fn encode_nonempty(h: &LatencyHistogram) -> String {
    if h.is_empty() {
        String::new()
    } else {
        encode_histogram(h)
    }
}

pub fn decode_histogram(text: &str) -> Option<LatencyHistogram> {
    use base64::Engine;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text)
        .ok()?;
    hdrhistogram::serialization::Deserializer::new()
        .deserialize(&mut bytes.as_slice())
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_round_trip() {
        let mut h = crate::new_histogram();
        for v in [1u64, 10, 100, 1000, 123_456] {
            h.record(v).unwrap();
        }
        let back = decode_histogram(&encode_histogram(&h)).unwrap();
        assert_eq!(back.len(), 5);
        assert_eq!(back.max(), h.max());
    }
}
