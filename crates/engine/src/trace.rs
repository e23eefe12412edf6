//! W3C Trace Context for `defaults.trace: true`: a `traceparent` header
//! (`00-<trace id>-<span id>-01`, sampled) added to a rendered request, so the target's
//! tracing records the request under an id loadlab keeps for the slowest requests of each step.

use crate::request::RequestParts;

/// `00-` + 32 hex + `-` + 16 hex + `-01`.
const VALUE_LEN: usize = 3 + 32 + 1 + 16 + 3;

fn hex(out: &mut [u8], mut v: u128) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    for b in out.iter_mut().rev() {
        *b = DIGITS[(v & 0xf) as usize];
        v >>= 4;
    }
}

/// The header's value for a trace and span id.
fn traceparent(trace: u128, span: u64) -> [u8; VALUE_LEN] {
    let mut value = [0u8; VALUE_LEN];
    value[..3].copy_from_slice(b"00-");
    hex(&mut value[3..35], trace);
    value[35] = b'-';
    hex(&mut value[36..52], u128::from(span));
    value[52..].copy_from_slice(b"-01");
    value
}

/// Adds the `traceparent` header field to `request`.
pub fn add_traceparent(request: &mut RequestParts, trace: u128, span: u64) {
    let value = traceparent(trace, span);
    let ok: Result<(), std::convert::Infallible> = Ok(());
    let _ = request.write_header(b"traceparent", |b| {
        b.extend_from_slice(&value);
        ok
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_header_carries_both_ids_in_lowercase_hex() {
        let mut req = RequestParts::default();
        add_traceparent(
            &mut req,
            0x4bf92f3577b34da6a3ce929d0e0e4736,
            0x00f067aa0ba902b7,
        );
        assert_eq!(
            req.header("traceparent"),
            Some(&b"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"[..])
        );
    }
}
