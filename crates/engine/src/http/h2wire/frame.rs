//! HTTP/2 frames (RFC 9113 §4, §6) read from and written to plain byte buffers, so the
//! connection can parse every complete frame of one read and encode a whole batch of
//! requests into one write without any per-frame allocation.

/// What a client sends first (RFC 9113 §3.4).
pub const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
/// The frame header's length.
pub const HEADER_LEN: usize = 9;
/// The largest frame payload a peer may send before SETTINGS_MAX_FRAME_SIZE says otherwise.
pub const DEFAULT_MAX_FRAME_SIZE: u32 = 16_384;
/// The largest window (RFC 9113 §6.9.1).
pub const MAX_WINDOW: i64 = (1 << 31) - 1;

pub mod kind {
    pub const DATA: u8 = 0x0;
    pub const HEADERS: u8 = 0x1;
    pub const PRIORITY: u8 = 0x2;
    pub const RST_STREAM: u8 = 0x3;
    pub const SETTINGS: u8 = 0x4;
    pub const PUSH_PROMISE: u8 = 0x5;
    pub const PING: u8 = 0x6;
    pub const GOAWAY: u8 = 0x7;
    pub const WINDOW_UPDATE: u8 = 0x8;
    pub const CONTINUATION: u8 = 0x9;
}

pub mod flag {
    pub const END_STREAM: u8 = 0x1;
    pub const ACK: u8 = 0x1;
    pub const END_HEADERS: u8 = 0x4;
    pub const PADDED: u8 = 0x8;
    pub const PRIORITY: u8 = 0x20;
}

pub mod setting {
    pub const HEADER_TABLE_SIZE: u16 = 0x1;
    pub const ENABLE_PUSH: u16 = 0x2;
    pub const MAX_CONCURRENT_STREAMS: u16 = 0x3;
    pub const INITIAL_WINDOW_SIZE: u16 = 0x4;
    pub const MAX_FRAME_SIZE: u16 = 0x5;
    pub const MAX_HEADER_LIST_SIZE: u16 = 0x6;
}

/// Error codes (RFC 9113 §7).
pub mod code {
    pub const NO_ERROR: u32 = 0x0;
    pub const PROTOCOL_ERROR: u32 = 0x1;
    pub const INTERNAL_ERROR: u32 = 0x2;
    pub const FLOW_CONTROL_ERROR: u32 = 0x3;
    pub const STREAM_CLOSED: u32 = 0x5;
    pub const FRAME_SIZE_ERROR: u32 = 0x6;
    pub const REFUSED_STREAM: u32 = 0x7;
    pub const CANCEL: u32 = 0x8;
    pub const COMPRESSION_ERROR: u32 = 0x9;
}

/// A frame the peer sent, borrowing its payload from the read buffer.
#[derive(Debug, PartialEq, Eq)]
pub enum Frame<'a> {
    /// `flow_len` is the whole payload, padding included: it is what flow control counts.
    Data {
        stream: u32,
        data: &'a [u8],
        end_stream: bool,
        flow_len: u32,
    },
    Headers {
        stream: u32,
        fragment: &'a [u8],
        end_stream: bool,
        end_headers: bool,
    },
    Continuation {
        stream: u32,
        fragment: &'a [u8],
        end_headers: bool,
    },
    /// `params` are whole 6-byte entries; read them with [`settings`].
    Settings {
        ack: bool,
        params: &'a [u8],
    },
    Ping {
        ack: bool,
        data: [u8; 8],
    },
    GoAway {
        last_stream: u32,
        code: u32,
        debug: &'a [u8],
    },
    RstStream {
        stream: u32,
        code: u32,
    },
    /// An increment of 0 is left to the connection to judge (a stream or connection error).
    WindowUpdate {
        stream: u32,
        increment: u32,
    },
    Priority {
        stream: u32,
    },
    PushPromise {
        stream: u32,
    },
    /// Unknown frame types are ignored (RFC 9113 §4.1); kept so CONTINUATION rules see them.
    Unknown {
        kind: u8,
        stream: u32,
    },
}

/// A frame that breaks RFC 9113: a connection error with this code.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{what} (error code {code:#x})")]
pub struct FrameError {
    pub code: u32,
    pub what: &'static str,
}

fn err(code: u32, what: &'static str) -> FrameError {
    FrameError { code, what }
}

fn u32_at(b: &[u8]) -> u32 {
    u32::from_be_bytes([b[0], b[1], b[2], b[3]])
}

/// Strips the padding of a PADDED DATA or HEADERS payload.
fn unpad(payload: &[u8], flags: u8) -> Result<(&[u8], usize), FrameError> {
    if flags & flag::PADDED == 0 {
        return Ok((payload, 0));
    }
    let Some((&pad, rest)) = payload.split_first() else {
        return Err(err(
            code::FRAME_SIZE_ERROR,
            "a PADDED frame without its pad length",
        ));
    };
    let pad = pad as usize;
    if pad > rest.len() {
        return Err(err(code::PROTOCOL_ERROR, "padding longer than the frame"));
    }
    Ok((&rest[..rest.len() - pad], 1))
}

/// Parses the frame at the start of `buf`: `Ok(None)` when `buf` does not hold it whole
/// yet, otherwise the frame and how many bytes it took.
pub fn parse(buf: &[u8], max_frame_size: u32) -> Result<Option<(Frame<'_>, usize)>, FrameError> {
    if buf.len() < HEADER_LEN {
        return Ok(None);
    }
    let len = (buf[0] as usize) << 16 | (buf[1] as usize) << 8 | buf[2] as usize;
    if len > max_frame_size as usize {
        return Err(err(
            code::FRAME_SIZE_ERROR,
            "a frame larger than SETTINGS_MAX_FRAME_SIZE",
        ));
    }
    if buf.len() < HEADER_LEN + len {
        return Ok(None);
    }
    let (kind, flags) = (buf[3], buf[4]);
    let stream = u32_at(&buf[5..9]) & 0x7fff_ffff;
    let p = &buf[HEADER_LEN..HEADER_LEN + len];
    let frame = match kind {
        kind::DATA
        | kind::HEADERS
        | kind::CONTINUATION
        | kind::PRIORITY
        | kind::RST_STREAM
        | kind::PUSH_PROMISE => stream_frame(kind, flags, stream, p)?,
        kind::SETTINGS | kind::PING | kind::GOAWAY => connection_frame(kind, flags, stream, p)?,
        kind::WINDOW_UPDATE => {
            if len != 4 {
                return Err(err(code::FRAME_SIZE_ERROR, "WINDOW_UPDATE is not 4 bytes"));
            }
            Frame::WindowUpdate {
                stream,
                increment: u32_at(p) & 0x7fff_ffff,
            }
        }
        kind => Frame::Unknown { kind, stream },
    };
    Ok(Some((frame, HEADER_LEN + len)))
}

fn need_stream(stream: u32, what: &'static str) -> Result<(), FrameError> {
    if stream == 0 {
        return Err(err(code::PROTOCOL_ERROR, what));
    }
    Ok(())
}

fn no_stream(stream: u32, what: &'static str) -> Result<(), FrameError> {
    if stream != 0 {
        return Err(err(code::PROTOCOL_ERROR, what));
    }
    Ok(())
}

/// A frame of one stream (its id is never 0): DATA, HEADERS, CONTINUATION, PRIORITY,
/// RST_STREAM, PUSH_PROMISE.
fn stream_frame(kind: u8, flags: u8, stream: u32, p: &[u8]) -> Result<Frame<'_>, FrameError> {
    let len = p.len();
    Ok(match kind {
        kind::DATA => {
            need_stream(stream, "DATA on stream 0")?;
            let (data, _) = unpad(p, flags)?;
            Frame::Data {
                stream,
                data,
                end_stream: flags & flag::END_STREAM != 0,
                flow_len: len as u32,
            }
        }
        kind::HEADERS => {
            need_stream(stream, "HEADERS on stream 0")?;
            let (mut fragment, _) = unpad(p, flags)?;
            if flags & flag::PRIORITY != 0 {
                if fragment.len() < 5 {
                    return Err(err(
                        code::FRAME_SIZE_ERROR,
                        "HEADERS too short for its priority",
                    ));
                }
                fragment = &fragment[5..];
            }
            Frame::Headers {
                stream,
                fragment,
                end_stream: flags & flag::END_STREAM != 0,
                end_headers: flags & flag::END_HEADERS != 0,
            }
        }
        kind::CONTINUATION => {
            need_stream(stream, "CONTINUATION on stream 0")?;
            Frame::Continuation {
                stream,
                fragment: p,
                end_headers: flags & flag::END_HEADERS != 0,
            }
        }
        kind::PRIORITY => {
            need_stream(stream, "PRIORITY on stream 0")?;
            if len != 5 {
                return Err(err(code::FRAME_SIZE_ERROR, "PRIORITY is not 5 bytes"));
            }
            Frame::Priority { stream }
        }
        kind::RST_STREAM => {
            need_stream(stream, "RST_STREAM on stream 0")?;
            if len != 4 {
                return Err(err(code::FRAME_SIZE_ERROR, "RST_STREAM is not 4 bytes"));
            }
            Frame::RstStream {
                stream,
                code: u32_at(p),
            }
        }
        kind::PUSH_PROMISE => {
            need_stream(stream, "PUSH_PROMISE on stream 0")?;
            Frame::PushPromise { stream }
        }
        // `parse` sends only the kinds above here.
        kind => Frame::Unknown { kind, stream },
    })
}

/// A frame of the connection (stream 0): SETTINGS, PING, GOAWAY.
fn connection_frame(kind: u8, flags: u8, stream: u32, p: &[u8]) -> Result<Frame<'_>, FrameError> {
    let len = p.len();
    Ok(match kind {
        kind::SETTINGS => {
            no_stream(stream, "SETTINGS on a stream")?;
            let ack = flags & flag::ACK != 0;
            if ack && len != 0 {
                return Err(err(code::FRAME_SIZE_ERROR, "a SETTINGS ACK with a payload"));
            }
            if !len.is_multiple_of(6) {
                return Err(err(
                    code::FRAME_SIZE_ERROR,
                    "SETTINGS not a multiple of 6 bytes",
                ));
            }
            Frame::Settings { ack, params: p }
        }
        kind::PING => {
            no_stream(stream, "PING on a stream")?;
            if len != 8 {
                return Err(err(code::FRAME_SIZE_ERROR, "PING is not 8 bytes"));
            }
            let mut data = [0; 8];
            data.copy_from_slice(p);
            Frame::Ping {
                ack: flags & flag::ACK != 0,
                data,
            }
        }
        kind::GOAWAY => {
            no_stream(stream, "GOAWAY on a stream")?;
            if len < 8 {
                return Err(err(code::FRAME_SIZE_ERROR, "GOAWAY shorter than 8 bytes"));
            }
            Frame::GoAway {
                last_stream: u32_at(p) & 0x7fff_ffff,
                code: u32_at(&p[4..]),
                debug: &p[8..],
            }
        }
        // `parse` sends only the kinds above here.
        kind => Frame::Unknown { kind, stream },
    })
}

/// The (identifier, value) pairs of a SETTINGS payload.
pub fn settings(params: &[u8]) -> impl Iterator<Item = (u16, u32)> + '_ {
    params
        .chunks_exact(6)
        .map(|c| (u16::from_be_bytes([c[0], c[1]]), u32_at(&c[2..])))
}

/// Appends a frame header.
pub fn head(out: &mut Vec<u8>, len: usize, kind: u8, flags: u8, stream: u32) {
    let l = (len as u32).to_be_bytes();
    out.extend_from_slice(&[l[1], l[2], l[3], kind, flags]);
    out.extend_from_slice(&(stream & 0x7fff_ffff).to_be_bytes());
}

pub fn put_settings(out: &mut Vec<u8>, params: &[(u16, u32)]) {
    head(out, params.len() * 6, kind::SETTINGS, 0, 0);
    for (id, value) in params {
        out.extend_from_slice(&id.to_be_bytes());
        out.extend_from_slice(&value.to_be_bytes());
    }
}

pub fn put_settings_ack(out: &mut Vec<u8>) {
    head(out, 0, kind::SETTINGS, flag::ACK, 0);
}

pub fn put_ping(out: &mut Vec<u8>, ack: bool, data: [u8; 8]) {
    head(out, 8, kind::PING, if ack { flag::ACK } else { 0 }, 0);
    out.extend_from_slice(&data);
}

pub fn put_window_update(out: &mut Vec<u8>, stream: u32, increment: u32) {
    head(out, 4, kind::WINDOW_UPDATE, 0, stream);
    out.extend_from_slice(&increment.to_be_bytes());
}

pub fn put_rst_stream(out: &mut Vec<u8>, stream: u32, code: u32) {
    head(out, 4, kind::RST_STREAM, 0, stream);
    out.extend_from_slice(&code.to_be_bytes());
}

pub fn put_goaway(out: &mut Vec<u8>, last_stream: u32, code: u32, debug: &[u8]) {
    head(out, 8 + debug.len(), kind::GOAWAY, 0, 0);
    out.extend_from_slice(&last_stream.to_be_bytes());
    out.extend_from_slice(&code.to_be_bytes());
    out.extend_from_slice(debug);
}

pub fn put_data(out: &mut Vec<u8>, stream: u32, data: &[u8], end_stream: bool) {
    let flags = if end_stream { flag::END_STREAM } else { 0 };
    head(out, data.len(), kind::DATA, flags, stream);
    out.extend_from_slice(data);
}

/// Appends a header block as HEADERS and, past `max_frame` bytes, CONTINUATION frames.
pub fn put_headers(
    out: &mut Vec<u8>,
    stream: u32,
    block: &[u8],
    end_stream: bool,
    max_frame: usize,
) {
    let mut chunks = block.chunks(max_frame.max(1));
    let first = chunks.next().unwrap_or(&[]);
    let mut rest = chunks.peekable();
    let mut flags = if end_stream { flag::END_STREAM } else { 0 };
    if rest.peek().is_none() {
        flags |= flag::END_HEADERS;
    }
    head(out, first.len(), kind::HEADERS, flags, stream);
    out.extend_from_slice(first);
    while let Some(chunk) = rest.next() {
        let flags = if rest.peek().is_none() {
            flag::END_HEADERS
        } else {
            0
        };
        head(out, chunk.len(), kind::CONTINUATION, flags, stream);
        out.extend_from_slice(chunk);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAX: u32 = DEFAULT_MAX_FRAME_SIZE;

    #[test]
    fn parses_frames_from_byte_literals() {
        let cases: &[(&[u8], Frame<'static>)] = &[
            (
                b"\x00\x00\x02\x00\x01\x00\x00\x00\x01hi",
                Frame::Data {
                    stream: 1,
                    data: b"hi",
                    end_stream: true,
                    flow_len: 2,
                },
            ),
            // PADDED: pad length 2, "hi", two pad bytes; flow control counts all 5.
            (
                b"\x00\x00\x05\x00\x08\x00\x00\x00\x03\x02hi\x00\x00",
                Frame::Data {
                    stream: 3,
                    data: b"hi",
                    end_stream: false,
                    flow_len: 5,
                },
            ),
            (
                b"\x00\x00\x01\x01\x05\x00\x00\x00\x01\x88",
                Frame::Headers {
                    stream: 1,
                    fragment: b"\x88",
                    end_stream: true,
                    end_headers: true,
                },
            ),
            // PADDED and PRIORITY: pad 1, 5 priority bytes, the block, 1 pad byte.
            (
                b"\x00\x00\x08\x01\x2c\x00\x00\x00\x01\x01\x00\x00\x00\x00\x10\x88\x00",
                Frame::Headers {
                    stream: 1,
                    fragment: b"\x88",
                    end_stream: false,
                    end_headers: true,
                },
            ),
            (
                b"\x00\x00\x01\x09\x04\x00\x00\x00\x01\x88",
                Frame::Continuation {
                    stream: 1,
                    fragment: b"\x88",
                    end_headers: true,
                },
            ),
            (
                b"\x00\x00\x06\x04\x00\x00\x00\x00\x00\x00\x03\x00\x00\x00\x0a",
                Frame::Settings {
                    ack: false,
                    params: b"\x00\x03\x00\x00\x00\x0a",
                },
            ),
            (
                b"\x00\x00\x00\x04\x01\x00\x00\x00\x00",
                Frame::Settings {
                    ack: true,
                    params: b"",
                },
            ),
            (
                b"\x00\x00\x08\x06\x00\x00\x00\x00\x00\x01\x02\x03\x04\x05\x06\x07\x08",
                Frame::Ping {
                    ack: false,
                    data: [1, 2, 3, 4, 5, 6, 7, 8],
                },
            ),
            (
                b"\x00\x00\x0a\x07\x00\x00\x00\x00\x00\x00\x00\x00\x05\x00\x00\x00\x00by",
                Frame::GoAway {
                    last_stream: 5,
                    code: 0,
                    debug: b"by",
                },
            ),
            (
                b"\x00\x00\x04\x03\x00\x00\x00\x00\x07\x00\x00\x00\x07",
                Frame::RstStream {
                    stream: 7,
                    code: code::REFUSED_STREAM,
                },
            ),
            (
                b"\x00\x00\x04\x08\x00\x00\x00\x00\x00\x00\x01\x00\x00",
                Frame::WindowUpdate {
                    stream: 0,
                    increment: 65_536,
                },
            ),
            (
                b"\x00\x00\x05\x02\x00\x00\x00\x00\x03\x00\x00\x00\x00\x10",
                Frame::Priority { stream: 3 },
            ),
            (
                b"\x00\x00\x04\x05\x04\x00\x00\x00\x01\x00\x00\x00\x02",
                Frame::PushPromise { stream: 1 },
            ),
            (
                b"\x00\x00\x00\xfa\x00\x00\x00\x00\x01",
                Frame::Unknown {
                    kind: 0xfa,
                    stream: 1,
                },
            ),
        ];
        for (bytes, want) in cases {
            let (frame, used) = parse(bytes, MAX).unwrap().unwrap();
            assert_eq!(&frame, want);
            assert_eq!(used, bytes.len());
            // Every strict prefix is "need more".
            for cut in 0..bytes.len() {
                assert_eq!(
                    parse(&bytes[..cut], MAX).unwrap(),
                    None,
                    "{want:?} cut at {cut}"
                );
            }
        }
    }

    #[test]
    fn rejects_malformed_frames() {
        let cases: &[(&[u8], u32)] = &[
            (
                b"\x00\x00\x00\x00\x00\x00\x00\x00\x00",
                code::PROTOCOL_ERROR,
            ), // DATA on 0
            (
                b"\x00\x00\x01\x00\x08\x00\x00\x00\x01\x05",
                code::PROTOCOL_ERROR,
            ), // pad > len
            (
                b"\x00\x00\x01\x04\x00\x00\x00\x00\x00\x00",
                code::FRAME_SIZE_ERROR,
            ), // SETTINGS 1B
            (
                b"\x00\x00\x06\x04\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00",
                code::FRAME_SIZE_ERROR,
            ),
            (
                b"\x00\x00\x00\x04\x00\x00\x00\x00\x01",
                code::PROTOCOL_ERROR,
            ), // SETTINGS on 1
            (
                b"\x00\x00\x04\x06\x00\x00\x00\x00\x00\x00\x00\x00\x00",
                code::FRAME_SIZE_ERROR,
            ), // PING 4B
            (
                b"\x00\x00\x03\x03\x00\x00\x00\x00\x01\x00\x00\x00",
                code::FRAME_SIZE_ERROR,
            ),
            (
                b"\x00\x00\x04\x03\x00\x00\x00\x00\x00\x00\x00\x00\x00",
                code::PROTOCOL_ERROR,
            ),
            (
                b"\x00\x00\x04\x07\x00\x00\x00\x00\x00\x00\x00\x00\x00",
                code::FRAME_SIZE_ERROR,
            ),
            (
                b"\x00\x40\x01\x00\x00\x00\x00\x00\x01",
                code::FRAME_SIZE_ERROR,
            ), // 16,385 bytes
        ];
        for (bytes, want) in cases {
            assert_eq!(parse(bytes, MAX).unwrap_err().code, *want, "{bytes:?}");
        }
    }

    #[test]
    fn encodes_what_it_parses() {
        let mut out = Vec::new();
        put_settings(&mut out, &[(setting::ENABLE_PUSH, 0)]);
        assert_eq!(
            out,
            b"\x00\x00\x06\x04\x00\x00\x00\x00\x00\x00\x02\x00\x00\x00\x00"
        );
        out.clear();
        put_window_update(&mut out, 0, 16_711_681);
        assert_eq!(out, b"\x00\x00\x04\x08\x00\x00\x00\x00\x00\x00\xff\x00\x01");
        out.clear();
        // A 5-byte block over 2-byte frames: HEADERS, CONTINUATION, CONTINUATION(END_HEADERS).
        put_headers(&mut out, 1, b"abcde", true, 2);
        let mut at = 0;
        let mut got = Vec::new();
        while let Some((f, used)) = parse(&out[at..], MAX).unwrap() {
            got.push(format!("{f:?}"));
            at += used;
        }
        assert_eq!(at, out.len());
        assert_eq!(
            got,
            [
                "Headers { stream: 1, fragment: [97, 98], end_stream: true, end_headers: false }",
                "Continuation { stream: 1, fragment: [99, 100], end_headers: false }",
                "Continuation { stream: 1, fragment: [101], end_headers: true }",
            ]
        );
        let params: Vec<_> =
            settings(b"\x00\x03\x00\x00\x00\x0a\x00\x04\x00\x01\x00\x00").collect();
        assert_eq!(params, [(3, 10), (4, 65_536)]);
    }
}
