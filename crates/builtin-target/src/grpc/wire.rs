//! The gRPC wire details shared by every method: the status codes, the 5-byte
//! length-prefixed message framing, the `grpc-timeout` header and the percent-encoding of
//! `grpc-message` (https://github.com/grpc/grpc/blob/master/doc/PROTOCOL-HTTP2.md).

use std::time::Duration;

use bytes::{Buf, BufMut, Bytes, BytesMut};

/// The status codes are the recorder's own (`loadlab_metrics::GrpcCode`): the codes the
/// target answers with and those the generator counts are one enum, named as the spec names them.
pub use loadlab_metrics::GrpcCode as Code;

/// A call's end: its code and, unless OK, a message for the client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Status {
    pub code: Code,
    pub message: String,
}

impl Status {
    pub fn ok() -> Self {
        Status {
            code: Code::Ok,
            message: String::new(),
        }
    }

    pub fn new(code: Code, message: impl Into<String>) -> Self {
        Status {
            code,
            message: message.into(),
        }
    }
}

/// Why a request body is not a sequence of gRPC messages.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    #[error("a message is marked compressed, and the target accepts no grpc-encoding")]
    Compressed,
    #[error("a message prefix flag is {0}, not 0 or 1")]
    BadFlag(u8),
    #[error("a message of {0} bytes is larger than the 1 MiB the target accepts")]
    TooLarge(usize),
    #[error("the body ends inside a message ({0} bytes left over)")]
    Truncated(usize),
}

impl From<FrameError> for Status {
    /// A message too large is RESOURCE_EXHAUSTED (as gRPC servers answer); any other framing
    /// error is INTERNAL.
    fn from(e: FrameError) -> Status {
        let code = match e {
            FrameError::TooLarge(_) => Code::ResourceExhausted,
            _ => Code::Internal,
        };
        Status::new(code, e.to_string())
    }
}

/// Largest message the target accepts.
pub const MAX_MESSAGE: usize = 1024 * 1024;

/// Takes every complete message off the front of `buf` (the rest stays for more bytes).
pub fn split_messages(buf: &mut BytesMut) -> Result<Vec<Bytes>, FrameError> {
    let mut out = Vec::new();
    while buf.len() >= 5 {
        match buf[0] {
            0 => {}
            1 => return Err(FrameError::Compressed),
            flag => return Err(FrameError::BadFlag(flag)),
        }
        let len = u32::from_be_bytes([buf[1], buf[2], buf[3], buf[4]]) as usize;
        if len > MAX_MESSAGE {
            return Err(FrameError::TooLarge(len));
        }
        if buf.len() < 5 + len {
            break;
        }
        buf.advance(5);
        out.push(buf.split_to(len).freeze());
    }
    Ok(out)
}

/// Every message of a whole body; bytes left over are an error.
pub fn decode_all(body: &[u8]) -> Result<Vec<Bytes>, FrameError> {
    let mut buf = BytesMut::from(body);
    let messages = split_messages(&mut buf)?;
    if buf.is_empty() {
        Ok(messages)
    } else {
        Err(FrameError::Truncated(buf.len()))
    }
}

/// One message with its uncompressed 5-byte prefix.
pub fn frame(message: &impl prost::Message) -> Bytes {
    let len = message.encoded_len();
    let mut buf = BytesMut::with_capacity(5 + len);
    buf.put_u8(0);
    buf.put_u32(len as u32);
    // Encoding into a buffer with room for the message cannot fail.
    let _ = message.encode(&mut buf);
    buf.freeze()
}

/// `grpc-timeout`: 1 to 8 digits and a unit (H, M, S, m, u, n); `None` when malformed.
pub fn parse_timeout(value: &[u8]) -> Option<Duration> {
    let (unit, digits) = value.split_last()?;
    if digits.is_empty() || digits.len() > 8 || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let n: u64 = std::str::from_utf8(digits).ok()?.parse().ok()?;
    Some(match unit {
        b'H' => Duration::from_secs(n * 3600),
        b'M' => Duration::from_secs(n * 60),
        b'S' => Duration::from_secs(n),
        b'm' => Duration::from_millis(n),
        b'u' => Duration::from_micros(n),
        b'n' => Duration::from_nanos(n),
        _ => return None,
    })
}

/// `grpc-message` is percent-encoded: bytes outside printable ASCII, and `%`, become `%XX`.
pub fn percent_encode(message: &str) -> String {
    use std::fmt::Write as _;
    let mut out = String::with_capacity(message.len());
    for b in message.bytes() {
        if (0x20..=0x7e).contains(&b) && b != b'%' {
            out.push(b as char);
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeouts() {
        for (text, want) in [
            (&b"100m"[..], Some(Duration::from_millis(100))),
            (b"2S", Some(Duration::from_secs(2))),
            (b"1H", Some(Duration::from_secs(3600))),
            (b"3M", Some(Duration::from_secs(180))),
            (b"250u", Some(Duration::from_micros(250))),
            (b"99999999n", Some(Duration::from_nanos(99_999_999))),
            (b"123456789m", None),
            (b"m", None),
            (b"", None),
            (b"10x", None),
            (b"-1S", None),
        ] {
            assert_eq!(
                parse_timeout(text),
                want,
                "{:?}",
                String::from_utf8_lossy(text)
            );
        }
    }

    #[test]
    fn framing_round_trip_and_errors() {
        let mut body = BytesMut::new();
        body.extend_from_slice(&[0, 0, 0, 0, 2, b'h', b'i', 0, 0, 0, 0, 0]);
        assert_eq!(
            decode_all(&body).unwrap(),
            vec![Bytes::from_static(b"hi"), Bytes::new()]
        );
        assert_eq!(
            decode_all(&[0, 0, 0, 0, 3, b'a']),
            Err(FrameError::Truncated(6))
        );
        assert_eq!(decode_all(&[0, 0, 0]), Err(FrameError::Truncated(3)));
        assert_eq!(decode_all(&[1, 0, 0, 0, 0]), Err(FrameError::Compressed));
        assert_eq!(decode_all(&[7, 0, 0, 0, 0]), Err(FrameError::BadFlag(7)));
        assert_eq!(
            decode_all(&[0, 0x10, 0, 0, 0]),
            Err(FrameError::TooLarge(0x1000_0000))
        );
        // Partial messages stay in the buffer for the next read.
        let mut buf = BytesMut::from(&[0, 0, 0, 0, 1, b'x', 0, 0][..]);
        assert_eq!(
            split_messages(&mut buf).unwrap(),
            vec![Bytes::from_static(b"x")]
        );
        assert_eq!(&buf[..], &[0, 0]);
        let framed = frame(&"ab".to_string());
        assert_eq!(&framed[..], &[0, 0, 0, 0, 4, 10, 2, b'a', b'b']);
    }

    #[test]
    fn framing_errors_become_statuses() {
        for (e, code) in [
            (FrameError::TooLarge(1 << 21), Code::ResourceExhausted),
            (FrameError::Compressed, Code::Internal),
            (FrameError::BadFlag(2), Code::Internal),
            (FrameError::Truncated(1), Code::Internal),
        ] {
            assert_eq!(Status::from(e).code, code);
        }
    }

    #[test]
    fn grpc_message_is_percent_encoded() {
        assert_eq!(percent_encode("plain text"), "plain text");
        assert_eq!(percent_encode("100% é\n"), "100%25 %C3%A9%0A");
    }
}
