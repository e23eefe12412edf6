//! What the engine asks of each exchange beyond the bare client's tests: a gRPC call's
//! messages counted and a trailers-only status seen without keeping headers, a body bound,
//! the server's stream limit known before streams open (`settled`), and only the header
//! the server's time is read from kept.

use super::tests::{get, h2_server, LIMIT};
use super::*;
use bytes::Bytes;

/// A server answering every request with `head` (HTTP status 200) plus `fields`, then `body`
/// in one DATA frame (none if empty), then `trailers` (none if empty).
fn grpc_like(
    fields: &'static [(&'static str, &'static str)],
    body: &'static [u8],
    trailers: &'static [(&'static str, &'static str)],
) -> H2Wire {
    let mut b = h2::server::Builder::new();
    b.max_concurrent_streams(7);
    h2_server(b, Config::default(), move |_req, mut respond| async move {
        let mut resp = http::Response::builder().status(200);
        for (n, v) in fields {
            resp = resp.header(*n, *v);
        }
        let only_head = body.is_empty() && trailers.is_empty();
        let mut send = respond
            .send_response(resp.body(()).unwrap(), only_head)
            .unwrap();
        if !body.is_empty() {
            send.send_data(Bytes::from_static(body), trailers.is_empty())
                .unwrap();
        }
        if !trailers.is_empty() {
            let mut t = http::HeaderMap::new();
            for (n, v) in trailers {
                t.insert(*n, v.parse().unwrap());
            }
            send.send_trailers(t).unwrap();
        }
    })
}

fn grpc() -> Keep {
    Keep {
        grpc: true,
        ..Keep::default()
    }
}

#[tokio::test]
async fn a_trailers_only_status_is_seen_without_keeping_headers() {
    let wire = grpc_like(&[("grpc-status", "14"), ("x-other", "1")], b"", &[]);
    let r = tokio::time::timeout(LIMIT, wire.exchange_keep(&get("/"), None, grpc()))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(r.grpc_status(), Some(14));
    assert_eq!(r.frames.unwrap().messages, 0);
    // Without `grpc`, nothing of the head is kept.
    let r = wire.exchange(&get("/"), None).await.unwrap();
    assert!(r.headers.is_empty() && r.grpc_status().is_none());
}

#[tokio::test]
async fn grpc_messages_are_counted_as_data_arrives() {
    // Two messages of 3 and 0 bytes, then the status in trailers.
    let wire = grpc_like(&[], b"\0\0\0\0\x03abc\0\0\0\0\0", &[("grpc-status", "0")]);
    let r = tokio::time::timeout(LIMIT, wire.exchange_keep(&get("/"), None, grpc()))
        .await
        .unwrap()
        .unwrap();
    let frames = r.frames.unwrap();
    assert_eq!((frames.messages, frames.payload_bytes), (2, 3));
    assert!(!frames.truncated());
    assert_eq!(r.grpc_status(), Some(0));
    assert!(r.body.is_none(), "counted, not kept");
}

#[tokio::test]
async fn a_body_past_its_bound_fails_and_the_connection_goes_on() {
    let wire = grpc_like(&[], b"0123456789", &[]);
    let bounded = Keep {
        max_body: 9,
        ..Keep::default()
    };
    let e = tokio::time::timeout(LIMIT, wire.exchange_keep(&get("/"), None, bounded))
        .await
        .unwrap()
        .unwrap_err();
    assert_eq!(e, H2Error::BodyTooLarge(9));
    let exact = Keep {
        max_body: 10,
        ..Keep::default()
    };
    let r = wire.exchange_keep(&get("/"), None, exact).await.unwrap();
    assert_eq!(r.body_len, 10);
    assert!(wire.is_open());
}

#[tokio::test]
async fn settled_knows_the_servers_stream_limit() {
    let wire = grpc_like(&[], b"", &[]);
    tokio::time::timeout(LIMIT, wire.settled())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(wire.max_streams(), 7);
}

#[tokio::test]
async fn a_named_header_is_kept_alone_and_nothing_when_it_is_absent() {
    let fields = &[
        ("date", "Sun, 06 Dec 2026 21:52:12 GMT"),
        ("server-timing", "app;dur=12.5"),
        ("x-other", "1"),
    ];
    let wire = grpc_like(fields, b"ok", &[]);
    let timing = Keep {
        headers: KeepHeaders::named("Server-Timing"),
        ..Keep::default()
    };
    let r = tokio::time::timeout(LIMIT, wire.exchange_keep(&get("/"), None, timing))
        .await
        .unwrap()
        .unwrap();
    let kept: Vec<_> = r.headers.iter().collect();
    assert_eq!(kept, [(&b"server-timing"[..], &b"app;dur=12.5"[..])]);
    assert_eq!(r.body_len, 2);
    let absent = Keep {
        headers: KeepHeaders::named("x-response-time"),
        ..Keep::default()
    };
    let r = wire.exchange_keep(&get("/"), None, absent).await.unwrap();
    assert!(r.headers.is_empty());
    // A name too long to carry inline keeps every field rather than none.
    let long = "x-".repeat(40);
    assert_eq!(KeepHeaders::named(&long), KeepHeaders::All);
    let all = Keep {
        headers: KeepHeaders::All,
        ..Keep::default()
    };
    let r = wire.exchange_keep(&get("/"), None, all).await.unwrap();
    assert_eq!(r.headers.iter().count(), 3);
}
