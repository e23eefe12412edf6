//! Skips a chunked body without copying it, tolerating any split across reads.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Size { value: u64, digits: u8 },
    SizeExtension { value: u64 },
    SizeLf { value: u64 },
    Data { remaining: u64 },
    DataCr,
    DataLf,
    TrailerStart,
    TrailerLine,
    TrailerLf { empty: bool },
    Done,
}

#[derive(Debug)]
pub struct ChunkedSkipper {
    state: State,
    /// Body bytes seen so far (for the size cap).
    pub body_bytes: u64,
}

impl Default for ChunkedSkipper {
    fn default() -> Self {
        Self::new()
    }
}

impl ChunkedSkipper {
    pub fn new() -> Self {
        Self {
            state: State::Size {
                value: 0,
                digits: 0,
            },
            body_bytes: 0,
        }
    }

    pub fn is_done(&self) -> bool {
        self.state == State::Done
    }

    /// Consumes bytes; returns how many were used (the rest belong to the next response).
    pub fn feed(&mut self, data: &[u8]) -> Result<usize, &'static str> {
        self.feed_into(data, None)
    }

    /// Like `feed`, appending the body's data bytes to `sink` when given.
    pub fn feed_into(
        &mut self,
        data: &[u8],
        mut sink: Option<&mut Vec<u8>>,
    ) -> Result<usize, &'static str> {
        let mut i = 0;
        while i < data.len() {
            let b = data[i];
            self.state = match self.state {
                State::Size { value, digits } => match b {
                    b'0'..=b'9' | b'a'..=b'f' | b'A'..=b'F' => {
                        if digits >= 15 {
                            return Err("chunk size too large");
                        }
                        let d = (b as char).to_digit(16).unwrap_or(0) as u64;
                        State::Size {
                            value: value * 16 + d,
                            digits: digits + 1,
                        }
                    }
                    b';' | b' ' | b'\t' if digits > 0 => State::SizeExtension { value },
                    b'\r' if digits > 0 => State::SizeLf { value },
                    _ => return Err("invalid chunk size"),
                },
                State::SizeExtension { value } => match b {
                    b'\r' => State::SizeLf { value },
                    _ => State::SizeExtension { value },
                },
                State::SizeLf { value } => {
                    if b != b'\n' {
                        return Err("invalid chunk size line");
                    }
                    if value == 0 {
                        State::TrailerStart
                    } else {
                        State::Data { remaining: value }
                    }
                }
                State::Data { remaining } => {
                    let take = remaining.min((data.len() - i) as u64);
                    self.body_bytes += take;
                    if let Some(sink) = sink.as_deref_mut() {
                        sink.extend_from_slice(&data[i..i + take as usize]);
                    }
                    i += take as usize;
                    self.state = if take == remaining {
                        State::DataCr
                    } else {
                        State::Data {
                            remaining: remaining - take,
                        }
                    };
                    continue;
                }
                State::DataCr => {
                    if b != b'\r' {
                        return Err("missing CRLF after chunk");
                    }
                    State::DataLf
                }
                State::DataLf => {
                    if b != b'\n' {
                        return Err("missing CRLF after chunk");
                    }
                    State::Size {
                        value: 0,
                        digits: 0,
                    }
                }
                State::TrailerStart => match b {
                    b'\r' => State::TrailerLf { empty: true },
                    _ => State::TrailerLine,
                },
                State::TrailerLine => match b {
                    b'\r' => State::TrailerLf { empty: false },
                    _ => State::TrailerLine,
                },
                State::TrailerLf { empty } => {
                    if b != b'\n' {
                        return Err("invalid trailer");
                    }
                    if empty {
                        self.state = State::Done;
                        return Ok(i + 1);
                    }
                    State::TrailerStart
                }
                State::Done => return Ok(i),
            };
            i += 1;
        }
        Ok(i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skips_split_bodies() {
        let body =
            b"4\r\nWiki\r\n5;ext=1\r\npedia\r\nE\r\n in\r\n\r\nchunks.\r\n0\r\nX-T: 1\r\n\r\nNEXT";
        let end = body.len() - 4;
        for split in 0..=end {
            let mut s = ChunkedSkipper::new();
            let a = s.feed(&body[..split]).unwrap();
            assert_eq!(a, split);
            let b = s.feed(&body[split..]).unwrap();
            assert!(s.is_done(), "split {split}");
            assert_eq!(&body[split + b..], b"NEXT");
            assert_eq!(s.body_bytes, 23);
        }
    }

    #[test]
    fn collects_data_when_asked() {
        let body = b"4\r\nWiki\r\n5\r\npedia\r\n0\r\n\r\n";
        let mut s = ChunkedSkipper::new();
        let mut out = Vec::new();
        s.feed_into(&body[..7], Some(&mut out)).unwrap();
        s.feed_into(&body[7..], Some(&mut out)).unwrap();
        assert!(s.is_done());
        assert_eq!(out, b"Wikipedia");
    }

    #[test]
    fn rejects_garbage() {
        assert!(ChunkedSkipper::new().feed(b"zz\r\n").is_err());
        assert!(ChunkedSkipper::new().feed(b"2\r\nabX").is_err());
    }
}
