//! What the engine hands a transport: a request as HTTP means it — method, target, header
//! fields, body — never wire bytes, so HTTP/1.1 and HTTP/2 framing stay inside their
//! transports.
//!
//! The parts live side by side in one buffer with spans into it: a request without templates
//! is rendered once before the run, a templated one into a buffer its VU reuses, so sending
//! allocates nothing on the hot path.

use loadlab_scenario::Method;
use tokio::time::Instant;

/// A byte range of a [`RequestParts`] buffer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Span {
    start: u32,
    end: u32,
}

impl Span {
    fn of(buf: &[u8], from: usize) -> Span {
        Span {
            start: from as u32,
            end: buf.len() as u32,
        }
    }

    pub fn get(self, buf: &[u8]) -> &[u8] {
        &buf[self.start as usize..self.end as usize]
    }
}

/// A request's target, header fields and body, rendered into one buffer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RequestParts {
    buf: Vec<u8>,
    target: Span,
    headers: Vec<(Span, Span)>,
    body: Option<Span>,
}

impl RequestParts {
    /// Makes this a copy of `other`, reusing this one's buffers (no allocation once they
    /// are large enough, unlike `clone`).
    pub fn copy_from(&mut self, other: &RequestParts) {
        self.buf.clone_from(&other.buf);
        self.headers.clone_from(&other.headers);
        self.target = other.target;
        self.body = other.body;
    }

    pub fn clear(&mut self) {
        self.buf.clear();
        self.headers.clear();
        self.target = Span::default();
        self.body = None;
    }

    /// Appends what `write` writes as the target (`/path?query`).
    pub fn write_target<E>(
        &mut self,
        write: impl FnOnce(&mut Vec<u8>) -> Result<(), E>,
    ) -> Result<(), E> {
        let from = self.buf.len();
        write(&mut self.buf)?;
        self.target = Span::of(&self.buf, from);
        Ok(())
    }

    /// Appends a header field whose value `write` writes.
    pub fn write_header<E>(
        &mut self,
        name: &[u8],
        write: impl FnOnce(&mut Vec<u8>) -> Result<(), E>,
    ) -> Result<(), E> {
        let from = self.buf.len();
        self.buf.extend_from_slice(name);
        let name = Span::of(&self.buf, from);
        let from = self.buf.len();
        write(&mut self.buf)?;
        self.headers.push((name, Span::of(&self.buf, from)));
        Ok(())
    }

    /// Appends the body that `write` writes.
    pub fn write_body<E>(
        &mut self,
        write: impl FnOnce(&mut Vec<u8>) -> Result<(), E>,
    ) -> Result<(), E> {
        let from = self.buf.len();
        write(&mut self.buf)?;
        self.body = Some(Span::of(&self.buf, from));
        Ok(())
    }

    /// Makes `body` the body (a gRPC message encoded from the rendered JSON). The old body's
    /// bytes stay in the buffer unused; it is cleared before the next rendering.
    pub fn replace_body(&mut self, body: &[u8]) {
        let from = self.buf.len();
        self.buf.extend_from_slice(body);
        self.body = Some(Span::of(&self.buf, from));
    }

    /// `/path?query`, escaped for a request line.
    /// Bytes of the request's content (target, header fields, body), whatever the framing
    /// adds: what a run counts as sent when the transport cannot say.
    pub fn wire_size(&self) -> u64 {
        let fields: usize = self.headers().map(|(n, v)| n.len() + v.len() + 4).sum();
        (self.target().len() + fields + self.body().map_or(0, <[u8]>::len)) as u64
    }

    pub fn target(&self) -> &[u8] {
        self.target.get(&self.buf)
    }

    /// Header fields in order, as the scenario wrote them (names as written).
    pub fn headers(&self) -> impl ExactSizeIterator<Item = (&[u8], &[u8])> {
        self.headers
            .iter()
            .map(|(n, v)| (n.get(&self.buf), v.get(&self.buf)))
    }

    /// The value of the first field named `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&[u8]> {
        self.headers()
            .find(|(n, _)| n.eq_ignore_ascii_case(name.as_bytes()))
            .map(|(_, v)| v)
    }

    /// The body; `None` when the request has none (not even an empty one).
    pub fn body(&self) -> Option<&[u8]> {
        self.body.map(|b| b.get(&self.buf))
    }
}

/// One request, ready to send.
#[derive(Debug, Clone, Copy)]
pub struct RenderedRequest<'a> {
    pub step: u16,
    pub origin: u16,
    pub method: Method,
    pub parts: &'a RequestParts,
    /// Rendered from no template: the same every time, so a transport may keep its encoding
    /// of it, keyed by `step`.
    pub fixed: bool,
    /// Ask for the connection to be closed after the response (`connections: none`).
    pub close: bool,
    /// Response bodies beyond this fail `body_too_large`.
    pub max_body: u64,
    /// The response header that carries the server's own time (read while parsing).
    pub server: &'a crate::server_header::ServerHeader,
    /// When the request times out: a transport waiting on the server (say, for an HTTP/2
    /// flow-control window) may say what it was waiting for before then.
    pub deadline: Instant,
    /// A gRPC call: the transport counts the response's messages and reads `grpc-status`.
    pub grpc: bool,
}

impl RenderedRequest<'_> {
    /// HEAD responses have no body whatever their headers say.
    pub fn is_head(&self) -> bool {
        self.method == Method::Head
    }

    /// Methods whose requests carry a body (an empty one is sent as `Content-Length: 0`).
    pub fn expects_body(&self) -> bool {
        matches!(self.method, Method::Post | Method::Put | Method::Patch)
    }

    /// The request's `Host` field, when the scenario set one (it overrides the origin's).
    pub fn host(&self) -> Option<&[u8]> {
        self.parts.header("host")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_keep_their_spans_in_one_buffer() {
        let mut p = RequestParts::default();
        let ok: Result<(), ()> = Ok(());
        p.write_target(|b| {
            b.extend_from_slice(b"/a?b=1");
            ok
        })
        .unwrap();
        p.write_header(b"X-A", |b| {
            b.extend_from_slice(b"1");
            ok
        })
        .unwrap();
        p.write_header(b"Host", |b| {
            b.extend_from_slice(b"example");
            ok
        })
        .unwrap();
        assert_eq!(p.target(), b"/a?b=1");
        assert_eq!(p.header("host"), Some(&b"example"[..]));
        assert_eq!(p.headers().len(), 2);
        assert_eq!(p.body(), None);
        p.write_body(|b| {
            b.extend_from_slice(b"{}");
            ok
        })
        .unwrap();
        assert_eq!(p.body(), Some(&b"{}"[..]));
        let mut copy = RequestParts::default();
        copy.write_target(|b| {
            b.extend_from_slice(b"/longer-than-the-original-target");
            ok
        })
        .unwrap();
        copy.copy_from(&p);
        assert_eq!(copy, p);
        p.clear();
        assert_eq!(
            (p.target(), p.headers().len(), p.body()),
            (&b""[..], 0, None)
        );
    }
}
