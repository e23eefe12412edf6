//! Building JSON responses in one place, so every endpoint answers with the same headers
//! and error shape (`{"error": "..."}`).

use std::convert::Infallible;

use bytes::Bytes;
use futures_util::stream::BoxStream;
use http_body_util::{Either, Full, StreamBody};
use hyper::body::Frame;
use hyper::header::{HeaderValue, ALLOW, CONTENT_TYPE};
use hyper::{Response, StatusCode};
use serde::Serialize;

/// The response type of every endpoint that answers with one buffer.
pub type Resp = Response<Full<Bytes>>;

/// A body sent as it is made: a gRPC call's messages then trailers, a stream of events.
pub type StreamedBody = StreamBody<BoxStream<'static, Result<Frame<Bytes>, Infallible>>>;

/// The body of any response the server sends: one buffer, or streamed.
pub type Body = Either<Full<Bytes>, StreamedBody>;

const JSON: HeaderValue = HeaderValue::from_static("application/json");

/// A response with a ready-made JSON body.
pub fn raw_json(status: StatusCode, body: impl Into<Bytes>) -> Resp {
    let mut resp = Response::new(Full::new(body.into()));
    *resp.status_mut() = status;
    resp.headers_mut().insert(CONTENT_TYPE, JSON);
    resp
}

/// A response serializing `value`.
pub fn json<T: Serialize + ?Sized>(status: StatusCode, value: &T) -> Resp {
    match serde_json::to_vec(value) {
        Ok(body) => raw_json(status, body),
        Err(_) => error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "cannot serialize response",
        ),
    }
}

/// `{"error": message}` with the given status.
pub fn error(status: StatusCode, message: &str) -> Resp {
    let body = serde_json::json!({ "error": message }).to_string();
    raw_json(status, body)
}

/// The Prometheus text exposition (format 0.0.4).
pub fn prometheus_text(body: String) -> Resp {
    const TEXT: HeaderValue = HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8");
    let mut resp = Response::new(Full::new(Bytes::from(body)));
    resp.headers_mut().insert(CONTENT_TYPE, TEXT);
    resp
}

/// `Server-Timing: app;dur=1.234` (W3C Server Timing; milliseconds, microsecond precision),
/// formatted without going through `fmt`.
pub fn server_timing_app(spent: std::time::Duration) -> HeaderValue {
    let micros = spent.as_micros().min(u128::from(u64::MAX)) as u64;
    let mut buf = [0u8; 40];
    buf[..8].copy_from_slice(b"app;dur=");
    let mut len = 8 + write_u64(micros / 1000, &mut buf[8..]);
    let frac = micros % 1000;
    buf[len] = b'.';
    buf[len + 1] = b'0' + (frac / 100) as u8;
    buf[len + 2] = b'0' + (frac / 10 % 10) as u8;
    buf[len + 3] = b'0' + (frac % 10) as u8;
    len += 4;
    HeaderValue::from_bytes(&buf[..len]).unwrap_or(HeaderValue::from_static("app"))
}

/// Writes the decimal digits of `n` at the start of `out`; returns how many.
fn write_u64(mut n: u64, out: &mut [u8]) -> usize {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    let len = digits.len() - i;
    out[..len].copy_from_slice(&digits[i..]);
    len
}

/// 405 with the `Allow` header naming the method that works.
pub fn method_not_allowed(allow: &'static str) -> Resp {
    let mut resp = error(
        StatusCode::METHOD_NOT_ALLOWED,
        "method not allowed for this endpoint",
    );
    resp.headers_mut()
        .insert(ALLOW, HeaderValue::from_static(allow));
    resp
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn server_timing_values() {
        for (spent, text) in [
            (Duration::from_micros(12_345), "app;dur=12.345"),
            (Duration::from_nanos(999), "app;dur=0.000"),
            (Duration::from_micros(7), "app;dur=0.007"),
            (Duration::from_secs(3600), "app;dur=3600000.000"),
        ] {
            assert_eq!(server_timing_app(spent).to_str().unwrap(), text);
        }
    }
}
