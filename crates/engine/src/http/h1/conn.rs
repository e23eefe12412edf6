//! One keep-alive HTTP/1.1 connection: write an encoded request, parse the head, skip the body.
//!
//! Whatever the server sends, memory stays bounded (a head of at most 64 KiB, bodies streamed
//! through the buffer and capped by `max_body`) and so does time (the caller's timeout); a
//! head that arrives a byte at a time is parsed O(log n) times, not once per byte.

use super::chunked::ChunkedSkipper;
use super::head::{head_facts, parse_head, Framing, HeadFacts, HeadGate};
use crate::http::classify::classify_io;
use crate::http::stream::{ReadStamp, Stream};
use crate::server_header::ServerHeader;
use crate::transport::{ConnectTiming, Failure, Response, ResponseData, ResponseTiming};
use loadlab_metrics::ErrorKind;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::time::Instant;

const INITIAL_BUFFER: usize = 4096;
pub const MAX_HEAD: usize = 64 * 1024;
/// Interim (1xx) responses accepted before the final one.
const MAX_INTERIM: usize = 32;

/// A connection over any byte stream: TCP or TLS in a run, an in-memory script in tests.
pub struct HttpConn<S = Stream> {
    stream: S,
    buf: Vec<u8>,
    start: usize,
    end: usize,
    /// At least one exchange completed on it (so a failure before any response byte is "stale").
    reused: bool,
    /// Where a templated request is encoded before it is written (reused).
    pub wbuf: Vec<u8>,
    /// How it was opened, until its first exchange reports it.
    pub opened: Option<ConnectTiming>,
    /// Bytes read from the stream since it was opened.
    read_total: u64,
}

/// How far reading a response has come, from its request's write on.
struct Reading {
    written: Instant,
    /// Any byte of the response came (a failure before one is "stale" on a reused
    /// connection).
    got_bytes: bool,
    first_byte: Option<Instant>,
    /// The connection's read count before the response (the response's bytes follow it).
    read_before: u64,
}

impl<S: AsyncRead + AsyncWrite + ReadStamp + Unpin> HttpConn<S> {
    pub fn new(stream: S) -> Self {
        Self {
            stream,
            buf: Vec::new(),
            start: 0,
            end: 0,
            reused: false,
            wbuf: Vec::new(),
            opened: None,
            read_total: 0,
        }
    }

    fn io_failure(&self, e: &std::io::Error, got_bytes: bool) -> Failure {
        Failure {
            kind: classify_io(e, false),
            message: e.to_string(),
            stale: self.reused && !got_bytes,
            wire: None,
        }
    }

    /// Reads more bytes into the buffer; Ok(0) is end of stream.
    async fn fill(&mut self) -> std::io::Result<usize> {
        if self.buf.is_empty() {
            self.buf.resize(INITIAL_BUFFER, 0);
        }
        if self.start == self.end {
            self.start = 0;
            self.end = 0;
        } else if self.end == self.buf.len() {
            if self.start > 0 {
                self.buf.copy_within(self.start..self.end, 0);
                self.end -= self.start;
                self.start = 0;
            } else {
                let len = self.buf.len() * 2;
                self.buf.resize(len, 0);
            }
        }
        let n = self.stream.read(&mut self.buf[self.end..]).await?;
        self.end += n;
        self.read_total += n as u64;
        Ok(n)
    }

    /// Writes `request` (encoded, see `encode`) and reads its response.
    pub async fn exchange(
        &mut self,
        request: &[u8],
        head_request: bool,
        max_body: u64,
        server: &ServerHeader,
        mut keep: Option<&mut ResponseData>,
    ) -> Result<Response, Failure> {
        if let Err(e) = self.stream.write_all(request).await {
            return Err(self.io_failure(&e, false));
        }
        let mut reading = self.reading_from(Instant::now());
        let mut interim = 0;
        let mut gate = HeadGate::default();
        loop {
            let parsed =
                self.parse_buffered_head(&mut gate, head_request, server, keep.as_deref_mut())?;
            let Some(facts) = parsed else {
                self.head_fits()?;
                let read = self.fill().await;
                self.head_read(read, &mut reading)?;
                continue;
            };
            let (len, status, framing, close, server_us) =
                facts.map_err(|msg| Failure::new(ErrorKind::Protocol, msg))?;
            if self.skip_interim(status, len, &mut interim)? {
                gate = HeadGate::default();
                continue;
            }
            if let Some(k) = keep.as_deref_mut() {
                k.status_known(status);
            }
            let sink = keep.as_deref_mut().filter(|k| k.keep_body);
            self.start += len;
            let close = self.skip_body(framing, max_body, sink).await? || close;
            return Ok(self.response(status, close, server_us, request.len(), &reading));
        }
    }

    /// Where reading a response starts, its request written at `written`. Bytes already
    /// buffered (never, as requests are not pipelined) arrived before.
    #[inline]
    fn reading_from(&self, written: Instant) -> Reading {
        let got_bytes = self.start != self.end;
        Reading {
            written,
            got_bytes,
            first_byte: got_bytes.then_some(written),
            read_before: self.read_total - (self.end - self.start) as u64,
        }
    }

    /// Parses the response head from what is buffered, once enough has come to be worth it
    /// (`gate`); `None` while it is partial. The headers of a final response go to `keep`
    /// when it keeps them.
    #[inline]
    fn parse_buffered_head(
        &self,
        gate: &mut HeadGate,
        head_request: bool,
        server: &ServerHeader,
        keep: Option<&mut ResponseData>,
    ) -> Result<Option<Result<HeadFacts, String>>, Failure> {
        if !gate.worth_parsing(&self.buf[self.start..self.end]) {
            return Ok(None);
        }
        parse_head(&self.buf[self.start..self.end], |resp, len| {
            let facts = head_facts(resp, len, head_request, server);
            if let (Ok((_, status, _, _, _)), Some(k)) = (&facts, keep) {
                if k.keep_headers && *status >= 200 {
                    for h in resp.headers.iter() {
                        k.add_header(h.name.as_bytes(), h.value);
                    }
                }
            }
            facts
        })
        .map_err(|e| Failure::new(ErrorKind::Protocol, format!("invalid HTTP response: {e}")))
    }

    /// A partial head may grow to [`MAX_HEAD`] before it is given up on.
    #[inline]
    fn head_fits(&self) -> Result<(), Failure> {
        if self.end - self.start >= MAX_HEAD {
            return Err(Failure::new(
                ErrorKind::Protocol,
                "response head larger than 64 KiB",
            ));
        }
        Ok(())
    }

    /// Takes in a read of more of the head: the first bytes of the response are stamped
    /// with when they arrived; the stream ending before the head is complete fails it.
    #[inline]
    fn head_read(
        &self,
        read: std::io::Result<usize>,
        reading: &mut Reading,
    ) -> Result<(), Failure> {
        match read {
            Ok(0) => {
                let e = std::io::Error::new(
                    std::io::ErrorKind::UnexpectedEof,
                    "connection closed before a complete response",
                );
                Err(self.io_failure(&e, reading.got_bytes))
            }
            Ok(_) => {
                reading.got_bytes = true;
                reading
                    .first_byte
                    .get_or_insert_with(|| self.stream.received_at().unwrap_or_else(Instant::now));
                Ok(())
            }
            Err(e) => Err(self.io_failure(&e, reading.got_bytes)),
        }
    }

    /// Skips an interim response (100 Continue, 103 Early Hints) of `len` bytes, the real
    /// one following it: true if `status` is one. An upgrade nobody asked for, or more
    /// interim responses than [`MAX_INTERIM`], fail the exchange.
    #[inline]
    fn skip_interim(
        &mut self,
        status: u16,
        len: usize,
        interim: &mut usize,
    ) -> Result<bool, Failure> {
        if status == 101 {
            return Err(Failure::new(
                ErrorKind::Protocol,
                "101 Switching Protocols, but no upgrade was asked for",
            ));
        }
        if !(100..200).contains(&status) {
            return Ok(false);
        }
        *interim += 1;
        if *interim > MAX_INTERIM {
            return Err(Failure::new(
                ErrorKind::Protocol,
                format!("more than {MAX_INTERIM} interim (1xx) responses"),
            ));
        }
        self.start += len;
        Ok(true)
    }

    /// The response whose body has just been read, `sent` bytes of request before it.
    #[inline]
    fn response(
        &mut self,
        status: u16,
        close: bool,
        server_us: Option<u64>,
        sent: usize,
        reading: &Reading,
    ) -> Response {
        // Bytes nobody asked for (we never pipeline) would be read as the next response:
        // this connection cannot be trusted again.
        let unsolicited = self.start != self.end;
        self.reused = true;
        Response {
            status,
            close: close || unsolicited,
            server_us,
            bytes_received: self.read_total - reading.read_before,
            bytes_sent: Some(sent as u64),
            timing: ResponseTiming {
                opened: self.opened.take(),
                written: Some(reading.written),
                first_byte: reading.first_byte,
                received: self.stream.received_at().map(|at| at.max(reading.written)),
            },
            grpc: None,
        }
    }

    /// Discards the body (or keeps it in `sink`, whose stream reads its events as they
    /// arrive); returns true if the connection cannot be reused afterwards.
    async fn skip_body(
        &mut self,
        framing: Framing,
        max_body: u64,
        mut sink: Option<&mut ResponseData>,
    ) -> Result<bool, Failure> {
        let too_large = || {
            Failure::new(
                ErrorKind::BodyTooLarge,
                format!("response body larger than {max_body} bytes"),
            )
        };
        let close = match framing {
            Framing::None => false,
            Framing::Length(mut remaining) => {
                if remaining > max_body {
                    return Err(too_large());
                }
                loop {
                    let take = remaining.min((self.end - self.start) as u64) as usize;
                    if let Some(sink) = sink.as_deref_mut() {
                        sink.body
                            .extend_from_slice(&self.buf[self.start..self.start + take]);
                        arrived(sink, self.stream.received_at())?;
                    }
                    self.start += take;
                    remaining -= take as u64;
                    if remaining == 0 {
                        break false;
                    }
                    self.fill_body(sink.as_deref()).await?;
                }
            }
            Framing::Chunked => {
                let mut skipper = ChunkedSkipper::new();
                loop {
                    let used = skipper
                        .feed_into(
                            &self.buf[self.start..self.end],
                            sink.as_deref_mut().map(|k| &mut k.body),
                        )
                        .map_err(|m| {
                            Failure::new(ErrorKind::Protocol, format!("invalid chunked body: {m}"))
                        })?;
                    self.start += used;
                    if skipper.body_bytes > max_body {
                        return Err(too_large());
                    }
                    if let Some(sink) = sink.as_deref_mut() {
                        arrived(sink, self.stream.received_at())?;
                    }
                    if skipper.is_done() {
                        break false;
                    }
                    self.fill_body(sink.as_deref()).await?;
                }
            }
            Framing::UntilClose => {
                let mut total = 0;
                loop {
                    total += (self.end - self.start) as u64;
                    if let Some(sink) = sink.as_deref_mut() {
                        sink.body.extend_from_slice(&self.buf[self.start..self.end]);
                        arrived(sink, self.stream.received_at())?;
                    }
                    self.start = self.end;
                    if total > max_body {
                        return Err(too_large());
                    }
                    match self.read_body(sink.as_deref()).await {
                        Ok(0) => break true,
                        Ok(_) => {}
                        Err(e) => return Err(e),
                    }
                }
            }
        };
        if let Some(sink) = sink {
            sink.body_ended(Instant::now())?;
        }
        Ok(close)
    }

    /// Reads more of a body whose framing says it goes on: the stream ending here is a
    /// failure of the response, like any read error (a streamed response's is
    /// `stream_truncated`).
    async fn fill_body(&mut self, sink: Option<&ResponseData>) -> Result<(), Failure> {
        match self.read_body(sink).await? {
            0 => Err(sink.and_then(ResponseData::cut_off).unwrap_or_else(|| {
                body_failure(std::io::Error::new(
                    std::io::ErrorKind::UnexpectedEof,
                    "connection closed mid-body",
                ))
            })),
            _ => Ok(()),
        }
    }

    /// Reads more of a body (Ok(0): the connection closed), within a stream's stall timeout.
    async fn read_body(&mut self, sink: Option<&ResponseData>) -> Result<usize, Failure> {
        let read = match sink.and_then(ResponseData::stall_deadline) {
            Some(at) => match tokio::time::timeout_at(at, self.fill()).await {
                Ok(read) => read,
                Err(_) => return Err(sink.map(ResponseData::stalled).expect("a stream")),
            },
            None => self.fill().await,
        };
        read.map_err(body_failure)
    }
}

/// Body bytes were kept: a stream reads them, stamped with their arrival — when the kernel
/// received them (`received`, a deferred read), else now (they were just read).
fn arrived(sink: &mut ResponseData, received: Option<Instant>) -> Result<(), Failure> {
    if sink.stream.is_some() {
        sink.body_arrived(received.unwrap_or_else(Instant::now))?;
    }
    Ok(())
}

/// A read of a response's body that failed (never stale: the response had begun).
fn body_failure(e: std::io::Error) -> Failure {
    Failure {
        kind: classify_io(&e, false),
        message: e.to_string(),
        stale: false,
        wire: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncWriteExt;

    const REQUEST: &[u8] = b"GET / HTTP/1.1\r\nHost: h\r\n\r\n";

    /// Runs one exchange against a server that sends `chunks` (each its own write) and then
    /// closes; returns the result and the body kept.
    async fn exchange_with(chunks: Vec<Vec<u8>>) -> (Result<Response, Failure>, Vec<u8>) {
        let (client, mut server) = tokio::io::duplex(1 << 20);
        let writer = tokio::spawn(async move {
            for c in chunks {
                if server.write_all(&c).await.is_err() {
                    return;
                }
                tokio::task::yield_now().await;
            }
        });
        let mut conn = HttpConn::new(client);
        let mut keep = ResponseData::new(true, true);
        let result = conn
            .exchange(
                REQUEST,
                false,
                1 << 20,
                &ServerHeader::ServerTiming,
                Some(&mut keep),
            )
            .await;
        writer.abort();
        if let Ok(r) = &result {
            // The final response's header fields are kept, never an interim one's.
            assert!(keep.headers().all(|(n, _)| n != b"Link"), "{r:?}");
        }
        (result, keep.body)
    }

    fn kind(r: &Result<Response, Failure>) -> Option<ErrorKind> {
        r.as_ref().err().map(|f| f.kind)
    }

    #[tokio::test]
    async fn responses_with_many_header_fields_are_valid() {
        let mut head = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n".to_vec();
        for i in 0..200 {
            head.extend_from_slice(format!("Set-Cookie: c{i}=v\r\n").as_bytes());
        }
        head.extend_from_slice(b"\r\nok");
        let (r, body) = exchange_with(vec![head]).await;
        assert_eq!(r.unwrap().status, 200);
        assert_eq!(body, b"ok");
    }

    #[tokio::test]
    async fn interim_responses_are_skipped_but_not_forever() {
        let (r, body) = exchange_with(vec![
            b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n".to_vec(),
            b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx".to_vec(),
        ])
        .await;
        assert_eq!(r.unwrap().status, 200);
        assert_eq!(body, b"x");
        let endless = b"HTTP/1.1 100 Continue\r\n\r\n".repeat(100);
        let (r, _) = exchange_with(vec![endless]).await;
        assert_eq!(kind(&r), Some(ErrorKind::Protocol));
        let (r, _) =
            exchange_with(vec![b"HTTP/1.1 101 Switching Protocols\r\n\r\n".to_vec()]).await;
        assert_eq!(kind(&r), Some(ErrorKind::Protocol));
    }

    #[tokio::test]
    async fn framing_that_could_smuggle_is_refused_or_not_reused() {
        let (r, _) = exchange_with(vec![
            b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nabc".to_vec(),
        ])
        .await;
        assert_eq!(kind(&r), Some(ErrorKind::Protocol));
        let (r, _) = exchange_with(vec![
            b"HTTP/1.1 200 OK\r\nContent-Length: +2\r\n\r\nab".to_vec()
        ])
        .await;
        assert_eq!(kind(&r), Some(ErrorKind::Protocol));
        for status in ["004", "099", "600", "999"] {
            let head = format!("HTTP/1.1 {status} X\r\nContent-Length: 0\r\n\r\n");
            let (r, _) = exchange_with(vec![head.into_bytes()]).await;
            assert_eq!(kind(&r), Some(ErrorKind::Protocol), "{status}");
        }
        let (r, body) = exchange_with(vec![
            b"HTTP/1.1 200 OK\r\nContent-Length: 50\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n0\r\n\r\n".to_vec(),
        ])
        .await;
        assert!(r.unwrap().close, "TE + CL: do not reuse");
        assert_eq!(body, b"ab");
        // Bytes beyond the response: the connection is not reused.
        let (r, _) = exchange_with(vec![
            b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 200 OK\r\n".to_vec(),
        ])
        .await;
        assert!(r.unwrap().close);
    }

    #[tokio::test]
    async fn a_head_split_across_reads_parses() {
        let whole = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nX: y\r\n\r\n3\r\nabc\r\n0\r\nT: 1\r\n\r\n";
        let chunks = whole.iter().map(|b| vec![*b]).collect();
        let (r, body) = exchange_with(chunks).await;
        assert_eq!(r.unwrap().status, 200);
        assert_eq!(body, b"abc");
    }
}
