//! HdrHistogram's compressed V2 encoding, made by an encoder that keeps its buffers and its
//! deflate state between histograms. HdrHistogram's `V2DeflateSerializer` allocates a new
//! compressor for every histogram (~160 KB of tables, zeroed), and the run record encodes
//! about eight histograms per 100 ms interval. Kept, the encoder only resets its tables:
//! 14.1 → 10.8 µs for a histogram of 20 values and 26.9 → 23.8 µs for one of 500 in a tight
//! loop (`bench/histogram_encode.rs`), where the allocator hands the same memory back; in a
//! 5,000/s run the coordinator thread's share of the CPU fell from 7.9% and 6.7% to 6.9% and
//! 5.9% (two runs each, `perf record`). The bytes are the serializer's: the V2 counts come
//! from HdrHistogram's own `V2Serializer`, deflated at the same level by the same `flate2`.

use crate::histogram::LatencyHistogram;
use flate2::{Compress, Compression, FlushCompress, Status};
use hdrhistogram::serialization::{Serializer, V2Serializer};

/// The compressed V2 format's first word: its cookie, for 8-byte counts ("word size" 0x10).
const V2_COMPRESSED_COOKIE: u32 = 0x1c84_9304 | 0x10;

/// Encodes histograms one after another (one per thread that encodes: it is not shared).
pub struct HistogramEncoder {
    v2: V2Serializer,
    counts: Vec<u8>,
    compressed: Vec<u8>,
    deflate: Compress,
}

impl std::fmt::Debug for HistogramEncoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HistogramEncoder").finish_non_exhaustive()
    }
}

impl Default for HistogramEncoder {
    fn default() -> Self {
        Self::new()
    }
}

impl HistogramEncoder {
    pub fn new() -> Self {
        Self {
            v2: V2Serializer::new(),
            counts: Vec::new(),
            compressed: Vec::new(),
            // What `V2DeflateSerializer` uses: zlib framing at the default level.
            deflate: Compress::new(Compression::default(), true),
        }
    }

    /// The compressed V2 bytes of `h` (valid until the next call).
    pub fn encode_bytes(&mut self, h: &LatencyHistogram) -> &[u8] {
        self.counts.clear();
        self.v2
            .serialize(h, &mut self.counts)
            .expect("serializing to memory cannot fail");
        self.deflate.reset();
        self.compressed.clear();
        self.compressed
            .extend_from_slice(&V2_COMPRESSED_COOKIE.to_be_bytes());
        self.compressed.extend_from_slice(&[0; 4]); // the payload's length, set below
        loop {
            // `compress_vec` writes into spare capacity only: deflated V2 counts are smaller
            // than the counts, so one round with this much room ends the stream.
            self.compressed.reserve(self.counts.len() / 2 + 64);
            let taken = self.deflate.total_in() as usize;
            match self.deflate.compress_vec(
                &self.counts[taken..],
                &mut self.compressed,
                FlushCompress::Finish,
            ) {
                Ok(Status::StreamEnd) => break,
                Ok(Status::Ok | Status::BufError) => continue,
                Err(e) => unreachable!("deflating into memory cannot fail: {e}"),
            }
        }
        let payload = (self.compressed.len() - 8) as u32;
        self.compressed[4..8].copy_from_slice(&payload.to_be_bytes());
        &self.compressed
    }

    /// Base64 of the compressed V2 bytes, as `run.json` and the interval log carry them.
    pub fn encode(&mut self, h: &LatencyHistogram) -> String {
        use base64::Engine;
        base64::engine::general_purpose::STANDARD.encode(self.encode_bytes(h))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hdrhistogram::serialization::V2DeflateSerializer;

    fn histogram(values: impl IntoIterator<Item = u64>) -> LatencyHistogram {
        let mut h = crate::new_histogram();
        for v in values {
            crate::record_us(&mut h, v);
        }
        h
    }

    /// One encoder, used again and again, writes the bytes HdrHistogram's own serializer
    /// writes for each histogram, whatever came before it.
    #[test]
    fn a_reused_encoder_writes_the_serializers_bytes() {
        let mut spread = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = move || {
            spread ^= spread << 13;
            spread ^= spread >> 7;
            spread ^= spread << 17;
            spread
        };
        let shapes: Vec<(&str, LatencyHistogram)> = vec![
            ("empty", crate::new_histogram()),
            ("one value", histogram([417])),
            (
                "the top of the range",
                histogram([1, crate::MAX_TRACKABLE_US]),
            ),
            (
                "1,000 values up to 3 ms",
                histogram((0..1000).map(|_| 100 + next() % 3000)),
            ),
            (
                "50,000 values up to 20 s",
                histogram((0..50_000).map(|_| 1 + next() % 20_000_000)),
            ),
            ("one value again", histogram([9])),
        ];
        let mut encoder = HistogramEncoder::new();
        for (name, h) in &shapes {
            let mut expected = Vec::new();
            V2DeflateSerializer::new()
                .serialize(h, &mut expected)
                .unwrap();
            assert_eq!(encoder.encode_bytes(h), expected.as_slice(), "{name}");
            let back = super::super::decode_histogram(&encoder.encode(h)).unwrap();
            assert_eq!(&back, h, "{name}: decodes to the same histogram");
        }
    }
}
