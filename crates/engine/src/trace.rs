//! W3C Trace Context for `defaults.trace: true`: a `traceparent` header
//! (`00-<trace id>-<span id>-01`, sampled) inserted after the request line of a request
//! already built, so the target's tracing records the request under an id loadlab keeps for
//! the slowest requests of each step.

/// `traceparent: 00-` + 32 hex + `-` + 16 hex + `-01\r\n`.
const HEADER_LEN: usize = 16 + 32 + 1 + 16 + 5;

fn hex(out: &mut [u8], mut v: u128) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    for b in out.iter_mut().rev() {
        *b = DIGITS[(v & 0xf) as usize];
        v >>= 4;
    }
}

/// Inserts the header after the request line of `request` (which must have one).
pub fn insert_traceparent(request: &mut Vec<u8>, trace: u128, span: u64) {
    let mut header = [0u8; HEADER_LEN];
    header[..16].copy_from_slice(b"traceparent: 00-");
    hex(&mut header[16..48], trace);
    header[48] = b'-';
    hex(&mut header[49..65], u128::from(span));
    header[65..].copy_from_slice(b"-01\r\n");
    let at = request
        .windows(2)
        .position(|w| w == b"\r\n")
        .map_or(request.len(), |i| i + 2);
    request.splice(at..at, header);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_header_follows_the_request_line() {
        let mut req = b"GET /a HTTP/1.1\r\nHost: x\r\n\r\n".to_vec();
        insert_traceparent(
            &mut req,
            0x4bf92f3577b34da6a3ce929d0e0e4736,
            0x00f067aa0ba902b7,
        );
        assert_eq!(
            String::from_utf8(req).unwrap(),
            "GET /a HTTP/1.1\r\ntraceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\r\nHost: x\r\n\r\n"
        );
    }
}
