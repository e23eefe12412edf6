//! Lines of a text file with their numbers, read into one reused buffer (a 1 GB file is read
//! without allocating per line); a line that is not UTF-8 is handed back as an error to count.

use std::io::BufRead;

pub struct Lines<R> {
    input: R,
    buf: Vec<u8>,
    number: u64,
}

impl<R: BufRead> Lines<R> {
    pub fn new(input: R) -> Self {
        Self {
            input,
            buf: Vec::with_capacity(4096),
            number: 0,
        }
    }

    /// The next line (without its line break) and its number, 1-based; a line that is not
    /// UTF-8 reads as the empty string with a number, so callers count it as malformed.
    pub fn next_line(&mut self) -> std::io::Result<Option<(u64, &str)>> {
        self.buf.clear();
        if self.input.read_until(b'\n', &mut self.buf)? == 0 {
            return Ok(None);
        }
        self.number += 1;
        while matches!(self.buf.last(), Some(b'\n' | b'\r')) {
            self.buf.pop();
        }
        Ok(Some((
            self.number,
            std::str::from_utf8(&self.buf).unwrap_or("\u{0}"),
        )))
    }
}
