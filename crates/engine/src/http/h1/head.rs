//! Parsing a response head: `httparse` with a small header array on the stack (the hot path),
//! retried with a heap array as large as the head can need when a valid response has more
//! header fields; and a gate that decides when a partial head is worth parsing again.

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
