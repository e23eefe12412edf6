//! Request header blocks encoded once and sent as the same bytes on every stream of every
//! connection: static-table names and literal values without indexing, so our side keeps no
//! dynamic-table state. (Responses are decoded in `hdecode.rs`.)

use bytes::Bytes;

/// RFC 7541 Appendix A: the static table's names, index = position + 1.
const STATIC_NAMES: [&str; 61] = [
    ":authority",
    ":method",
    ":method",
    ":path",
    ":path",
    ":scheme",
    ":scheme",
    ":status",
    ":status",
    ":status",
    ":status",
    ":status",
    ":status",
    ":status",
    "accept-charset",
    "accept-encoding",
    "accept-language",
    "accept-ranges",
    "accept",
    "access-control-allow-origin",
    "age",
    "allow",
    "authorization",
    "cache-control",
    "content-disposition",
    "content-encoding",
    "content-language",
    "content-length",
    "content-location",
    "content-range",
    "content-type",
    "cookie",
    "date",
    "etag",
    "expect",
    "expires",
    "from",
    "host",
    "if-match",
    "if-modified-since",
    "if-none-match",
    "if-range",
    "if-unmodified-since",
    "last-modified",
    "link",
    "location",
    "max-forwards",
    "proxy-authenticate",
    "proxy-authorization",
    "range",
    "referer",
    "refresh",
    "retry-after",
    "server",
    "set-cookie",
    "strict-transport-security",
    "transfer-encoding",
    "user-agent",
    "vary",
    "via",
    "www-authenticate",
];

/// Why a request cannot be sent as HTTP/2.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HeaderBlockError {
    #[error("header {0:?} is connection-specific and not allowed in HTTP/2")]
    ConnectionSpecific(String),
    #[error("header name {0:?} is empty or not a valid lowercase token")]
    BadName(String),
    #[error("a header value of {0:?} holds CR, LF or NUL")]
    BadValue(String),
}

/// One request's HPACK header block, encoded once and shared (cloning is a reference count).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeaderBlock {
    pub(crate) bytes: Bytes,
}

impl HeaderBlock {
    /// Encodes the pseudo-headers and `headers` (names are lowercased; `host` becomes
    /// `:authority`'s job and is dropped).
    pub fn new<'a>(
        method: &str,
        scheme: &str,
        authority: &str,
        path: &str,
        headers: impl IntoIterator<Item = (&'a str, &'a [u8])>,
    ) -> Result<Self, HeaderBlockError> {
        let mut out = Vec::with_capacity(64);
        match method {
            "GET" => out.push(0x82),
            "POST" => out.push(0x83),
            m => literal_indexed_name(&mut out, 2, m.as_bytes()),
        }
        match scheme {
            "http" => out.push(0x86),
            "https" => out.push(0x87),
            s => literal_indexed_name(&mut out, 6, s.as_bytes()),
        }
        literal_indexed_name(&mut out, 1, authority.as_bytes());
        match path {
            "/" => out.push(0x84),
            p => literal_indexed_name(&mut out, 4, p.as_bytes()),
        }
        for (name, value) in headers {
            let name = name.to_ascii_lowercase();
            if name.is_empty()
                || name.starts_with(':')
                || !name
                    .bytes()
                    .all(|b| b.is_ascii_graphic() && !b"()<>@,;:\\\"/[]?={}".contains(&b))
            {
                return Err(HeaderBlockError::BadName(name));
            }
            if value.iter().any(|&b| b == b'\r' || b == b'\n' || b == 0) {
                return Err(HeaderBlockError::BadValue(name));
            }
            match name.as_str() {
                "host" => continue,
                "connection" | "keep-alive" | "proxy-connection" | "transfer-encoding"
                | "upgrade" => return Err(HeaderBlockError::ConnectionSpecific(name)),
                "te" if value != b"trailers" => {
                    return Err(HeaderBlockError::ConnectionSpecific(name))
                }
                _ => {}
            }
            match STATIC_NAMES.iter().position(|n| *n == name) {
                Some(i) => literal_indexed_name(&mut out, i + 1, value),
                None => {
                    out.push(0x00);
                    string(&mut out, name.as_bytes());
                    string(&mut out, value);
                }
            }
        }
        Ok(HeaderBlock { bytes: out.into() })
    }

    /// The encoded block.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }
}

/// RFC 7541 §6.2.2: literal header field without indexing, name from the static table.
fn literal_indexed_name(out: &mut Vec<u8>, index: usize, value: &[u8]) {
    integer(out, index, 4, 0x00);
    string(out, value);
}

/// A raw (not Huffman-coded) string literal.
fn string(out: &mut Vec<u8>, s: &[u8]) {
    integer(out, s.len(), 7, 0x00);
    out.extend_from_slice(s);
}

/// RFC 7541 §5.1.
fn integer(out: &mut Vec<u8>, mut value: usize, prefix: u8, first: u8) {
    let max = (1usize << prefix) - 1;
    if value < max {
        out.push(first | value as u8);
        return;
    }
    out.push(first | max as u8);
    value -= max;
    while value >= 128 {
        out.push((value % 128 + 128) as u8);
        value /= 128;
    }
    out.push(value as u8);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_decode_to_the_request() {
        let long = "x".repeat(300);
        let block = HeaderBlock::new(
            "PATCH",
            "http",
            "127.0.0.1:8080",
            "/a?b=c",
            [
                ("User-Agent", &b"loadlab"[..]),
                ("x-long", long.as_bytes()),
                ("host", b"ignored"),
            ],
        )
        .unwrap();
        let decoded = loona_hpack::Decoder::new()
            .decode(block.as_bytes())
            .unwrap();
        let pairs: Vec<(String, String)> = decoded
            .into_iter()
            .map(|(n, v)| (String::from_utf8(n).unwrap(), String::from_utf8(v).unwrap()))
            .collect();
        let want = [
            (":method", "PATCH"),
            (":scheme", "http"),
            (":authority", "127.0.0.1:8080"),
            (":path", "/a?b=c"),
            ("user-agent", "loadlab"),
            ("x-long", long.as_str()),
        ];
        assert_eq!(pairs.len(), want.len());
        for ((n, v), (wn, wv)) in pairs.iter().zip(want) {
            assert_eq!((n.as_str(), v.as_str()), (wn, wv));
        }
        // GET / over http: three single bytes and the authority.
        let get = HeaderBlock::new("GET", "http", "a", "/", []).unwrap();
        assert_eq!(get.as_bytes(), b"\x82\x86\x01\x01a\x84");
    }

    #[test]
    fn refuses_connection_specific_headers() {
        let bad = HeaderBlock::new("GET", "http", "a", "/", [("Connection", &b"close"[..])]);
        assert!(matches!(bad, Err(HeaderBlockError::ConnectionSpecific(_))));
        let bad = HeaderBlock::new("GET", "http", "a", "/", [("x", &b"a\r\nb"[..])]);
        assert!(matches!(bad, Err(HeaderBlockError::BadValue(_))));
    }
}
