//! Counts gRPC messages in a response body as its chunks arrive, without keeping them: a
//! message is counted when its last byte is in, and the first one's arrival is noted (the
//! time to first message of a server stream).

use tokio::time::Instant;

use super::PREFIX;

#[derive(Debug, Default, Clone, Copy)]
pub struct FrameCounter {
    prefix: [u8; PREFIX],
    /// Bytes of the current frame's prefix read so far.
    have: usize,
    /// Payload bytes of the current message still to come (after its prefix).
    remaining: u64,
    pub messages: u64,
    pub payload_bytes: u64,
    pub first_message: Option<Instant>,
}

impl FrameCounter {
    /// Reads one chunk of the body, received at `now`.
    pub fn feed(&mut self, mut chunk: &[u8], now: Instant) {
        while !chunk.is_empty() {
            if self.have < PREFIX {
                let take = (PREFIX - self.have).min(chunk.len());
                self.prefix[self.have..self.have + take].copy_from_slice(&chunk[..take]);
                self.have += take;
                chunk = &chunk[take..];
                if self.have < PREFIX {
                    return;
                }
                let p = self.prefix;
                self.remaining = u64::from(u32::from_be_bytes([p[1], p[2], p[3], p[4]]));
                self.payload_bytes += self.remaining;
            }
            let take = (self.remaining as usize).min(chunk.len());
            self.remaining -= take as u64;
            chunk = &chunk[take..];
            if self.remaining == 0 {
                self.messages += 1;
                self.first_message.get_or_insert(now);
                self.have = 0;
            }
        }
    }

    /// The body ended in the middle of a frame.
    pub fn truncated(&self) -> bool {
        self.have > 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(payload: &[u8]) -> Vec<u8> {
        let mut f = vec![0];
        f.extend_from_slice(&(payload.len() as u32).to_be_bytes());
        f.extend_from_slice(payload);
        f
    }

    #[test]
    fn counts_messages_whatever_the_chunking() {
        let mut body = frame(b"abc");
        body.extend(frame(b""));
        body.extend(frame(&[7; 300]));
        let now = Instant::now();
        for size in [1, 2, 5, 7, 64, body.len()] {
            let mut c = FrameCounter::default();
            for chunk in body.chunks(size) {
                c.feed(chunk, now);
            }
            assert_eq!((c.messages, c.payload_bytes), (3, 303), "chunks of {size}");
            assert!(!c.truncated());
            assert_eq!(c.first_message, Some(now));
        }
        let mut c = FrameCounter::default();
        c.feed(&body[..body.len() - 1], now);
        assert_eq!(c.messages, 2);
        assert!(c.truncated());
    }
}
