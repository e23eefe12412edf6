//! The call's outcome as gRPC states it: `grpc-status` and `grpc-message` in the trailers
//! (or in the headers of a trailers-only answer), with the messages counted on the way.

use super::frames::FrameCounter;
use loadlab_metrics::GrpcCode;

/// What a gRPC call's response said, beside its HTTP status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct GrpcReply {
    /// `None`: the response ended without a `grpc-status` (not a gRPC server, or a broken one).
    pub status: Option<GrpcCode>,
    pub messages: u64,
    pub payload_bytes: u64,
    pub first_message: Option<tokio::time::Instant>,
    /// The body ended inside a frame.
    pub truncated: bool,
}

impl GrpcReply {
    pub fn new(status: Option<GrpcCode>, frames: &FrameCounter) -> Self {
        Self {
            status,
            messages: frames.messages,
            payload_bytes: frames.payload_bytes,
            first_message: frames.first_message,
            truncated: frames.truncated(),
        }
    }
}

/// `grpc-status` and the percent-decoded `grpc-message` of a header block, if it has a status.
pub fn grpc_status(headers: &http::HeaderMap) -> Option<(GrpcCode, String)> {
    grpc_status_of(
        headers.get("grpc-status")?.as_bytes(),
        headers.get("grpc-message").map(|v| v.as_bytes()),
    )
}

/// `grpc-status` and the percent-decoded `grpc-message` from their raw values (a client that
/// keeps header fields as bytes, not in a `HeaderMap`).
pub fn grpc_status_of(status: &[u8], message: Option<&[u8]>) -> Option<(GrpcCode, String)> {
    let code = std::str::from_utf8(status)
        .ok()?
        .trim()
        .parse::<u32>()
        .ok()?;
    let message = message.map(percent_decode).unwrap_or_default();
    Some((GrpcCode::from_u32(code), message))
}

/// `grpc-message` is percent-encoded UTF-8 (the gRPC HTTP/2 spec); a bad escape is kept.
fn percent_decode(v: &[u8]) -> String {
    let mut out = Vec::with_capacity(v.len());
    let mut i = 0;
    while i < v.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (
            v[i],
            v.get(i + 1).copied().and_then(hex),
            v.get(i + 2).copied().and_then(hex),
        ) {
            (b'%', Some(h), Some(l)) => {
                out.push((h * 16 + l) as u8);
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_status_and_decodes_its_message() {
        let mut h = http::HeaderMap::new();
        assert_eq!(grpc_status(&h), None);
        h.insert("grpc-status", "14".parse().unwrap());
        h.insert(
            "grpc-message",
            "stream%20stopped%E2%9C%93%2".parse().unwrap(),
        );
        assert_eq!(
            grpc_status(&h),
            Some((GrpcCode::Unavailable, "stream stopped✓%2".to_string()))
        );
    }
}
