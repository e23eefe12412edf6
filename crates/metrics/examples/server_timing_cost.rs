//! What reading the server's time costs per response, measured where the HTTP client pays
//! it: the loop over the response headers it already parses for Content-Length and
//! Connection, with and without the `Server-Timing` check (and with `X-Response-Time`).
//! Prints nanoseconds per response (median of 7 rounds). `bash bench/resources.sh` runs it.

use loadlab_metrics::{parse_duration_header, server_timing_micros};
use std::hint::black_box;
use std::time::Instant;

/// A response header as the parser hands it over.
type Header<'a> = (&'a str, &'a [u8]);

const HEADERS: [Header; 7] = [
    ("Server", b"nginx/1.22.1"),
    ("Date", b"Mon, 23 Nov 2026 12:00:00 GMT"),
    ("Content-Type", b"application/json"),
    ("Content-Length", b"13"),
    ("Connection", b"keep-alive"),
    ("Server-Timing", b"db;dur=3.2, app;dur=12.345"),
    ("X-Response-Time", b"12.345ms"),
];

/// The client's header loop: framing and connection headers, plus the server's time when
/// `server` says which header carries it (0: none, 1: Server-Timing, 2: X-Response-Time).
#[inline(always)]
fn walk(headers: &[Header], server: u8) -> u64 {
    let mut acc = 0u64;
    for (name, value) in headers {
        if server == 1 && name.eq_ignore_ascii_case("server-timing") {
            acc += server_timing_micros(value).unwrap_or(0);
        } else if server == 2 && name.eq_ignore_ascii_case("x-response-time") {
            acc += parse_duration_header(value).map_or(0, |d| d.as_micros() as u64);
        } else if name.eq_ignore_ascii_case("content-length") {
            acc += value.len() as u64;
        } else if name.eq_ignore_ascii_case("transfer-encoding") {
            acc += 1;
        } else if name.eq_ignore_ascii_case("connection") {
            acc += 2;
        }
    }
    acc
}

fn framing(headers: &[Header]) -> u64 {
    walk(headers, 0)
}

fn with_server_timing(headers: &[Header]) -> u64 {
    walk(headers, 1)
}

fn with_named(headers: &[Header]) -> u64 {
    walk(headers, 2)
}

fn ns_per_call(f: fn(&[Header]) -> u64, headers: &[Header]) -> f64 {
    const N: u32 = 2_000_000;
    let mut rounds: Vec<f64> = (0..7)
        .map(|_| {
            let t = Instant::now();
            let mut acc = 0u64;
            for _ in 0..N {
                acc = acc.wrapping_add(f(black_box(headers)));
            }
            black_box(acc);
            t.elapsed().as_nanos() as f64 / f64::from(N)
        })
        .collect();
    rounds.sort_by(f64::total_cmp);
    rounds[3]
}

fn main() {
    let base = ns_per_call(framing, &HEADERS);
    let st = ns_per_call(with_server_timing, &HEADERS);
    let named = ns_per_call(with_named, &HEADERS);
    let absent = ns_per_call(with_server_timing, &HEADERS[..5]);
    let absent_base = ns_per_call(framing, &HEADERS[..5]);
    println!("per response, {} headers:", HEADERS.len());
    println!("  framing only                 {base:7.1} ns");
    println!(
        "  + Server-Timing (present)    {st:7.1} ns  (+{:.1} ns)",
        st - base
    );
    println!(
        "  + X-Response-Time (present)  {named:7.1} ns  (+{:.1} ns)",
        named - base
    );
    println!(
        "  + Server-Timing (absent)     {absent:7.1} ns  (+{:.1} ns, 5 headers)",
        absent - absent_base
    );
}
