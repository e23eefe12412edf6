//! Parsing a response head: `httparse` with a small header array on the stack (the hot path),
//! retried with a heap array as large as the head can need when a valid response has more
//! header fields; a gate that decides when a partial head is worth parsing again; and the
//! facts a parsed head gives the exchange (status, how the body is framed, keep-alive).

use crate::server_header::ServerHeader;
use httparse::{Response, Status, EMPTY_HEADER};

/// Header slots on the stack: enough for nearly every real response.
const STACK_HEADERS: usize = 48;

/// Parses the response head at the start of `buf` and hands it, with its length, to `f`.
/// `Ok(None)`: the head is not complete yet. More than [`STACK_HEADERS`] fields cost one
/// allocation on that response only.
pub fn parse_head<R>(
    buf: &[u8],
    f: impl FnOnce(&Response<'_, '_>, usize) -> R,
) -> Result<Option<R>, httparse::Error> {
    let mut headers = [EMPTY_HEADER; STACK_HEADERS];
    let mut resp = Response::new(&mut headers);
    match resp.parse(buf) {
        Ok(Status::Complete(len)) => return Ok(Some(f(&resp, len))),
        Ok(Status::Partial) => return Ok(None),
        Err(httparse::Error::TooManyHeaders) => {}
        Err(e) => return Err(e),
    }
    // Every field takes at least three bytes (`a:` and a line feed).
    let mut many = vec![EMPTY_HEADER; buf.len() / 3 + 1];
    let mut resp = Response::new(&mut many);
    match resp.parse(buf)? {
        Status::Complete(len) => Ok(Some(f(&resp, len))),
        Status::Partial => Ok(None),
    }
}

/// Decides when a head still arriving is parsed again: at once when the first bytes come (so
/// garbage fails fast), when an empty line shows the head may be complete, and each time the
/// buffered head doubles — never once per byte of a server that trickles it.
#[derive(Debug)]
pub struct HeadGate {
    first: bool,
    /// Bytes (from the head's start) already searched for an empty line.
    scanned: usize,
    /// Parse again when this many bytes are buffered.
    next: usize,
}

impl Default for HeadGate {
    fn default() -> Self {
        Self {
            first: true,
            scanned: 0,
            next: 1024,
        }
    }
}

impl HeadGate {
    /// `head`: the bytes buffered from the start of the response head.
    pub fn worth_parsing(&mut self, head: &[u8]) -> bool {
        if head.is_empty() {
            return false;
        }
        if std::mem::take(&mut self.first) {
            self.scanned = head.len();
            return true;
        }
        let from = self.scanned.saturating_sub(2);
        self.scanned = head.len();
        let ends = head[from..]
            .iter()
            .enumerate()
            .any(|(i, &b)| b == b'\n' && ends_blank_line(head, from + i));
        if ends || head.len() >= self.next {
            while self.next <= head.len() {
                self.next *= 2;
            }
            return true;
        }
        false
    }
}

/// The line feed at `i` ends an empty line (`\n\n` or `\n\r\n`).
fn ends_blank_line(head: &[u8], i: usize) -> bool {
    (i >= 1 && head[i - 1] == b'\n') || (i >= 2 && head[i - 1] == b'\r' && head[i - 2] == b'\n')
}

/// How a response's body is delimited.
pub(super) enum Framing {
    None,
    Length(u64),
    Chunked,
    UntilClose,
}

pub(super) type HeadFacts = (usize, u16, Framing, bool, Option<u64>);

pub(super) fn head_facts(
    resp: &httparse::Response,
    len: usize,
    head_request: bool,
    server: &ServerHeader,
) -> Result<HeadFacts, String> {
    let status = resp.code.ok_or("response without status")?;
    if !(100..=599).contains(&status) {
        return Err(format!(
            "invalid status code {status:03} (valid codes are 100 to 599)"
        ));
    }
    let mut close = resp.version == Some(0);
    let mut length: Option<u64> = None;
    let mut transfer_encoding: Option<bool> = None;
    let mut server_us = None;
    for h in resp.headers.iter() {
        if let Some(us) = server.read(h.name, h.value) {
            server_us = Some(us);
            continue;
        }
        if h.name.eq_ignore_ascii_case("content-length") {
            let n = parse_length(h.value)?;
            if length.is_some_and(|l| l != n) {
                return Err("conflicting Content-Length headers".into());
            }
            length = Some(n);
        } else if h.name.eq_ignore_ascii_case("transfer-encoding") {
            // Only a final `chunked` frames the body; any other coding runs until close.
            let last = h.value.rsplit(|&b| b == b',').next().unwrap_or(b"");
            transfer_encoding = Some(last.trim_ascii().eq_ignore_ascii_case(b"chunked"));
        } else if h.name.eq_ignore_ascii_case("connection") {
            for token in h.value.split(|&b| b == b',').map(<[u8]>::trim_ascii) {
                if token.eq_ignore_ascii_case(b"close") {
                    close = true;
                } else if token.eq_ignore_ascii_case(b"keep-alive") && resp.version == Some(0) {
                    close = false;
                }
            }
        }
    }
    let framing = if head_request || status == 204 || status == 304 || (100..200).contains(&status)
    {
        Framing::None
    } else if let Some(chunked) = transfer_encoding {
        // With both headers, Transfer-Encoding wins and the connection is not reused
        // (RFC 9112 §6.3: the message may be an attempt at request smuggling).
        if length.is_some() {
            close = true;
        }
        if chunked {
            Framing::Chunked
        } else {
            close = true;
            Framing::UntilClose
        }
    } else if let Some(n) = length {
        Framing::Length(n)
    } else {
        close = true;
        Framing::UntilClose
    };
    Ok((len, status, framing, close, server_us))
}

/// A Content-Length value: digits only (`+5`, `-1`, `0x10` and overflow are invalid).
pub(super) fn parse_length(value: &[u8]) -> Result<u64, String> {
    let text = value.trim_ascii();
    let invalid = || {
        format!(
            "invalid Content-Length `{}`",
            String::from_utf8_lossy(&text[..text.len().min(40)])
        )
    };
    if text.is_empty() || !text.iter().all(u8::is_ascii_digit) {
        return Err(invalid());
    }
    std::str::from_utf8(text)
        .ok()
        .and_then(|t| t.parse::<u64>().ok())
        .ok_or_else(invalid)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn more_header_fields_than_the_stack_holds_still_parse() {
        let mut head = b"HTTP/1.1 200 OK\r\n".to_vec();
        for i in 0..500 {
            head.extend_from_slice(format!("X-H{i}: {i}\r\n").as_bytes());
        }
        head.extend_from_slice(b"Content-Length: 0\r\n\r\n");
        let got = parse_head(&head, |r, len| (r.headers.len(), len)).unwrap();
        assert_eq!(got, Some((501, head.len())));
        // Partial with many fields is still partial, not an error.
        let partial = &head[..head.len() - 2];
        assert_eq!(parse_head(partial, |_, _| ()).unwrap(), None);
    }

    #[test]
    fn a_trickled_head_is_parsed_a_few_times_not_once_per_byte() {
        let mut head = b"HTTP/1.1 200 OK\r\n".to_vec();
        head.extend(std::iter::repeat_n(b'a', 60_000));
        let mut gate = HeadGate::default();
        let parses = (1..=head.len())
            .filter(|&n| gate.worth_parsing(&head[..n]))
            .count();
        assert!(parses <= 8, "{parses} parses");
        // An empty line is noticed as soon as it arrives.
        let mut gate = HeadGate::default();
        let done = b"HTTP/1.1 200 OK\r\nA: b\r\n\r\n";
        let hits: Vec<usize> = (1..=done.len())
            .filter(|&n| gate.worth_parsing(&done[..n]))
            .collect();
        assert_eq!(hits, vec![1, done.len()]);
    }
}
