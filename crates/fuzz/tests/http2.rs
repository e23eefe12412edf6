//! The HTTP/2 client path against hostile servers: byte streams a server could send (SETTINGS,
//! HEADERS, DATA, RST_STREAM, GOAWAY, WINDOW_UPDATE, PING, CONTINUATION, padding...) are
//! mutated and fed to one exchange of the engine's HTTP/2 connection (the `h2` crate and
//! loadlab's handling of its streams, bodies and errors), which must not panic, hang or keep
//! more than the body limit.

use loadlab_engine::http::{h2 as http2, H2Conn};
use loadlab_engine::{RenderedRequest, RequestParts, ResponseData};
use loadlab_fuzz::{mutated, run_target, PeakAlloc, ScriptedStream};
use loadlab_metrics::Protocol;
use loadlab_scenario::Method;
use proptest::prelude::*;
use std::time::Duration;

#[global_allocator]
static MEMORY: PeakAlloc = PeakAlloc;

const DATA: u8 = 0;
const HEADERS: u8 = 1;
const RST_STREAM: u8 = 3;
const SETTINGS: u8 = 4;
const PING: u8 = 6;
const GOAWAY: u8 = 7;
const WINDOW_UPDATE: u8 = 8;
const CONTINUATION: u8 = 9;
const END_STREAM: u8 = 0x1;
const END_HEADERS: u8 = 0x4;
const PADDED: u8 = 0x8;

fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let len = payload.len() as u32;
    let mut f = vec![(len >> 16) as u8, (len >> 8) as u8, len as u8, kind, flags];
    f.extend_from_slice(&stream.to_be_bytes());
    f.extend_from_slice(payload);
    f
}

/// The server's preface (its SETTINGS, here limiting streams to `max`) and the ACK of ours.
fn preface(max: u32) -> Vec<u8> {
    let mut settings = vec![0, 3];
    settings.extend_from_slice(&max.to_be_bytes());
    [frame(SETTINGS, 0, 0, &settings), frame(SETTINGS, 1, 0, &[])].concat()
}

/// `:status 200` (static table index 8), `content-length: 2` (index 28, literal value).
const STATUS_200: &[u8] = &[0x88, 0x0f, 0x0d, 0x01, b'2'];

fn corpus() -> Vec<Vec<u8>> {
    let ok = [
        preface(100),
        frame(HEADERS, END_HEADERS, 1, STATUS_200),
        frame(DATA, END_STREAM, 1, b"ok"),
    ]
    .concat();
    let no_body = [
        preface(1),
        frame(HEADERS, END_HEADERS | END_STREAM, 1, &[0x89]),
    ]
    .concat();
    let reset = [preface(100), frame(RST_STREAM, 0, 1, &8u32.to_be_bytes())].concat();
    let mut goaway = 0u32.to_be_bytes().to_vec();
    goaway.extend_from_slice(&0u32.to_be_bytes());
    goaway.extend_from_slice(b"bye");
    let graceful = [preface(100), frame(GOAWAY, 0, 0, &goaway)].concat();
    let mut calm = 1u32.to_be_bytes().to_vec();
    calm.extend_from_slice(&0xbu32.to_be_bytes());
    let enhance = [
        preface(100),
        frame(HEADERS, END_HEADERS, 1, STATUS_200),
        frame(GOAWAY, 0, 0, &calm),
    ]
    .concat();
    let mut padded = vec![4];
    padded.extend_from_slice(b"ok\0\0\0\0");
    let busy = [
        preface(100),
        frame(WINDOW_UPDATE, 0, 0, &1000u32.to_be_bytes()),
        frame(PING, 0, 0, &[1; 8]),
        frame(HEADERS, 0, 1, &STATUS_200[..1]),
        frame(CONTINUATION, END_HEADERS, 1, &STATUS_200[1..]),
        frame(DATA, PADDED, 1, &padded),
        frame(
            HEADERS,
            END_HEADERS | END_STREAM,
            1,
            &[0x40, 1, b'x', 1, b'y'],
        ),
    ]
    .concat();
    let big = [
        preface(100),
        frame(HEADERS, END_HEADERS, 1, &[0x88]),
        frame(DATA, 0, 1, &[b'a'; 3000]),
        frame(DATA, END_STREAM, 1, &[b'b'; 3000]),
    ]
    .concat();
    vec![ok, no_body, reset, graceful, enhance, busy, big]
}

#[test]
fn fuzz_http2_responses() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let strategy = (
        mutated(corpus(), 6),
        proptest::collection::vec(any::<usize>(), 0..12),
        any::<bool>(),
    );
    run_target(
        "http2_responses",
        &MEMORY,
        strategy,
        move |(data, cuts, post)| {
            const MAX_BODY: u64 = 4096;
            let mut parts = RequestParts::default();
            parts
                .write_target(|b| {
                    b.extend_from_slice(b"/");
                    Ok::<(), ()>(())
                })
                .unwrap();
            if post {
                parts
                    .write_body(|b| {
                        b.extend_from_slice(&[b'x'; 100]);
                        Ok::<(), ()>(())
                    })
                    .unwrap();
            }
            let outcome = runtime.block_on(async {
                let deadline = tokio::time::Instant::now() + Duration::from_millis(500);
                let req = RenderedRequest {
                    step: 0,
                    origin: 0,
                    method: if post { Method::Post } else { Method::Get },
                    parts: &parts,
                    fixed: true,
                    close: false,
                    max_body: MAX_BODY,
                    server: &loadlab_engine::ServerHeader::ServerTiming,
                    deadline,
                    grpc: false,
                };
                let authority = http::uri::Authority::from_static("127.0.0.1:1");
                let head = http2::build(&req, false, &authority).expect("a valid request");
                let mut keep = ResponseData::new(true, true);
                let exchange = async {
                    let mut conn =
                        H2Conn::handshake(ScriptedStream::new(data, &cuts), Protocol::H2c, false)
                            .await?;
                    http2::exchange_head(&mut conn, &req, &head, Some(&mut keep)).await
                };
                let result =
                    tokio::time::timeout_at(deadline + Duration::from_millis(500), exchange)
                        .await
                        .expect("an exchange with a server that ended its stream ends");
                (result, keep.body.len())
            });
            if let (Ok(response), body) = outcome {
                prop_assert!((100..1000).contains(&response.status), "{response:?}");
                prop_assert!(body as u64 <= MAX_BODY);
            }
            Ok(())
        },
    );
}
