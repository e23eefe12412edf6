//! What an exchange returns: the status, the instants that time it, the body counted (kept
//! only when asked) and header lists kept in one flat buffer each instead of a `HeaderMap`,
//! so a response that keeps nothing allocates nothing.

use crate::grpc_reply::FrameCounter;
use std::time::Instant;

/// What to keep of a response beyond its status, length and trailers, and how much of it
/// to read at most.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Keep {
    /// The response head's regular (non-pseudo) headers to keep.
    pub headers: KeepHeaders,
    /// The body bytes (otherwise only counted).
    pub body: bool,
    /// A gRPC call: its messages are counted as DATA arrives (nothing is kept for it), and a
    /// trailers-only answer's head is kept, for its `grpc-status`.
    pub grpc: bool,
    /// A body past this many bytes fails the exchange (`H2Error::BodyTooLarge`) and resets
    /// its stream, so the rest is not read.
    pub max_body: u64,
}

impl Default for Keep {
    fn default() -> Self {
        Keep {
            headers: KeepHeaders::None,
            body: false,
            grpc: false,
            max_body: u64::MAX,
        }
    }
}

/// Which regular fields of a response head are kept. Reading the server's own time needs one
/// header; keeping only it spares every other value's Huffman decoding and the list's
/// allocation on each response (issue 42).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum KeepHeaders {
    #[default]
    None,
    All,
    /// The fields of one name only.
    Named(FieldName),
}

impl KeepHeaders {
    /// Only the fields named `name` (any case); every field when the name is too long to be
    /// carried inline.
    pub fn named(name: &str) -> Self {
        FieldName::new(name).map_or(KeepHeaders::All, KeepHeaders::Named)
    }

    /// Whether any field may be kept.
    pub fn any(&self) -> bool {
        !matches!(self, KeepHeaders::None)
    }

    /// Whether a field of this (lowercase, as HTTP/2 sends it) name is kept.
    pub fn wants(&self, name: &[u8]) -> bool {
        match self {
            KeepHeaders::None => false,
            KeepHeaders::All => true,
            KeepHeaders::Named(n) => n.as_bytes() == name,
        }
    }
}

/// A lowercase header name held inline, so [`Keep`] stays `Copy` and costs no allocation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FieldName {
    len: u8,
    bytes: [u8; FieldName::MAX],
}

impl FieldName {
    const MAX: usize = 46;

    /// `name` lowercased; `None` when it is longer than [`FieldName::MAX`] bytes.
    pub fn new(name: &str) -> Option<Self> {
        let src = name.as_bytes();
        if src.len() > Self::MAX {
            return None;
        }
        let mut bytes = [0; Self::MAX];
        for (d, s) in bytes.iter_mut().zip(src) {
            *d = s.to_ascii_lowercase();
        }
        Some(FieldName {
            len: src.len() as u8,
            bytes,
        })
    }

    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len as usize]
    }
}

/// Header fields as name/value pairs in one buffer: `[name len u32][value len u32][name][value]`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HeaderList {
    buf: Vec<u8>,
}

impl HeaderList {
    pub(crate) fn push(&mut self, name: &[u8], value: &[u8]) {
        self.buf
            .extend_from_slice(&(name.len() as u32).to_ne_bytes());
        self.buf
            .extend_from_slice(&(value.len() as u32).to_ne_bytes());
        self.buf.extend_from_slice(name);
        self.buf.extend_from_slice(value);
    }

    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    /// The fields in the order the server sent them.
    pub fn iter(&self) -> impl Iterator<Item = (&[u8], &[u8])> + '_ {
        let mut at = 0;
        std::iter::from_fn(move || {
            let b = self.buf.get(at..at + 8)?;
            let n = u32::from_ne_bytes([b[0], b[1], b[2], b[3]]) as usize;
            let v = u32::from_ne_bytes([b[4], b[5], b[6], b[7]]) as usize;
            let name = &self.buf[at + 8..at + 8 + n];
            let value = &self.buf[at + 8 + n..at + 8 + n + v];
            at += 8 + n + v;
            Some((name, value))
        })
    }

    /// The first value of `name` (lowercase, as HTTP/2 sends names).
    pub fn get(&self, name: &[u8]) -> Option<&[u8]> {
        self.iter().find(|(n, _)| *n == name).map(|(_, v)| v)
    }
}

/// One response, complete.
#[derive(Debug, Clone)]
pub struct H2Response {
    pub status: u16,
    /// Empty unless [`Keep::headers`].
    pub headers: HeaderList,
    /// The trailing HEADERS (gRPC's `grpc-status`), when the server sent them.
    pub trailers: Option<HeaderList>,
    /// DATA payload bytes received (padding excluded).
    pub body_len: u64,
    /// Present when [`Keep::body`].
    pub body: Option<Vec<u8>>,
    /// The gRPC messages of the body, when [`Keep::grpc`].
    pub frames: Option<FrameCounter>,
    /// When the write that carried the request's HEADERS returned.
    pub written_at: Instant,
    /// When the read that carried the final (non-1xx) response head returned, or when its
    /// bytes reached the socket for a stream that knows it (read at the worker's wake-ups).
    pub head_at: Instant,
    /// When the bytes that ended the response reached the socket, for a stream read at the
    /// worker's wake-ups (the kernel's receive timestamp); `None`: when the task sees it.
    pub done_at: Option<Instant>,
}

impl H2Response {
    /// `grpc-status` from the trailers (or a trailers-only response's head, kept for
    /// [`Keep::grpc`]).
    pub fn grpc_status(&self) -> Option<u32> {
        let v = self
            .trailers
            .as_ref()
            .and_then(|t| t.get(b"grpc-status"))
            .or_else(|| self.headers.get(b"grpc-status"))?;
        std::str::from_utf8(v).ok()?.parse().ok()
    }
}
