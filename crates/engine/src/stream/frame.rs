//! Cuts a streamed response body into events as its bytes arrive: Server-Sent Events (the
//! WHATWG event-stream rules: `data:` lines joined by `\n`, an event ends at a blank line,
//! comments and `event:`/`id:`/`retry:` fields skipped, lines ended by CRLF, LF or CR), NDJSON
//! (one event per non-empty line), or raw chunks (each read). Pure and incremental: it takes
//! complete events out of the front of a buffer and leaves the incomplete rest, so memory is
//! bounded by the largest event allowed, never by the body.

use loadlab_scenario::stream::StreamFormat;

/// Why a stream could not be cut into events.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    #[error("an event (or line) larger than {0} bytes (raise `stream.max_event` if the server sends such events)")]
    TooLarge(u64),
    #[error("an event holds bytes that are not UTF-8")]
    NotUtf8,
    #[error("the stream ended in the middle of an event")]
    EndedMidEvent,
}

/// The state kept between reads: an SSE event's data lines gathered so far.
#[derive(Debug, Clone)]
pub struct Framer {
    format: StreamFormat,
    max_event: usize,
    /// The data of the SSE event being read (lines joined by `\n`).
    data: Vec<u8>,
    /// The SSE event being read has a `data` field (an event with none is not dispatched).
    has_data: bool,
    /// The previous read ended with a CR: an LF at the start of this one belongs to it.
    after_cr: bool,
}

impl Framer {
    pub fn new(format: StreamFormat, max_event: u64) -> Self {
        Self {
            format,
            max_event: usize::try_from(max_event).unwrap_or(usize::MAX),
            data: Vec::new(),
            has_data: false,
            after_cr: false,
        }
    }

    /// Takes every complete event out of the front of `buf`, calling `on_event` with each
    /// event's data; `end`: the body is over, so a last line without its end counts (NDJSON)
    /// or is an event cut short (SSE). Errors of `on_event` stop the cutting and pass through.
    pub fn drain<E: From<FrameError>>(
        &mut self,
        buf: &mut Vec<u8>,
        end: bool,
        on_event: &mut impl FnMut(&[u8]) -> Result<(), E>,
    ) -> Result<(), E> {
        if self.format == StreamFormat::Chunks {
            if !buf.is_empty() {
                if buf.len() > self.max_event {
                    return Err(FrameError::TooLarge(self.max_event as u64).into());
                }
                let result = on_event(buf);
                buf.clear();
                result?;
            }
            return Ok(());
        }
        let mut start = 0;
        if self.after_cr && buf.first() == Some(&b'\n') {
            start = 1;
        }
        self.after_cr = false;
        let result = self.lines(buf, &mut start, end, on_event);
        buf.drain(..start);
        result
    }

    /// Reads the complete lines of `buf` from `*start` on, moving `*start` past them.
    fn lines<E: From<FrameError>>(
        &mut self,
        buf: &[u8],
        start: &mut usize,
        end: bool,
        on_event: &mut impl FnMut(&[u8]) -> Result<(), E>,
    ) -> Result<(), E> {
        while let Some(off) = buf[*start..].iter().position(|&b| b == b'\n' || b == b'\r') {
            let line = &buf[*start..*start + off];
            let mut next = *start + off + 1;
            if buf[*start + off] == b'\r' {
                match buf.get(next) {
                    Some(b'\n') => next += 1,
                    Some(_) => {}
                    // A CR ending this read: its LF may come with the next one.
                    None => self.after_cr = true,
                }
            }
            if line.len() > self.max_event {
                return Err(FrameError::TooLarge(self.max_event as u64).into());
            }
            *start = next;
            self.line(line, on_event)?;
        }
        let rest = &buf[*start..];
        if rest.len() > self.max_event {
            return Err(FrameError::TooLarge(self.max_event as u64).into());
        }
        if end {
            if self.format == StreamFormat::Ndjson && !rest.trim_ascii().is_empty() {
                let line = rest.to_vec();
                *start = buf.len();
                self.line(&line, on_event)?;
            } else if !rest.is_empty() || self.has_data {
                return Err(FrameError::EndedMidEvent.into());
            }
        }
        Ok(())
    }

    fn line<E: From<FrameError>>(
        &mut self,
        line: &[u8],
        on_event: &mut impl FnMut(&[u8]) -> Result<(), E>,
    ) -> Result<(), E> {
        if std::str::from_utf8(line).is_err() {
            return Err(FrameError::NotUtf8.into());
        }
        match self.format {
            StreamFormat::Ndjson => {
                let line = line.trim_ascii();
                if line.is_empty() {
                    return Ok(());
                }
                on_event(line)
            }
            StreamFormat::Sse => self.sse_line(line, on_event),
            StreamFormat::Chunks => unreachable!("chunks have no lines"),
        }
    }

    fn sse_line<E: From<FrameError>>(
        &mut self,
        line: &[u8],
        on_event: &mut impl FnMut(&[u8]) -> Result<(), E>,
    ) -> Result<(), E> {
        if line.is_empty() {
            if !self.has_data {
                return Ok(());
            }
            self.has_data = false;
            let result = on_event(&self.data);
            self.data.clear();
            return result;
        }
        if line[0] == b':' {
            return Ok(()); // a comment (keep-alives are often sent so)
        }
        let (field, value) = match line.iter().position(|&b| b == b':') {
            Some(i) => {
                let v = &line[i + 1..];
                (&line[..i], v.strip_prefix(b" ").unwrap_or(v))
            }
            None => (line, &b""[..]),
        };
        if field != b"data" {
            return Ok(()); // event, id, retry and unknown fields
        }
        if self.has_data {
            self.data.push(b'\n');
        }
        self.has_data = true;
        self.data.extend_from_slice(value);
        if self.data.len() > self.max_event {
            return Err(FrameError::TooLarge(self.max_event as u64).into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `reads` one by one, then ends; returns the events (as text) or the error.
    fn cut(format: StreamFormat, max: u64, reads: &[&[u8]]) -> Result<Vec<String>, FrameError> {
        let mut framer = Framer::new(format, max);
        let mut buf = Vec::new();
        let mut events = Vec::new();
        let mut push = |e: &[u8]| -> Result<(), FrameError> {
            events.push(String::from_utf8_lossy(e).into_owned());
            Ok(())
        };
        for (i, r) in reads.iter().enumerate() {
            buf.extend_from_slice(r);
            framer.drain(&mut buf, i + 1 == reads.len(), &mut push)?;
            assert!(buf.len() as u64 <= max, "the buffer stays bounded");
        }
        Ok(events)
    }

    #[test]
    fn sse_events_follow_the_event_stream_rules() {
        use StreamFormat::Sse;
        let table: &[(&[&[u8]], &[&str])] = &[
            (&[b"data: a\n\n"], &["a"]),
            (&[b"data: a\ndata: b\n\n"], &["a\nb"]),
            (&[b"data:a\r\n\r\ndata:  b\r\r"], &["a", " b"]),
            (
                &[b": keep-alive\n\nevent: x\nid: 1\ndata: y\nretry: 5\n\n"],
                &["y"],
            ),
            (&[b"event: ping\n\n", b"data\n\n"], &[""]),
            // Split anywhere, even between CR and LF.
            (&[b"da", b"ta: {\"a\"", b":1}\r", b"\n\r\n"], &["{\"a\":1}"]),
            (&[b"data: 1\n\ndata: [DONE]\n\n"], &["1", "[DONE]"]),
        ];
        for (reads, want) in table {
            let got = cut(Sse, 1024, reads).unwrap_or_else(|e| panic!("{reads:?}: {e}"));
            assert_eq!(got, *want, "{reads:?}");
        }
    }

    #[test]
    fn ndjson_and_chunks_cut_by_line_and_by_read() {
        let got = cut(
            StreamFormat::Ndjson,
            64,
            &[b"{\"a\":1}\n\n{\"b\"", b":2}\r\n{\"c\":3}"],
        );
        assert_eq!(got.unwrap(), ["{\"a\":1}", "{\"b\":2}", "{\"c\":3}"]);
        let got = cut(StreamFormat::Chunks, 64, &[b"ab", b"", b"cd"]);
        assert_eq!(got.unwrap(), ["ab", "cd"]);
    }

    #[test]
    fn hostile_streams_are_typed_errors_with_bounded_memory() {
        use StreamFormat::*;
        let endless_line = vec![b'x'; 300];
        let reads: Vec<&[u8]> = vec![&endless_line[..100], &endless_line[100..]];
        assert_eq!(cut(Sse, 128, &reads), Err(FrameError::TooLarge(128)));
        assert_eq!(cut(Ndjson, 128, &reads), Err(FrameError::TooLarge(128)));
        // An event of many short data lines that never ends.
        let many = b"data: 0123456789\n".repeat(20);
        assert_eq!(cut(Sse, 128, &[&many]), Err(FrameError::TooLarge(128)));
        assert_eq!(cut(Chunks, 4, &[b"12345"]), Err(FrameError::TooLarge(4)));
        assert_eq!(
            cut(Sse, 128, &[b"data: \xff\xfe\n\n"]),
            Err(FrameError::NotUtf8)
        );
        assert_eq!(
            cut(Sse, 128, &[b"data: a\n"]),
            Err(FrameError::EndedMidEvent)
        );
        assert_eq!(cut(Sse, 128, &[b"data: a"]), Err(FrameError::EndedMidEvent));
        assert_eq!(cut(Sse, 128, &[b"data: a\n\n: bye\n"]).unwrap(), ["a"]);
    }
}
