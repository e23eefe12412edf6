//! The client against the `h2` crate's server (an independent implementation) and, for what
//! that server cannot be made to do on cue (GOAWAY between given streams, PING, bad frames,
//! window changes under an open stream), against a scripted peer speaking raw frames.

use super::frame::{self, code, flag, kind, setting};
use super::*;
use bytes::Bytes;
use futures_util::future::join_all;
use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt, DuplexStream};

pub(super) const LIMIT: Duration = Duration::from_secs(10);

pub(super) fn get(path: &str) -> HeaderBlock {
    HeaderBlock::new(
        "GET",
        "http",
        "test",
        path,
        [("user-agent", &b"loadlab"[..])],
    )
    .unwrap()
}

/// A client connected to an `h2` server that runs `handler` for each request.
pub(super) fn h2_server<F, Fut>(builder: h2::server::Builder, config: Config, handler: F) -> H2Wire
where
    F: Fn(http::Request<h2::RecvStream>, h2::server::SendResponse<Bytes>) -> Fut
        + Send
        + Sync
        + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    let (client, server) = tokio::io::duplex(1 << 20);
    tokio::spawn(async move {
        let mut conn = builder.handshake(server).await.unwrap();
        while let Some(r) = conn.accept().await {
            let Ok((req, respond)) = r else { break };
            tokio::spawn(handler(req, respond));
        }
    });
    let (wire, driver) = H2Wire::with_config(client, config);
    tokio::spawn(driver);
    wire
}

fn ok(
    body: &'static [u8],
) -> impl Fn(
    http::Request<h2::RecvStream>,
    h2::server::SendResponse<Bytes>,
) -> std::pin::Pin<Box<dyn Future<Output = ()> + Send>> {
    move |_req, mut respond| {
        Box::pin(async move {
            let resp = http::Response::builder()
                .status(200)
                .header("x-a", "1")
                .body(())
                .unwrap();
            let mut send = respond.send_response(resp, body.is_empty()).unwrap();
            if !body.is_empty() {
                send.send_data(Bytes::from_static(body), true).unwrap();
            }
        })
    }
}

async fn read_body(mut body: h2::RecvStream) -> usize {
    let mut n = 0;
    while let Some(chunk) = body.data().await {
        let chunk = chunk.unwrap();
        n += chunk.len();
        body.flow_control().release_capacity(chunk.len()).unwrap();
    }
    n
}

#[tokio::test]
async fn get_200_with_body() {
    let wire = h2_server(h2::server::Builder::new(), Config::default(), ok(b"hello"));
    let keep = Keep {
        headers: KeepHeaders::All,
        body: true,
        ..Keep::default()
    };
    let r = tokio::time::timeout(LIMIT, wire.exchange_keep(&get("/"), None, keep))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(r.status, 200);
    assert_eq!(r.body.as_deref(), Some(&b"hello"[..]));
    assert_eq!(r.body_len, 5);
    assert_eq!(r.headers.get(b"x-a"), Some(&b"1"[..]));
    assert!(r.trailers.is_none());
    assert!(r.head_at >= r.written_at);
}

#[tokio::test]
async fn post_body_larger_than_the_server_window_arrives_whole() {
    let mut b = h2::server::Builder::new();
    b.initial_window_size(65_535)
        .initial_connection_window_size(65_535);
    let wire = h2_server(b, Config::default(), |req, mut respond| async move {
        let n = read_body(req.into_body()).await;
        let resp = http::Response::builder()
            .status(200)
            .header("x-len", n.to_string())
            .body(())
            .unwrap();
        respond.send_response(resp, true).unwrap();
    });
    let body = Bytes::from(vec![7u8; 200_000]);
    let post = HeaderBlock::new("POST", "http", "test", "/up", []).unwrap();
    let keep = Keep {
        headers: KeepHeaders::All,
        body: false,
        ..Keep::default()
    };
    let r = tokio::time::timeout(LIMIT, wire.exchange_keep(&post, Some(body), keep))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(r.headers.get(b"x-len"), Some(&b"200000"[..]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hundred_exchanges_over_max_concurrent_streams_10() {
    let mut b = h2::server::Builder::new();
    b.max_concurrent_streams(10);
    let (now, peak) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let (n2, p2) = (now.clone(), peak.clone());
    let wire = h2_server(b, Config::default(), move |_req, mut respond| {
        let (now, peak) = (n2.clone(), p2.clone());
        async move {
            let n = now.fetch_add(1, Ordering::SeqCst) + 1;
            peak.fetch_max(n, Ordering::SeqCst);
            tokio::time::sleep(Duration::from_millis(2)).await;
            now.fetch_sub(1, Ordering::SeqCst);
            let resp = http::Response::builder().status(204).body(()).unwrap();
            respond.send_response(resp, true).unwrap();
        }
    });
    let block = get("/");
    let all = join_all((0..100).map(|_| wire.exchange(&block, None)));
    let results = tokio::time::timeout(LIMIT, all).await.unwrap();
    assert!(
        results
            .iter()
            .all(|r| r.as_ref().is_ok_and(|r| r.status == 204)),
        "{results:?}"
    );
    assert!(peak.load(Ordering::SeqCst) <= 10);
    // And from tasks on other workers at once.
    let tasks: Vec<_> = (0..20)
        .map(|_| {
            let (wire, block) = (wire.clone(), block.clone());
            tokio::spawn(async move { wire.exchange(&block, None).await.map(|r| r.status) })
        })
        .collect();
    for t in tasks {
        assert_eq!(
            tokio::time::timeout(LIMIT, t).await.unwrap().unwrap(),
            Ok(204)
        );
    }
}

#[tokio::test]
async fn trailers_carry_grpc_status() {
    let wire = h2_server(
        h2::server::Builder::new(),
        Config::default(),
        |_req, mut respond| async move {
            let resp = http::Response::builder().status(200).body(()).unwrap();
            let mut send = respond.send_response(resp, false).unwrap();
            send.send_data(Bytes::from_static(b"\0\0\0\0\0"), false)
                .unwrap();
            let mut trailers = http::HeaderMap::new();
            trailers.insert("grpc-status", "7".parse().unwrap());
            trailers.insert("grpc-message", "denied".parse().unwrap());
            send.send_trailers(trailers).unwrap();
        },
    );
    let r = tokio::time::timeout(LIMIT, wire.exchange(&get("/"), None))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(r.body_len, 5);
    assert_eq!(r.grpc_status(), Some(7));
    assert_eq!(
        r.trailers.unwrap().get(b"grpc-message"),
        Some(&b"denied"[..])
    );
}

#[tokio::test]
async fn refused_stream_is_a_retryable_reset() {
    let wire = h2_server(
        h2::server::Builder::new(),
        Config::default(),
        |_req, mut respond| async move {
            respond.send_reset(h2::Reason::REFUSED_STREAM);
        },
    );
    let e = tokio::time::timeout(LIMIT, wire.exchange(&get("/"), None))
        .await
        .unwrap()
        .unwrap_err();
    assert_eq!(e, H2Error::Reset(code::REFUSED_STREAM));
    assert!(e.is_retryable());
    // The connection is still good.
    let wire2 = wire.clone();
    assert!(wire2.is_open());
}

#[tokio::test]
async fn response_headers_through_the_dynamic_table_and_continuation() {
    let big = "v".repeat(20_000);
    let wire = h2_server(
        h2::server::Builder::new(),
        Config::default(),
        move |req, mut respond| {
            let big = big.clone();
            async move {
                let mut resp = http::Response::builder()
                    .status(200)
                    .header("x-same", "the same value every time")
                    .header("content-type", "application/json")
                    .header("x-path", req.uri().path());
                if req.uri().path() == "/big" {
                    // Past the 16,384-byte frame: HEADERS and CONTINUATION.
                    resp = resp.header("x-big", big.as_str());
                }
                respond.send_response(resp.body(()).unwrap(), true).unwrap();
            }
        },
    );
    let keep = Keep {
        headers: KeepHeaders::All,
        body: false,
        ..Keep::default()
    };
    for path in ["/a", "/b", "/big", "/c", "/d"] {
        let r = tokio::time::timeout(LIMIT, wire.exchange_keep(&get(path), None, keep))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(
            r.headers.get(b"x-same"),
            Some(&b"the same value every time"[..])
        );
        assert_eq!(
            r.headers.get(b"content-type"),
            Some(&b"application/json"[..])
        );
        assert_eq!(r.headers.get(b"x-path"), Some(path.as_bytes()));
        assert_eq!(
            r.headers.get(b"x-big").map(|v| v.len()),
            (path == "/big").then_some(20_000)
        );
    }
}

#[tokio::test]
async fn a_1_mb_body_arrives_whole() {
    let wire = h2_server(
        h2::server::Builder::new(),
        Config::default(),
        |_req, mut respond| async move {
            let resp = http::Response::builder().status(200).body(()).unwrap();
            let mut send = respond.send_response(resp, false).unwrap();
            let body: Vec<u8> = (0..1 << 20).map(|i| (i % 251) as u8).collect();
            send.send_data(Bytes::from(body), true).unwrap();
        },
    );
    let keep = Keep {
        headers: KeepHeaders::None,
        body: true,
        ..Keep::default()
    };
    for _ in 0..5 {
        // Five in a row: 5 MB past the 4 MiB stream window and the 16 MiB connection one
        // needs our WINDOW_UPDATEs.
        let r = tokio::time::timeout(LIMIT, wire.exchange_keep(&get("/"), None, keep))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(r.body_len, 1 << 20);
        let body = r.body.unwrap();
        assert!(body.iter().enumerate().all(|(i, b)| *b == (i % 251) as u8));
    }
    let many = join_all((0..20).map(|_| wire.exchange(&get("/"), None)));
    for r in tokio::time::timeout(LIMIT, many).await.unwrap() {
        assert_eq!(r.unwrap().body_len, 1 << 20);
    }
}

#[tokio::test]
async fn stream_ids_exhausted_close_the_connection_gracefully() {
    let config = Config {
        first_stream: (1 << 31) - 3,
    };
    let wire = h2_server(h2::server::Builder::new(), config, ok(b""));
    for _ in 0..2 {
        let r = tokio::time::timeout(LIMIT, wire.exchange(&get("/"), None))
            .await
            .unwrap();
        assert_eq!(r.unwrap().status, 200);
    }
    let e = tokio::time::timeout(LIMIT, wire.exchange(&get("/"), None))
        .await
        .unwrap()
        .unwrap_err();
    assert!(e.is_retryable(), "{e:?}");
    assert!(!wire.is_open());
}

#[tokio::test]
async fn a_dropped_exchange_resets_its_stream_and_frees_its_slot() {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let wire = h2_server(
        h2::server::Builder::new(),
        Config::default(),
        move |req, mut respond| {
            let tx = tx.clone();
            async move {
                if req.uri().path() == "/slow" {
                    let reason = std::future::poll_fn(|cx| respond.poll_reset(cx))
                        .await
                        .unwrap();
                    tx.send(reason).unwrap();
                } else {
                    respond
                        .send_response(http::Response::new(()), true)
                        .unwrap();
                }
            }
        },
    );
    let slow = tokio::time::timeout(
        Duration::from_millis(100),
        wire.exchange(&get("/slow"), None),
    )
    .await;
    assert!(slow.is_err(), "the slow exchange timed out");
    let reason = tokio::time::timeout(LIMIT, rx.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(reason, h2::Reason::CANCEL);
    let r = tokio::time::timeout(LIMIT, wire.exchange(&get("/"), None))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(r.status, 200);
}

#[tokio::test]
async fn the_connection_closing_fails_open_streams() {
    let (client, server) = tokio::io::duplex(1 << 16);
    tokio::spawn(async move {
        let mut conn = h2::server::handshake(server).await.unwrap();
        // Take one request, then drop the connection with it unanswered.
        let _req = conn.accept().await;
    });
    let (wire, driver) = H2Wire::new(client);
    tokio::spawn(driver);
    let e = tokio::time::timeout(LIMIT, wire.exchange(&get("/"), None))
        .await
        .unwrap()
        .unwrap_err();
    assert!(matches!(e, H2Error::Closed | H2Error::Io(..)), "{e:?}");
    let e = tokio::time::timeout(LIMIT, wire.exchange(&get("/"), None))
        .await
        .unwrap()
        .unwrap_err();
    assert!(matches!(e, H2Error::Closed | H2Error::Io(..)), "{e:?}");
}

/// A scripted server speaking raw frames.
struct Peer {
    io: DuplexStream,
}

type RawFrame = (u8, u8, u32, Vec<u8>);

impl Peer {
    /// A client and a peer past the preface, the peer's SETTINGS sent.
    async fn start(settings: &[(u16, u32)]) -> (H2Wire, Peer) {
        let (client, io) = tokio::io::duplex(1 << 20);
        let (wire, driver) = H2Wire::new(client);
        tokio::spawn(driver);
        let mut peer = Peer { io };
        let mut preface = [0u8; 24];
        peer.io.read_exact(&mut preface).await.unwrap();
        assert_eq!(preface, frame::PREFACE);
        let mut out = Vec::new();
        frame::put_settings(&mut out, settings);
        peer.send(&out).await;
        (wire, peer)
    }

    async fn send(&mut self, bytes: &[u8]) {
        self.io.write_all(bytes).await.unwrap();
    }

    async fn frame(&mut self) -> RawFrame {
        let mut h = [0u8; 9];
        self.io.read_exact(&mut h).await.unwrap();
        let len = (h[0] as usize) << 16 | (h[1] as usize) << 8 | h[2] as usize;
        let mut p = vec![0u8; len];
        self.io.read_exact(&mut p).await.unwrap();
        (h[3], h[4], u32::from_be_bytes([h[5], h[6], h[7], h[8]]), p)
    }

    /// The next frame of `kind`, skipping others.
    async fn next(&mut self, want: u8) -> RawFrame {
        loop {
            let f = self.frame().await;
            if f.0 == want {
                return f;
            }
        }
    }

    async fn respond_200(&mut self, stream: u32) {
        let mut out = Vec::new();
        frame::put_headers(&mut out, stream, b"\x88", true, 16_384);
        self.send(&out).await;
    }
}

#[tokio::test]
async fn goaway_fails_streams_above_its_last_id_as_retryable() {
    tokio::time::timeout(LIMIT, async {
        let (wire, mut peer) = Peer::start(&[]).await;
        let block = get("/");
        let all = tokio::spawn(async move {
            let r = join_all((0..6).map(|_| wire.exchange(&block, None))).await;
            let after = wire.exchange(&block, None).await;
            (r, after)
        });
        let mut ids = Vec::new();
        while ids.len() < 6 {
            ids.push(peer.next(kind::HEADERS).await.2);
        }
        assert_eq!(ids, [1, 3, 5, 7, 9, 11]);
        let mut out = Vec::new();
        frame::put_goaway(&mut out, 5, code::NO_ERROR, b"");
        peer.send(&out).await;
        for id in [1, 3, 5] {
            peer.respond_200(id).await;
        }
        let (results, after) = all.await.unwrap();
        for r in &results[..3] {
            assert_eq!(r.as_ref().unwrap().status, 200);
        }
        for r in &results[3..] {
            let e = r.as_ref().unwrap_err();
            assert_eq!(
                *e,
                H2Error::GoAway {
                    code: code::NO_ERROR,
                    retryable: true
                }
            );
        }
        assert!(after.unwrap_err().is_retryable());
        // With nothing open the client says goodbye too.
        let (_, _, _, p) = peer.next(kind::GOAWAY).await;
        assert_eq!(&p[4..8], &code::NO_ERROR.to_be_bytes());
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn settings_are_acked_ping_answered_windows_follow_initial_window_size() {
    tokio::time::timeout(LIMIT, async {
        // A zero window: the body must wait for the server's SETTINGS change.
        let (wire, mut peer) = Peer::start(&[(setting::INITIAL_WINDOW_SIZE, 0)]).await;
        let (k, _, _, p) = peer.frame().await;
        assert_eq!(k, kind::SETTINGS);
        let ours: Vec<_> = frame::settings(&p).collect();
        assert_eq!(
            ours,
            [
                (setting::ENABLE_PUSH, 0),
                (setting::INITIAL_WINDOW_SIZE, 4 << 20)
            ]
        );
        let (k, _, s, p) = peer.frame().await;
        assert_eq!(
            (k, s, p),
            (
                kind::WINDOW_UPDATE,
                0,
                ((16u32 << 20) - 65_535).to_be_bytes().to_vec()
            )
        );
        let (k, f, _, _) = peer.frame().await;
        assert_eq!((k, f), (kind::SETTINGS, flag::ACK));
        let post = HeaderBlock::new("POST", "http", "test", "/", []).unwrap();
        let task = tokio::spawn(async move {
            wire.exchange(&post, Some(Bytes::from_static(b"0123456789")))
                .await
        });
        let (k, f, stream, _) = peer.frame().await;
        assert_eq!((k, f & flag::END_STREAM), (kind::HEADERS, 0));
        let mut out = Vec::new();
        frame::put_ping(&mut out, false, *b"pingpong");
        peer.send(&out).await;
        let (k, f, _, p) = peer.frame().await;
        assert_eq!((k, f, &p[..]), (kind::PING, flag::ACK, &b"pingpong"[..]));
        // Opening the window under the open stream lets the body go.
        out.clear();
        frame::put_settings(&mut out, &[(setting::INITIAL_WINDOW_SIZE, 4)]);
        peer.send(&out).await;
        let (k, f, _, _) = peer.frame().await;
        assert_eq!((k, f), (kind::SETTINGS, flag::ACK));
        let (k, f, s, p) = peer.frame().await;
        assert_eq!((k, f, s, &p[..]), (kind::DATA, 0, stream, &b"0123"[..]));
        out.clear();
        frame::put_window_update(&mut out, stream, 100);
        peer.send(&out).await;
        let (k, f, _, p) = peer.frame().await;
        assert_eq!(
            (k, f, &p[..]),
            (kind::DATA, flag::END_STREAM, &b"456789"[..])
        );
        // 1xx heads are skipped.
        out.clear();
        frame::put_headers(&mut out, stream, b"\x08\x03100", false, 16_384);
        peer.send(&out).await;
        peer.respond_200(stream).await;
        assert_eq!(task.await.unwrap().unwrap().status, 200);
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn a_bad_frame_is_a_connection_error_with_goaway() {
    tokio::time::timeout(LIMIT, async {
        let (wire, mut peer) = Peer::start(&[]).await;
        let block = get("/");
        let task = tokio::spawn(async move {
            let r = join_all((0..3).map(|_| wire.exchange(&block, None))).await;
            (r, wire.exchange(&block, None).await)
        });
        for _ in 0..3 {
            peer.next(kind::HEADERS).await;
        }
        // PUSH_PROMISE after we said SETTINGS_ENABLE_PUSH=0.
        peer.send(b"\x00\x00\x04\x05\x04\x00\x00\x00\x01\x00\x00\x00\x02")
            .await;
        let (_, _, _, p) = peer.next(kind::GOAWAY).await;
        assert_eq!(&p[4..8], &code::PROTOCOL_ERROR.to_be_bytes());
        let (results, after) = task.await.unwrap();
        for r in results {
            assert!(matches!(r, Err(H2Error::Protocol(_))), "{r:?}");
        }
        assert!(matches!(after, Err(H2Error::Protocol(_))));
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn rst_stream_fails_only_its_stream() {
    tokio::time::timeout(LIMIT, async {
        let (wire, mut peer) = Peer::start(&[]).await;
        let block = get("/");
        let task =
            tokio::spawn(
                async move { join_all((0..2).map(|_| wire.exchange(&block, None))).await },
            );
        let a = peer.next(kind::HEADERS).await.2;
        let b = peer.next(kind::HEADERS).await.2;
        let mut out = Vec::new();
        frame::put_rst_stream(&mut out, a, code::INTERNAL_ERROR);
        peer.send(&out).await;
        peer.respond_200(b).await;
        let r = task.await.unwrap();
        assert_eq!(
            r[0].as_ref().unwrap_err(),
            &H2Error::Reset(code::INTERNAL_ERROR)
        );
        assert!(!r[0].as_ref().unwrap_err().is_retryable());
        assert_eq!(r[1].as_ref().unwrap().status, 200);
    })
    .await
    .unwrap();
}
