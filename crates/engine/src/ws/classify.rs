//! What a WebSocket failure is, as an error kind (never by its text), and whether a message
//! is the one an `expect` waits for.

use crate::inspect::json_equal;
use crate::transport::Failure;
use loadlab_metrics::ErrorKind;
use loadlab_scenario::WsMatch;
use tokio_tungstenite::tungstenite::error::ProtocolError;
use tokio_tungstenite::tungstenite::{Error, Message};

/// The kind of a failure while the session runs (after its upgrade).
pub fn session_error(e: &Error) -> ErrorKind {
    match e {
        Error::Io(io) => match io.kind() {
            std::io::ErrorKind::UnexpectedEof
            | std::io::ErrorKind::ConnectionReset
            | std::io::ErrorKind::ConnectionAborted
            | std::io::ErrorKind::BrokenPipe => ErrorKind::WsClosedAbnormally,
            _ => ErrorKind::Io,
        },
        Error::Protocol(ProtocolError::ResetWithoutClosingHandshake) => {
            ErrorKind::WsClosedAbnormally
        }
        Error::Tls(_) => ErrorKind::Tls,
        Error::Http(_) | Error::HttpFormat(_) | Error::Url(_) => ErrorKind::WsHandshake,
        _ => ErrorKind::WsProtocol,
    }
}

/// A failed upgrade: `ws_handshake` with the status the server answered (0: none), or the
/// kind of an I/O failure.
pub fn upgrade_error(e: Error) -> (Failure, u16) {
    match e {
        Error::Http(resp) => {
            let status = resp.status().as_u16();
            (
                Failure::new(
                    ErrorKind::WsHandshake,
                    format!("the server answered the WebSocket upgrade with {status}, not 101"),
                ),
                status,
            )
        }
        // Connected, but the server dropped the connection instead of answering.
        Error::Io(io) => (
            Failure::new(
                ErrorKind::WsHandshake,
                format!("the connection ended during the WebSocket upgrade: {io}"),
            ),
            0,
        ),
        other => (
            Failure::new(
                ErrorKind::WsHandshake,
                format!("WebSocket upgrade: {other}"),
            ),
            0,
        ),
    }
}

/// The message's payload: text or binary (control frames are never matched).
pub fn payload(m: &Message) -> Option<&[u8]> {
    match m {
        Message::Text(t) => Some(t.as_bytes()),
        Message::Binary(b) => Some(b),
        _ => None,
    }
}

/// True when message `m` is what `matcher` waits for.
pub fn matches(m: &Message, matcher: &WsMatch) -> bool {
    let Some(bytes) = payload(m) else {
        return false;
    };
    match matcher {
        WsMatch::Any => true,
        WsMatch::Contains(t) => {
            let needle = t.as_bytes();
            needle.is_empty() || bytes.windows(needle.len()).any(|w| w == needle)
        }
        WsMatch::Json { path, equals } => {
            let Ok(json) = serde_json::from_slice::<serde_json::Value>(bytes) else {
                return false;
            };
            match (path.find(&json), equals) {
                (Some(v), Some(want)) => json_equal(v, want),
                (Some(_), None) => true,
                (None, _) => false,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use loadlab_scenario::jsonpath::JsonPath;

    #[test]
    fn matching_table() {
        let json = |p: &str, e: Option<serde_json::Value>| WsMatch::Json {
            path: JsonPath::parse(p).unwrap(),
            equals: e,
        };
        let text = Message::text(r#"{"status":"received","n":2}"#);
        let cases: Vec<(&Message, WsMatch, bool)> = vec![
            (&text, WsMatch::Any, true),
            (&text, WsMatch::Contains("received".into()), true),
            (&text, WsMatch::Contains("nope".into()), false),
            (&text, json("$.status", Some("received".into())), true),
            (&text, json("$.status", Some("other".into())), false),
            (&text, json("$.n", Some(serde_json::json!(2.0))), true),
            (&text, json("$.status", None), true),
            (&text, json("$.missing", None), false),
        ];
        for (m, matcher, want) in cases {
            assert_eq!(matches(m, &matcher), want, "{matcher:?}");
        }
        assert!(!matches(&Message::Ping(vec![1].into()), &WsMatch::Any));
        assert!(matches(
            &Message::binary(b"not json".to_vec()),
            &WsMatch::Contains("json".into())
        ));
        assert!(!matches(
            &Message::binary(b"not json".to_vec()),
            &json("$.a", None)
        ));
    }

    #[test]
    fn errors_are_kinds() {
        let reset = Error::Protocol(ProtocolError::ResetWithoutClosingHandshake);
        assert_eq!(session_error(&reset), ErrorKind::WsClosedAbnormally);
        let eof = Error::Io(std::io::ErrorKind::UnexpectedEof.into());
        assert_eq!(session_error(&eof), ErrorKind::WsClosedAbnormally);
        let big = Error::Capacity(
            tokio_tungstenite::tungstenite::error::CapacityError::MessageTooLong {
                size: 10,
                max_size: 5,
            },
        );
        assert_eq!(session_error(&big), ErrorKind::WsProtocol);
    }
}
