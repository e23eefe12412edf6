//! HTTP/2 errors as error kinds a user can act on: a reset stream, a refused one, flow
//! control, GOAWAY, protocol errors — and which failures are safe to retry (the server never
//! processed the stream).

use crate::http::classify::classify_io;
use crate::transport::Failure;
use h2::Reason;
use loadlab_metrics::ErrorKind;

/// The failure of a stream (or of its connection) that `h2` reported.
pub fn failure(e: &h2::Error) -> Failure {
    if let Some(io) = e.get_io() {
        return Failure::new(classify_io(io, false), format!("HTTP/2 connection: {io}"));
    }
    let Some(reason) = e.reason() else {
        return Failure::new(ErrorKind::Protocol, format!("HTTP/2: {e}"));
    };
    let by = if e.is_remote() {
        "the server"
    } else {
        "loadlab"
    };
    if e.is_go_away() {
        if reason == Reason::NO_ERROR && e.is_remote() {
            // A graceful GOAWAY: this stream was above its last stream id, or opened after
            // it, so the server never saw it. The connection drains; retry on a new one.
            return Failure {
                kind: ErrorKind::GoAway,
                message: "the server is closing the HTTP/2 connection (GOAWAY, NO_ERROR) and did not process this stream".into(),
                stale: true,
                wire: None,
            };
        }
        let kind = match reason {
            Reason::FLOW_CONTROL_ERROR => ErrorKind::FlowControl,
            Reason::PROTOCOL_ERROR | Reason::COMPRESSION_ERROR | Reason::FRAME_SIZE_ERROR
                if !e.is_remote() =>
            {
                ErrorKind::Protocol
            }
            _ if e.is_remote() => ErrorKind::GoAway,
            _ => ErrorKind::Protocol,
        };
        return Failure::new(
            kind,
            format!("{by} closed the HTTP/2 connection: GOAWAY {}", name(reason)),
        );
    }
    let kind = match reason {
        Reason::REFUSED_STREAM => ErrorKind::StreamRefused,
        Reason::FLOW_CONTROL_ERROR => ErrorKind::FlowControl,
        Reason::PROTOCOL_ERROR | Reason::COMPRESSION_ERROR | Reason::FRAME_SIZE_ERROR => {
            ErrorKind::Protocol
        }
        _ if e.is_reset() => ErrorKind::StreamReset,
        _ => ErrorKind::Protocol,
    };
    let what = if e.is_reset() {
        "reset the HTTP/2 stream: RST_STREAM"
    } else {
        "found an HTTP/2 error:"
    };
    Failure::new(kind, format!("{by} {what} {}", name(reason)))
}

/// The error code's name as RFC 9113 writes it.
fn name(reason: Reason) -> String {
    let known = match reason {
        Reason::NO_ERROR => "NO_ERROR",
        Reason::PROTOCOL_ERROR => "PROTOCOL_ERROR",
        Reason::INTERNAL_ERROR => "INTERNAL_ERROR",
        Reason::FLOW_CONTROL_ERROR => "FLOW_CONTROL_ERROR",
        Reason::SETTINGS_TIMEOUT => "SETTINGS_TIMEOUT",
        Reason::STREAM_CLOSED => "STREAM_CLOSED",
        Reason::FRAME_SIZE_ERROR => "FRAME_SIZE_ERROR",
        Reason::REFUSED_STREAM => "REFUSED_STREAM",
        Reason::CANCEL => "CANCEL",
        Reason::COMPRESSION_ERROR => "COMPRESSION_ERROR",
        Reason::CONNECT_ERROR => "CONNECT_ERROR",
        Reason::ENHANCE_YOUR_CALM => "ENHANCE_YOUR_CALM",
        Reason::INADEQUATE_SECURITY => "INADEQUATE_SECURITY",
        Reason::HTTP_1_1_REQUIRED => "HTTP_1_1_REQUIRED",
        other => return format!("error code {:#x}", u32::from(other)),
    };
    known.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_become_kinds() {
        let local = |r: Reason| failure(&h2::Error::from(r));
        assert_eq!(local(Reason::PROTOCOL_ERROR).kind, ErrorKind::Protocol);
        assert_eq!(
            local(Reason::FLOW_CONTROL_ERROR).kind,
            ErrorKind::FlowControl
        );
        assert_eq!(local(Reason::REFUSED_STREAM).kind, ErrorKind::StreamRefused);
        assert!(
            !local(Reason::REFUSED_STREAM).stale,
            "refused streams are counted"
        );
        assert_eq!(name(Reason::from(0x99)), "error code 0x99");
    }
}
