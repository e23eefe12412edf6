//! What each fault server does with a connection.

use super::server::*;
use std::sync::atomic::Ordering;
use std::time::Duration;

pub const OK_2: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";

/// Reads the request, then closes without writing a byte.
pub fn reset_handler(c: &mut Conn) {
    c.read_request();
}

/// Reads the request, then aborts the connection with a real RST.
pub fn rst_handler(c: &mut Conn) {
    if c.read_request() {
        set_linger_zero(c);
    }
}

/// SO_LINGER 0: closing the socket sends RST instead of FIN. `libc` is a dependency of the
/// package, so integration tests may use it.
pub fn set_linger_zero(c: &Conn) {
    use std::os::fd::AsRawFd;
    let linger = libc::linger {
        l_onoff: 1,
        l_linger: 0,
    };
    // SAFETY: setsockopt reads `linger` for the given length on a socket we own.
    let rc = unsafe {
        libc::setsockopt(
            c.stream.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_LINGER,
            &linger as *const libc::linger as *const libc::c_void,
            std::mem::size_of::<libc::linger>() as libc::socklen_t,
        )
    };
    assert_eq!(rc, 0, "setsockopt(SO_LINGER)");
}

/// Answers every request with `response`.
pub fn serve(c: &mut Conn, response: &[u8]) {
    while c.read_request() {
        if !c.respond(response) {
            return;
        }
    }
}

pub fn ok_handler(c: &mut Conn) {
    serve(c, OK_2);
}

/// Accepts, reads the request and never answers.
pub fn stall_handler(c: &mut Conn) {
    c.read_request();
    c.sleep_until_stopped();
}

pub fn garbage_handler(c: &mut Conn) {
    serve(c, b"garbage\r\n\r\n");
}

pub fn slow_body_handler(c: &mut Conn) {
    while c.read_request() {
        if !c.write(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n") {
            return;
        }
        for b in b"0123456789" {
            std::thread::sleep(Duration::from_millis(20));
            if !c.write(&[*b]) {
                return;
            }
        }
        c.stats.responses.fetch_add(1, Ordering::SeqCst);
    }
}

pub fn chunked_handler(c: &mut Conn) {
    let parts: [&[u8]; 5] = [
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: text/plain\r\n\r\n5\r\nhel",
        b"lo\r\n7;ext=1\r\n wor",
        b"ld!\r\n10\r\n0123456789abcdef\r",
        b"\n0\r\nX-Trailer: yes\r",
        b"\n\r\n",
    ];
    while c.read_request() {
        for (i, p) in parts.iter().enumerate() {
            if i > 0 {
                std::thread::sleep(Duration::from_millis(2));
            }
            if !c.write(p) {
                return;
            }
        }
        c.stats.responses.fetch_add(1, Ordering::SeqCst);
    }
}

pub fn close_handler(c: &mut Conn) {
    if c.read_request() {
        c.respond(b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok");
    }
}

/// Keep-alive without saying anything, but closes the connection right after every 3rd response.
pub fn stale_handler(c: &mut Conn) {
    for _ in 0..3 {
        if !c.read_request() || !c.respond(OK_2) {
            return;
        }
    }
}

pub fn huge_length_handler(c: &mut Conn) {
    serve(c, b"HTTP/1.1 200 OK\r\nContent-Length: 100000000\r\n\r\n");
}

pub fn status_503_handler(c: &mut Conn) {
    serve(
        c,
        b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 4\r\nRetry-After: 1\r\n\r\nbusy",
    );
}

pub fn status_404_handler(c: &mut Conn) {
    serve(
        c,
        b"HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\n\r\nnot found",
    );
}

/// A response head that never ends and grows past 64 KiB.
pub fn huge_head_handler(c: &mut Conn) {
    if !c.read_request() {
        return;
    }
    let mut head = b"HTTP/1.1 200 OK\r\nX-Filler: ".to_vec();
    head.extend(std::iter::repeat_n(b'a', 80 * 1024));
    if c.write(&head) {
        c.sleep_until_stopped();
    }
}

/// HTTP/1.0 style: no length, the body ends when the server closes.
pub fn until_close_handler(c: &mut Conn) {
    if c.read_request() && c.write(b"HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nhello ") {
        std::thread::sleep(Duration::from_millis(5));
        if c.write(b"world") {
            c.stats.responses.fetch_add(1, Ordering::SeqCst);
        }
    }
}
