//! One keep-alive HTTP/1.1 connection: write a pre-built request, parse the head, skip the body.

use super::chunked::ChunkedSkipper;
use super::classify::classify_io;
use super::stream::Stream;
use crate::prepare::ServerHeader;
use crate::transport::{Failure, Response, ResponseData};
use loadlab_metrics::ErrorKind;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const INITIAL_BUFFER: usize = 4096;
const MAX_HEAD: usize = 64 * 1024;

pub struct HttpConn {
    stream: Stream,
    buf: Vec<u8>,
    start: usize,
    end: usize,
    /// At least one exchange completed on it (so a failure before any response byte is "stale").
    reused: bool,
}

enum Framing {
    None,
    Length(u64),
    Chunked,
    UntilClose,
}

impl HttpConn {
    pub fn new(stream: Stream) -> Self {
        Self {
            stream,
            buf: Vec::new(),
            start: 0,
            end: 0,
            reused: false,
        }
    }

    fn io_failure(&self, e: &std::io::Error, got_bytes: bool) -> Failure {
        Failure {
            kind: classify_io(e, false),
            message: e.to_string(),
            stale: self.reused && !got_bytes,
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
        Ok(n)
    }

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
        let mut got_bytes = self.start != self.end;
        loop {
            // Parse the head from what is buffered; read more while it is partial.
            let parsed = {
                let mut headers = [httparse::EMPTY_HEADER; 48];
                let mut resp = httparse::Response::new(&mut headers);
                match resp.parse(&self.buf[self.start..self.end]) {
                    Ok(httparse::Status::Complete(len)) => {
                        Some(head_facts(&resp, len, head_request, server))
                    }
                    Ok(httparse::Status::Partial) => None,
                    Err(e) => {
                        return Err(Failure::new(
                            ErrorKind::Protocol,
                            format!("invalid HTTP response: {e}"),
                        ))
                    }
                }
            };
            match parsed {
                Some(Err(msg)) => return Err(Failure::new(ErrorKind::Protocol, msg)),
                Some(Ok((len, status, framing, close, server_us))) => {
                    if (100..200).contains(&status) {
                        self.start += len;
                        continue; // interim response (100 Continue): the real one follows
                    }
                    let mut sink = None;
                    if let Some(k) = keep.as_deref_mut() {
                        if k.keep_head {
                            k.head
                                .extend_from_slice(&self.buf[self.start..self.start + len]);
                        }
                        if k.keep_body {
                            sink = Some(&mut k.body);
                        }
                    }
                    self.start += len;
                    let close = self.skip_body(framing, max_body, sink).await? || close;
                    self.reused = true;
                    return Ok(Response {
                        status,
                        close,
                        server_us,
                    });
                }
                None => {
                    if self.end - self.start >= MAX_HEAD {
                        return Err(Failure::new(
                            ErrorKind::Protocol,
                            "response head larger than 64 KiB",
                        ));
                    }
                    match self.fill().await {
                        Ok(0) => {
                            let e = std::io::Error::new(
                                std::io::ErrorKind::UnexpectedEof,
                                "connection closed before a complete response",
                            );
                            return Err(self.io_failure(&e, got_bytes));
                        }
                        Ok(_) => got_bytes = true,
                        Err(e) => return Err(self.io_failure(&e, got_bytes)),
                    }
                }
            }
        }
    }

    /// Discards the body; returns true if the connection cannot be reused afterwards.
    async fn skip_body(
        &mut self,
        framing: Framing,
        max_body: u64,
        mut sink: Option<&mut Vec<u8>>,
    ) -> Result<bool, Failure> {
        let too_large = || {
            Failure::new(
                ErrorKind::BodyTooLarge,
                format!("response body larger than {max_body} bytes"),
            )
        };
        let reset = |e: std::io::Error| Failure {
            kind: classify_io(&e, false),
            message: e.to_string(),
            stale: false,
        };
        match framing {
            Framing::None => Ok(false),
            Framing::Length(mut remaining) => {
                if remaining > max_body {
                    return Err(too_large());
                }
                loop {
                    let take = remaining.min((self.end - self.start) as u64) as usize;
                    if let Some(sink) = sink.as_deref_mut() {
                        sink.extend_from_slice(&self.buf[self.start..self.start + take]);
                    }
                    self.start += take;
                    remaining -= take as u64;
                    if remaining == 0 {
                        return Ok(false);
                    }
                    match self.fill().await {
                        Ok(0) => {
                            return Err(reset(std::io::Error::new(
                                std::io::ErrorKind::UnexpectedEof,
                                "connection closed mid-body",
                            )))
                        }
                        Ok(_) => {}
                        Err(e) => return Err(reset(e)),
                    }
                }
            }
            Framing::Chunked => {
                let mut skipper = ChunkedSkipper::new();
                loop {
                    let used = skipper
                        .feed_into(&self.buf[self.start..self.end], sink.as_deref_mut())
                        .map_err(|m| {
                            Failure::new(ErrorKind::Protocol, format!("invalid chunked body: {m}"))
                        })?;
                    self.start += used;
                    if skipper.body_bytes > max_body {
                        return Err(too_large());
                    }
                    if skipper.is_done() {
                        return Ok(false);
                    }
                    match self.fill().await {
                        Ok(0) => {
                            return Err(reset(std::io::Error::new(
                                std::io::ErrorKind::UnexpectedEof,
                                "connection closed mid-body",
                            )))
                        }
                        Ok(_) => {}
                        Err(e) => return Err(reset(e)),
                    }
                }
            }
            Framing::UntilClose => {
                let mut total = (self.end - self.start) as u64;
                if let Some(sink) = sink.as_deref_mut() {
                    sink.extend_from_slice(&self.buf[self.start..self.end]);
                }
                self.start = self.end;
                loop {
                    if total > max_body {
                        return Err(too_large());
                    }
                    match self.fill().await {
                        Ok(0) => return Ok(true),
                        Ok(n) => {
                            total += n as u64;
                            if let Some(sink) = sink.as_deref_mut() {
                                sink.extend_from_slice(&self.buf[self.start..self.end]);
                            }
                            self.start = self.end;
                        }
                        Err(e) => return Err(reset(e)),
                    }
                }
            }
        }
    }
}

type HeadFacts = (usize, u16, Framing, bool, Option<u64>);

fn head_facts(
    resp: &httparse::Response,
    len: usize,
    head_request: bool,
    server: &ServerHeader,
) -> Result<HeadFacts, String> {
    let status = resp.code.ok_or("response without status")?;
    let mut close = resp.version == Some(0);
    let mut length = None;
    let mut chunked = false;
    let mut server_us = None;
    for h in resp.headers.iter() {
        if let Some(us) = server.read(h.name, h.value) {
            server_us = Some(us);
            continue;
        }
        if h.name.eq_ignore_ascii_case("content-length") {
            let text = std::str::from_utf8(h.value).map_err(|_| "invalid Content-Length")?;
            length = Some(
                text.trim()
                    .parse::<u64>()
                    .map_err(|_| format!("invalid Content-Length `{text}`"))?,
            );
        } else if h.name.eq_ignore_ascii_case("transfer-encoding") {
            chunked = h
                .value
                .windows(7)
                .any(|w| w.eq_ignore_ascii_case(b"chunked"));
        } else if h.name.eq_ignore_ascii_case("connection") {
            if h.value.eq_ignore_ascii_case(b"close") {
                close = true;
            } else if h.value.eq_ignore_ascii_case(b"keep-alive") {
                close = false;
            }
        }
    }
    let framing = if head_request || status == 204 || status == 304 || (100..200).contains(&status)
    {
        Framing::None
    } else if chunked {
        Framing::Chunked
    } else if let Some(n) = length {
        Framing::Length(n)
    } else {
        close = true;
        Framing::UntilClose
    };
    Ok((len, status, framing, close, server_us))
}
