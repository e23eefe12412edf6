//! What a hostile or broken server can do at the HTTP level, and what loadlab makes of it:
//! each case ends with the expected error kind (or none), in bounded time and memory.

use super::handlers::{serve, set_linger_zero, OK_2};
use super::run::*;
use super::server::*;
use std::time::Duration;

/// Most memory a run against any of these servers may take.
const MAX_RSS: u64 = 128 * 1024 * 1024;

/// The run ended within `limit` and its generator stayed under [`MAX_RSS`].
fn assert_bounded(run: &Run, limit: Duration) {
    assert!(
        run.elapsed < limit,
        "took {:?} (limit {limit:?})\n{}",
        run.elapsed,
        run.describe()
    );
    let rss = run.u("/generator/max_rss_bytes");
    assert!(
        rss > 0 && rss < MAX_RSS,
        "max RSS {rss} bytes\n{}",
        run.describe()
    );
}

/// Writes `bytes` after each request, then closes the connection with a real RST.
fn write_then_rst(c: &mut Conn, bytes: &[u8]) {
    if c.read_request() && c.write(bytes) {
        std::thread::sleep(Duration::from_millis(5));
        set_linger_zero(c);
    }
}

fn many_headers_handler(c: &mut Conn) {
    let mut head = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n".to_vec();
    for i in 0..100 {
        head.extend_from_slice(format!("Set-Cookie: c{i}=v{i}; Path=/\r\n").as_bytes());
    }
    head.extend_from_slice(b"\r\nok");
    serve(c, &head);
}

fn interim_handler(c: &mut Conn) {
    serve(
        c,
        b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </s.css>\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
    );
}

fn endless_interim_handler(c: &mut Conn) {
    if c.read_request() {
        while !c.stopped() && c.write(&b"HTTP/1.1 100 Continue\r\n\r\n".repeat(64)) {}
    }
}

fn switching_protocols_handler(c: &mut Conn) {
    serve(
        c,
        b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n",
    );
}

/// A chunked response with extensions and trailers, written one byte per write.
fn byte_by_byte_handler(c: &mut Conn) {
    let response: &[u8] = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nX-A: 1\r\n\r\n3;x=y\r\nabc\r\n2\r\nde\r\n0\r\nX-Trailer: t\r\nY-Trailer: u\r\n\r\n";
    while c.read_request() {
        for (i, b) in response.iter().enumerate() {
            if !c.write(&[*b]) {
                return;
            }
            if i % 8 == 0 {
                std::thread::sleep(Duration::from_millis(1));
            }
        }
        c.stats
            .responses
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }
}

/// A valid response followed, in the same write, by bytes nobody asked for.
fn pipelined_garbage_handler(c: &mut Conn) {
    let mut response = OK_2.to_vec();
    response.extend_from_slice(b"HTTP/1.1 500 Not Asked For\r\nContent-Length: 0\r\n\r\ngarbage");
    serve(c, &response);
}

/// Slowloris: a head that never ends, one byte every 10 ms.
fn slowloris_handler(c: &mut Conn) {
    if c.read_request() && c.write(b"HTTP/1.1 200 OK\r\nX-Slow: ") {
        while !c.stopped() && c.write(b"a") {
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

fn mid_head_rst_handler(c: &mut Conn) {
    write_then_rst(c, b"HTTP/1.1 200 OK\r\nContent-Le");
}

fn mid_body_close_handler(c: &mut Conn) {
    if c.read_request() {
        c.write(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n01234");
    }
}

fn mid_chunk_rst_handler(c: &mut Conn) {
    write_then_rst(
        c,
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\na\r\n01234",
    );
}

fn conflicting_length_handler(c: &mut Conn) {
    serve(
        c,
        b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nokk",
    );
}

/// 4 MiB of chunk extension and of trailers around a valid 5-byte body.
fn huge_extension_and_trailers_handler(c: &mut Conn) {
    let filler = vec![b'x'; 4 << 20];
    while c.read_request() {
        let ok = c.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=")
            && c.write(&filler)
            && c.write(b"\r\nhello\r\n0\r\nX-Big: ")
            && c.write(&filler)
            && c.write(b"\r\n\r\n");
        if !ok {
            return;
        }
        c.stats
            .responses
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }
}

#[test]
fn more_than_48_header_fields_are_a_valid_response() {
    let server = Server::start(many_headers_handler);
    let run = run_loadlab(
        "many_headers",
        &server.url("/h"),
        &["--rate", "200/s"],
        "1s",
    );
    assert_eq!(run.code(), 0, "{}", run.describe());
    assert!(run.total() > 5, "{}", run.describe());
    assert_eq!(run.ok(), run.total(), "{}", run.describe());
    assert_bounded(&run, Duration::from_secs(5));
}

#[test]
fn interim_1xx_responses_are_skipped() {
    let server = Server::start(interim_handler);
    let run = run_loadlab("interim", &server.url("/i"), &["--rate", "50/s"], "1s");
    assert_eq!(run.code(), 0, "{}", run.describe());
    assert!(run.total() >= 30, "{}", run.describe());
    assert_eq!(
        run.u("/status_codes/200"),
        run.total(),
        "{}",
        run.describe()
    );
    assert_bounded(&run, Duration::from_secs(5));
}

#[test]
fn endless_interim_responses_are_protocol_errors() {
    let server = Server::start(endless_interim_handler);
    let run = run_loadlab("endless_1xx", &server.url("/e"), &["--rate", "20/s"], "2s");
    assert_every_request_failed_as(&run, "protocol");
    assert_bounded(&run, Duration::from_secs(5));
}

#[test]
fn unasked_101_switching_protocols_is_a_protocol_error() {
    let server = Server::start(switching_protocols_handler);
    let run = run_loadlab("switch", &server.url("/ws"), &["--rate", "20/s"], "1s");
    assert_every_request_failed_as(&run, "protocol");
}

#[test]
fn a_chunked_response_with_trailers_split_into_single_bytes_is_ok() {
    let server = Server::start(byte_by_byte_handler);
    let run = run_loadlab("byte_by_byte", &server.url("/b"), &["--vus", "2"], "2s");
    assert_eq!(run.code(), 0, "{}", run.describe());
    assert!(run.total() >= 4, "{}", run.describe());
    assert_eq!(run.ok(), run.total(), "{}", run.describe());
    // Keep-alive survived the splits: one connection per VU.
    assert!(
        server.conns_with_request() <= 2,
        "{}",
        server.conns_with_request()
    );
    assert_bounded(&run, Duration::from_secs(5));
}

#[test]
fn pipelined_garbage_is_never_read_as_the_next_response() {
    let server = Server::start(pipelined_garbage_handler);
    let run = run_loadlab("pipelined", &server.url("/p"), &["--rate", "200/s"], "1s");
    assert_eq!(run.code(), 0, "{}", run.describe());
    assert!(run.total() > 5, "{}", run.describe());
    assert_eq!(
        run.u("/status_codes/200"),
        run.total(),
        "{}",
        run.describe()
    );
    assert_eq!(run.u("/status_codes/500"), 0, "{}", run.describe());
    // Each connection that carried unasked bytes was dropped, not reused.
    assert_eq!(
        server.requests(),
        server.conns_with_request(),
        "{}",
        run.describe()
    );
}

#[test]
fn slowloris_head_times_out_in_bounded_time_and_memory() {
    let server = Server::start(slowloris_handler);
    let run = run_loadlab("slowloris", &server.url("/slow"), &["--vus", "2"], "300ms");
    assert_every_request_failed_as(&run, "timeout");
    assert_bounded(&run, Duration::from_secs(4));
}

#[test]
fn resets_at_every_stage_are_resets() {
    type Handler = fn(&mut Conn);
    let stages: [(&str, Handler); 3] = [
        ("mid_head", mid_head_rst_handler),
        ("mid_body", mid_body_close_handler),
        ("mid_chunk", mid_chunk_rst_handler),
    ];
    for (stage, handler) in stages {
        let server = Server::start(handler);
        let run = run_loadlab(
            &format!("reset_{stage}"),
            &server.url("/r"),
            &["--rate", "30/s"],
            "1s",
        );
        assert_every_request_failed_as(&run, "reset");
        assert_bounded(&run, Duration::from_secs(5));
    }
}

#[test]
fn conflicting_content_lengths_are_protocol_errors() {
    let server = Server::start(conflicting_length_handler);
    let run = run_loadlab(
        "conflicting_cl",
        &server.url("/c"),
        &["--rate", "20/s"],
        "1s",
    );
    assert_every_request_failed_as(&run, "protocol");
}

#[test]
fn megabytes_of_chunk_extension_and_trailers_cost_no_memory() {
    let server = Server::start(huge_extension_and_trailers_handler);
    let run = run_loadlab("huge_ext", &server.url("/x"), &["--vus", "1"], "5s");
    assert_eq!(run.code(), 0, "{}", run.describe());
    assert!(run.total() >= 1, "{}", run.describe());
    assert_eq!(run.ok(), run.total(), "{}", run.describe());
    assert_bounded(&run, Duration::from_secs(8));
}
