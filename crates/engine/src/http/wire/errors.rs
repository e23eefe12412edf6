//! The purpose-built client's errors as the error kinds the `h2` crate's map to
//! (`http/h2/errors.rs`), with the same `stale` rule: stale only when the server certainly
//! did not process the stream (it is then retried on a new connection).

use crate::http::classify::classify_io;
use crate::http::h2wire::frame::code;
use crate::http::h2wire::{code_name, H2Error};
use crate::transport::Failure;
use loadlab_metrics::ErrorKind;

/// The failure of an exchange (or of its connection) the client reported.
pub fn failure(e: &H2Error) -> Failure {
    match e {
        H2Error::Reset(c) => {
            let kind = match *c {
                code::REFUSED_STREAM => ErrorKind::StreamRefused,
                code::FLOW_CONTROL_ERROR => ErrorKind::FlowControl,
                code::PROTOCOL_ERROR | code::COMPRESSION_ERROR | code::FRAME_SIZE_ERROR => {
                    ErrorKind::Protocol
                }
                _ => ErrorKind::StreamReset,
            };
            Failure::new(
                kind,
                format!("the server reset the HTTP/2 stream: RST_STREAM {}", code_name(*c)),
            )
        }
        H2Error::GoAway {
            code,
            retryable: true,
        } => Failure {
            kind: ErrorKind::GoAway,
            message: format!(
                "the server is closing the HTTP/2 connection (GOAWAY, {}) and did not process this stream",
                code_name(*code)
            ),
            stale: true,
            wire: None,
        },
        H2Error::GoAway { code: c, .. } => {
            let kind = if *c == code::FLOW_CONTROL_ERROR {
                ErrorKind::FlowControl
            } else {
                ErrorKind::GoAway
            };
            Failure::new(
                kind,
                format!("the server closed the HTTP/2 connection: GOAWAY {}", code_name(*c)),
            )
        }
        H2Error::Protocol(what) => Failure::new(
            ErrorKind::Protocol,
            format!("loadlab found an HTTP/2 error: {what}"),
        ),
        H2Error::FlowControl => Failure::new(
            ErrorKind::FlowControl,
            "loadlab found an HTTP/2 error: FLOW_CONTROL_ERROR",
        ),
        H2Error::Io(kind, what) => Failure::new(
            classify_io(&std::io::Error::new(*kind, what.clone()), false),
            format!("HTTP/2 connection: {what}"),
        ),
        H2Error::BodyTooLarge(limit) => Failure::new(
            ErrorKind::BodyTooLarge,
            format!("response body larger than {limit} bytes"),
        ),
        H2Error::Closed => Failure::new(
            ErrorKind::Reset,
            "the server closed the HTTP/2 connection with this stream open",
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_become_the_kinds_the_h2_backend_counts() {
        let kind = |e: H2Error| failure(&e).kind;
        assert_eq!(
            kind(H2Error::Reset(code::REFUSED_STREAM)),
            ErrorKind::StreamRefused
        );
        assert!(!failure(&H2Error::Reset(code::REFUSED_STREAM)).stale);
        assert_eq!(kind(H2Error::Reset(code::CANCEL)), ErrorKind::StreamReset);
        assert_eq!(
            kind(H2Error::Reset(code::PROTOCOL_ERROR)),
            ErrorKind::Protocol
        );
        let graceful = failure(&H2Error::GoAway {
            code: code::NO_ERROR,
            retryable: true,
        });
        assert!(graceful.stale && graceful.kind == ErrorKind::GoAway);
        let cut = failure(&H2Error::GoAway {
            code: code::INTERNAL_ERROR,
            retryable: false,
        });
        assert!(!cut.stale && cut.kind == ErrorKind::GoAway);
        assert_eq!(kind(H2Error::BodyTooLarge(5)), ErrorKind::BodyTooLarge);
        assert_eq!(kind(H2Error::Closed), ErrorKind::Reset);
        assert_eq!(
            kind(H2Error::Io(std::io::ErrorKind::ConnectionReset, "x".into())),
            classify_io(&std::io::ErrorKind::ConnectionReset.into(), false)
        );
    }
}
