//! HPACK response decoding (RFC 7541): the dynamic table, integers, strings and Huffman.
//! Our own because the crates on offer cost more than the rest of a request: `loona-hpack`
//! and `fluke-hpack` build a HashMap-based Huffman decoder for every Huffman string (29% of
//! the CPU in a profile of this client against nginx), `httlib-hpack` copies every field
//! and drains its input buffer. `loona-hpack` stays the oracle of the tests.

use std::collections::VecDeque;

/// RFC 7541 Appendix A.
const STATIC: [(&[u8], &[u8]); 61] = [
    (b":authority", b""),
    (b":method", b"GET"),
    (b":method", b"POST"),
    (b":path", b"/"),
    (b":path", b"/index.html"),
    (b":scheme", b"http"),
    (b":scheme", b"https"),
    (b":status", b"200"),
    (b":status", b"204"),
    (b":status", b"206"),
    (b":status", b"304"),
    (b":status", b"400"),
    (b":status", b"404"),
    (b":status", b"500"),
    (b"accept-charset", b""),
    (b"accept-encoding", b"gzip, deflate"),
    (b"accept-language", b""),
    (b"accept-ranges", b""),
    (b"accept", b""),
    (b"access-control-allow-origin", b""),
    (b"age", b""),
    (b"allow", b""),
    (b"authorization", b""),
    (b"cache-control", b""),
    (b"content-disposition", b""),
    (b"content-encoding", b""),
    (b"content-language", b""),
    (b"content-length", b""),
    (b"content-location", b""),
    (b"content-range", b""),
    (b"content-type", b""),
    (b"cookie", b""),
    (b"date", b""),
    (b"etag", b""),
    (b"expect", b""),
    (b"expires", b""),
    (b"from", b""),
    (b"host", b""),
    (b"if-match", b""),
    (b"if-modified-since", b""),
    (b"if-none-match", b""),
    (b"if-range", b""),
    (b"if-unmodified-since", b""),
    (b"last-modified", b""),
    (b"link", b""),
    (b"location", b""),
    (b"max-forwards", b""),
    (b"proxy-authenticate", b""),
    (b"proxy-authorization", b""),
    (b"range", b""),
    (b"referer", b""),
    (b"refresh", b""),
    (b"retry-after", b""),
    (b"server", b""),
    (b"set-cookie", b""),
    (b"strict-transport-security", b""),
    (b"transfer-encoding", b""),
    (b"user-agent", b""),
    (b"vary", b""),
    (b"via", b""),
    (b"www-authenticate", b""),
];

/// RFC 7541 Appendix B: (code, length in bits) for symbols 0..=256 (256 is EOS).
const CODES: [(u32, u8); 257] = [
    (0x1ff8, 13),
    (0x7fffd8, 23),
    (0xfffffe2, 28),
    (0xfffffe3, 28),
    (0xfffffe4, 28),
    (0xfffffe5, 28),
    (0xfffffe6, 28),
    (0xfffffe7, 28),
    (0xfffffe8, 28),
    (0xffffea, 24),
    (0x3ffffffc, 30),
    (0xfffffe9, 28),
    (0xfffffea, 28),
    (0x3ffffffd, 30),
    (0xfffffeb, 28),
    (0xfffffec, 28),
    (0xfffffed, 28),
    (0xfffffee, 28),
    (0xfffffef, 28),
    (0xffffff0, 28),
    (0xffffff1, 28),
    (0xffffff2, 28),
    (0x3ffffffe, 30),
    (0xffffff3, 28),
    (0xffffff4, 28),
    (0xffffff5, 28),
    (0xffffff6, 28),
    (0xffffff7, 28),
    (0xffffff8, 28),
    (0xffffff9, 28),
    (0xffffffa, 28),
    (0xffffffb, 28),
    (0x14, 6),
    (0x3f8, 10),
    (0x3f9, 10),
    (0xffa, 12),
    (0x1ff9, 13),
    (0x15, 6),
    (0xf8, 8),
    (0x7fa, 11),
    (0x3fa, 10),
    (0x3fb, 10),
    (0xf9, 8),
    (0x7fb, 11),
    (0xfa, 8),
    (0x16, 6),
    (0x17, 6),
    (0x18, 6),
    (0x0, 5),
    (0x1, 5),
    (0x2, 5),
    (0x19, 6),
    (0x1a, 6),
    (0x1b, 6),
    (0x1c, 6),
    (0x1d, 6),
    (0x1e, 6),
    (0x1f, 6),
    (0x5c, 7),
    (0xfb, 8),
    (0x7ffc, 15),
    (0x20, 6),
    (0xffb, 12),
    (0x3fc, 10),
    (0x1ffa, 13),
    (0x21, 6),
    (0x5d, 7),
    (0x5e, 7),
    (0x5f, 7),
    (0x60, 7),
    (0x61, 7),
    (0x62, 7),
    (0x63, 7),
    (0x64, 7),
    (0x65, 7),
    (0x66, 7),
    (0x67, 7),
    (0x68, 7),
    (0x69, 7),
    (0x6a, 7),
    (0x6b, 7),
    (0x6c, 7),
    (0x6d, 7),
    (0x6e, 7),
    (0x6f, 7),
    (0x70, 7),
    (0x71, 7),
    (0x72, 7),
    (0xfc, 8),
    (0x73, 7),
    (0xfd, 8),
    (0x1ffb, 13),
    (0x7fff0, 19),
    (0x1ffc, 13),
    (0x3ffc, 14),
    (0x22, 6),
    (0x7ffd, 15),
    (0x3, 5),
    (0x23, 6),
    (0x4, 5),
    (0x24, 6),
    (0x5, 5),
    (0x25, 6),
    (0x26, 6),
    (0x27, 6),
    (0x6, 5),
    (0x74, 7),
    (0x75, 7),
    (0x28, 6),
    (0x29, 6),
    (0x2a, 6),
    (0x7, 5),
    (0x2b, 6),
    (0x76, 7),
    (0x2c, 6),
    (0x8, 5),
    (0x9, 5),
    (0x2d, 6),
    (0x77, 7),
    (0x78, 7),
    (0x79, 7),
    (0x7a, 7),
    (0x7b, 7),
    (0x7ffe, 15),
    (0x7fc, 11),
    (0x3ffd, 14),
    (0x1ffd, 13),
    (0xffffffc, 28),
    (0xfffe6, 20),
    (0x3fffd2, 22),
    (0xfffe7, 20),
    (0xfffe8, 20),
    (0x3fffd3, 22),
    (0x3fffd4, 22),
    (0x3fffd5, 22),
    (0x7fffd9, 23),
    (0x3fffd6, 22),
    (0x7fffda, 23),
    (0x7fffdb, 23),
    (0x7fffdc, 23),
    (0x7fffdd, 23),
    (0x7fffde, 23),
    (0xffffeb, 24),
    (0x7fffdf, 23),
    (0xffffec, 24),
    (0xffffed, 24),
    (0x3fffd7, 22),
    (0x7fffe0, 23),
    (0xffffee, 24),
    (0x7fffe1, 23),
    (0x7fffe2, 23),
    (0x7fffe3, 23),
    (0x7fffe4, 23),
    (0x1fffdc, 21),
    (0x3fffd8, 22),
    (0x7fffe5, 23),
    (0x3fffd9, 22),
    (0x7fffe6, 23),
    (0x7fffe7, 23),
    (0xffffef, 24),
    (0x3fffda, 22),
    (0x1fffdd, 21),
    (0xfffe9, 20),
    (0x3fffdb, 22),
    (0x3fffdc, 22),
    (0x7fffe8, 23),
    (0x7fffe9, 23),
    (0x1fffde, 21),
    (0x7fffea, 23),
    (0x3fffdd, 22),
    (0x3fffde, 22),
    (0xfffff0, 24),
    (0x1fffdf, 21),
    (0x3fffdf, 22),
    (0x7fffeb, 23),
    (0x7fffec, 23),
    (0x1fffe0, 21),
    (0x1fffe1, 21),
    (0x3fffe0, 22),
    (0x1fffe2, 21),
    (0x7fffed, 23),
    (0x3fffe1, 22),
    (0x7fffee, 23),
    (0x7fffef, 23),
    (0xfffea, 20),
    (0x3fffe2, 22),
    (0x3fffe3, 22),
    (0x3fffe4, 22),
    (0x7ffff0, 23),
    (0x3fffe5, 22),
    (0x3fffe6, 22),
    (0x7ffff1, 23),
    (0x3ffffe0, 26),
    (0x3ffffe1, 26),
    (0xfffeb, 20),
    (0x7fff1, 19),
    (0x3fffe7, 22),
    (0x7ffff2, 23),
    (0x3fffe8, 22),
    (0x1ffffec, 25),
    (0x3ffffe2, 26),
    (0x3ffffe3, 26),
    (0x3ffffe4, 26),
    (0x7ffffde, 27),
    (0x7ffffdf, 27),
    (0x3ffffe5, 26),
    (0xfffff1, 24),
    (0x1ffffed, 25),
    (0x7fff2, 19),
    (0x1fffe3, 21),
    (0x3ffffe6, 26),
    (0x7ffffe0, 27),
    (0x7ffffe1, 27),
    (0x3ffffe7, 26),
    (0x7ffffe2, 27),
    (0xfffff2, 24),
    (0x1fffe4, 21),
    (0x1fffe5, 21),
    (0x3ffffe8, 26),
    (0x3ffffe9, 26),
    (0xffffffd, 28),
    (0x7ffffe3, 27),
    (0x7ffffe4, 27),
    (0x7ffffe5, 27),
    (0xfffec, 20),
    (0xfffff3, 24),
    (0xfffed, 20),
    (0x1fffe6, 21),
    (0x3fffe9, 22),
    (0x1fffe7, 21),
    (0x1fffe8, 21),
    (0x7ffff3, 23),
    (0x3fffea, 22),
    (0x3fffeb, 22),
    (0x1ffffee, 25),
    (0x1ffffef, 25),
    (0xfffff4, 24),
    (0xfffff5, 24),
    (0x3ffffea, 26),
    (0x7ffff4, 23),
    (0x3ffffeb, 26),
    (0x7ffffe6, 27),
    (0x3ffffec, 26),
    (0x3ffffed, 26),
    (0x7ffffe7, 27),
    (0x7ffffe8, 27),
    (0x7ffffe9, 27),
    (0x7ffffea, 27),
    (0x7ffffeb, 27),
    (0xffffffe, 28),
    (0x7ffffec, 27),
    (0x7ffffed, 27),
    (0x7ffffee, 27),
    (0x7ffffef, 27),
    (0x7fffff0, 27),
    (0x3ffffee, 26),
    (0x3fffffff, 30),
];

/// The most SETTINGS_HEADER_TABLE_SIZE allows: we never send one, so the default.
const MAX_TABLE_SIZE: usize = 4096;

/// A header block that breaks RFC 7541: a COMPRESSION_ERROR.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("HPACK: {0}")]
pub struct HpackError(pub &'static str);

/// Canonical Huffman decoding: codes of one length are consecutive, so a symbol is found
/// by at most 26 comparisons of the next bits against each length's first code.
struct Huffman {
    /// By the next 8 bits: (symbol, length) of codes up to 8 bits long (digits, letters
    /// and most punctuation), length 0 for longer codes.
    short: [(u8, u8); 256],
    first: [u32; 31],
    count: [u32; 31],
    offset: [u16; 31],
    symbols: [u16; 257],
}

impl Huffman {
    fn new() -> Self {
        let mut symbols = [0u16; 257];
        for (i, s) in symbols.iter_mut().enumerate() {
            *s = i as u16;
        }
        symbols.sort_by_key(|&s| (CODES[s as usize].1, CODES[s as usize].0));
        let (mut first, mut count, mut offset) = ([0u32; 31], [0u32; 31], [0u16; 31]);
        for (at, &s) in symbols.iter().enumerate().rev() {
            let (code, len) = CODES[s as usize];
            first[len as usize] = code;
            offset[len as usize] = at as u16;
            count[len as usize] += 1;
        }
        let mut short = [(0u8, 0u8); 256];
        for (sym, &(code, len)) in CODES.iter().enumerate().take(256) {
            if len <= 8 {
                let base = (code as usize) << (8 - len);
                for fill in 0..1usize << (8 - len) {
                    short[base | fill] = (sym as u8, len);
                }
            }
        }
        Huffman {
            short,
            first,
            count,
            offset,
            symbols,
        }
    }

    fn decode(&self, src: &[u8], out: &mut Vec<u8>) -> Result<(), HpackError> {
        // `acc` holds `bits` unread bits, left-aligned.
        let (mut acc, mut bits, mut i) = (0u64, 0u32, 0usize);
        loop {
            while bits <= 56 && i < src.len() {
                acc |= (src[i] as u64) << (56 - bits);
                bits += 8;
                i += 1;
            }
            if bits == 0 {
                return Ok(());
            }
            let (sym, len) = self.short[(acc >> 56) as usize];
            if len != 0 && len as u32 <= bits {
                out.push(sym);
                acc <<= len;
                bits -= len as u32;
                continue;
            }
            let mut found = false;
            for len in 9..=30u32.min(bits) {
                let code = (acc >> (64 - len)) as u32;
                let k = code.wrapping_sub(self.first[len as usize]);
                if k < self.count[len as usize] {
                    let sym = self.symbols[self.offset[len as usize] as usize + k as usize];
                    if sym == 256 {
                        return Err(HpackError("EOS inside a Huffman string"));
                    }
                    out.push(sym as u8);
                    acc <<= len;
                    bits -= len;
                    found = true;
                    break;
                }
            }
            if !found {
                // What is left must be padding: fewer than 8 bits, all ones (§5.2).
                let ones = (1u64 << bits) - 1;
                if bits < 8 && acc >> (64 - bits) == ones {
                    return Ok(());
                }
                return Err(HpackError("bad Huffman padding"));
            }
        }
    }
}

/// The decoding state of one connection's responses.
pub struct HpackDecoder {
    huffman: Huffman,
    /// Newest first: (name and value in one buffer, name length).
    dynamic: VecDeque<(Vec<u8>, usize)>,
    size: usize,
    max_size: usize,
    /// Buffers of evicted entries, reused for new ones.
    spare: Vec<Vec<u8>>,
    name: Vec<u8>,
    value: Vec<u8>,
}

impl Default for HpackDecoder {
    fn default() -> Self {
        HpackDecoder {
            huffman: Huffman::new(),
            dynamic: VecDeque::new(),
            size: 0,
            max_size: MAX_TABLE_SIZE,
            spare: Vec::new(),
            name: Vec::new(),
            value: Vec::new(),
        }
    }
}

fn integer(block: &[u8], pos: &mut usize, prefix: u8) -> Result<usize, HpackError> {
    let short = HpackError("a truncated integer");
    let max = (1usize << prefix) - 1;
    let mut v = (*block.get(*pos).ok_or(short.clone())? as usize) & max;
    *pos += 1;
    if v < max {
        return Ok(v);
    }
    for shift in (0..28).step_by(7) {
        let b = *block.get(*pos).ok_or(short.clone())?;
        *pos += 1;
        v += ((b & 0x7f) as usize) << shift;
        if b & 0x80 == 0 {
            return Ok(v);
        }
    }
    Err(HpackError("an integer too large"))
}

fn string<'b>(
    huffman: &Huffman,
    block: &'b [u8],
    pos: &mut usize,
    scratch: &'b mut Vec<u8>,
) -> Result<&'b [u8], HpackError> {
    let huff = *block.get(*pos).ok_or(HpackError("a truncated string"))? & 0x80 != 0;
    let len = integer(block, pos, 7)?;
    let raw = block
        .get(*pos..*pos + len)
        .ok_or(HpackError("a string longer than its block"))?;
    *pos += len;
    if !huff {
        return Ok(raw);
    }
    scratch.clear();
    huffman.decode(raw, scratch)?;
    Ok(scratch)
}

impl HpackDecoder {
    fn entry(&self, index: usize) -> Result<(&[u8], &[u8]), HpackError> {
        match index {
            0 => Err(HpackError("index 0")),
            1..=61 => Ok(STATIC[index - 1]),
            _ => {
                let (buf, n) = self
                    .dynamic
                    .get(index - 62)
                    .ok_or(HpackError("an index past the dynamic table"))?;
                Ok((&buf[..*n], &buf[*n..]))
            }
        }
    }

    fn evict_to(&mut self, max: usize) {
        while self.size > max {
            let Some((buf, n)) = self.dynamic.pop_back() else {
                break;
            };
            self.size -= buf.len() + 32;
            let _ = n;
            self.spare.push(buf);
        }
    }

    fn insert(&mut self, name: &[u8], value: &[u8]) {
        let size = name.len() + value.len() + 32;
        if size > self.max_size {
            // §4.4: an entry larger than the table empties it and is not added.
            self.evict_to(0);
            return;
        }
        self.evict_to(self.max_size - size);
        let mut buf = self.spare.pop().unwrap_or_default();
        buf.clear();
        buf.extend_from_slice(name);
        buf.extend_from_slice(value);
        self.dynamic.push_front((buf, name.len()));
        self.size += size;
    }

    #[allow(clippy::too_many_arguments)]
    fn literal(
        &mut self,
        block: &[u8],
        pos: &mut usize,
        index: usize,
        indexing: bool,
        all: bool,
        ns: &mut Vec<u8>,
        vs: &mut Vec<u8>,
        field: &mut impl FnMut(&[u8], &[u8]),
    ) -> Result<(), HpackError> {
        let name: &[u8] = if index == 0 {
            string(&self.huffman, block, pos, ns)?
        } else {
            let (n, _) = self.entry(index)?;
            ns.clear();
            ns.extend_from_slice(n);
            ns
        };
        // A table sized 0 (nginx sends that update first, then indexes nothing) keeps
        // nothing and is already empty.
        let stored = indexing && self.max_size > 0;
        if !stored && !all && !name.starts_with(b":") {
            // Nobody reads this value and the table does not keep it: step over it
            // without decoding its Huffman string (a `date` on every response).
            let len = integer(block, pos, 7)?;
            if block.len() - *pos < len {
                return Err(HpackError("a string longer than its block"));
            }
            *pos += len;
            return Ok(());
        }
        let value = string(&self.huffman, block, pos, vs)?;
        field(name, value);
        if stored {
            self.insert(name, value);
        }
        Ok(())
    }

    /// Decodes a whole header block, handing each field to `field` in order.
    #[cfg(test)]
    pub fn decode(
        &mut self,
        block: &[u8],
        field: impl FnMut(&[u8], &[u8]),
    ) -> Result<(), HpackError> {
        self.decode_some(block, true, field)
    }

    /// As [`HpackDecoder::decode`]; unless `all`, only pseudo-headers and fields that come
    /// from or go into the table are handed over (the rest are checked and skipped).
    pub fn decode_some(
        &mut self,
        block: &[u8],
        all: bool,
        mut field: impl FnMut(&[u8], &[u8]),
    ) -> Result<(), HpackError> {
        let mut pos = 0;
        let mut fields = 0;
        while pos < block.len() {
            let b = block[pos];
            if b & 0x80 != 0 {
                let index = integer(block, &mut pos, 7)?;
                let (n, v) = self.entry(index)?;
                field(n, v);
            } else if b & 0xe0 == 0x20 {
                if fields > 0 {
                    return Err(HpackError("a table size update after a field"));
                }
                let max = integer(block, &mut pos, 5)?;
                if max > MAX_TABLE_SIZE {
                    return Err(HpackError("a table size past SETTINGS_HEADER_TABLE_SIZE"));
                }
                self.max_size = max;
                self.evict_to(max);
                continue;
            } else {
                let indexing = b & 0x40 != 0;
                let index = integer(block, &mut pos, if indexing { 6 } else { 4 })?;
                let mut ns = std::mem::take(&mut self.name);
                let mut vs = std::mem::take(&mut self.value);
                let r = self.literal(
                    block, &mut pos, index, indexing, all, &mut ns, &mut vs, &mut field,
                );
                self.name = ns;
                self.value = vs;
                r?;
            }
            fields += 1;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(d: &mut HpackDecoder, block: &[u8]) -> Vec<(Vec<u8>, Vec<u8>)> {
        let mut got = Vec::new();
        d.decode(block, |n, v| got.push((n.to_vec(), v.to_vec())))
            .unwrap();
        got
    }

    #[test]
    fn decodes_rfc7541_c4_and_c6_huffman_with_the_dynamic_table() {
        // RFC 7541 C.4: three requests with Huffman and indexing.
        let blocks = [
            "828684418cf1e3c2e5f23a6ba0ab90f4ff",
            "828684be5886a8eb10649cbf",
            "828785bf408825a849e95ba97d7f8925a849e95bb8e8b4bf",
        ];
        let mut ours = HpackDecoder::default();
        let mut oracle = loona_hpack::Decoder::new();
        for hex in blocks {
            let block: Vec<u8> = (0..hex.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
                .collect();
            assert_eq!(fields(&mut ours, &block), oracle.decode(&block).unwrap());
        }
        // C.6: responses with evictions at a 256-byte table.
        let blocks = [
            "488264025885aec3771a4b6196d07abe941054d444a8200595040b8166e082a62d1bff6e919d29ad171863c78f0b97c8e9ae82ae43d3",
            "4883640effc1c0bf",
            "88c16196d07abe941054d444a8200595040b8166e084a62d1bffc05a839bd9ab77ad94e7821dd7f2e6c7b335dfdfcd5b3960d5af27087f3672c1ab270fb5291f9587316065c003ed4ee5b1063d5007",
        ];
        let mut ours = HpackDecoder {
            max_size: 256,
            ..Default::default()
        };
        let mut oracle = loona_hpack::Decoder::new();
        oracle.set_max_table_size(256);
        for hex in blocks {
            let block: Vec<u8> = (0..hex.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
                .collect();
            assert_eq!(fields(&mut ours, &block), oracle.decode(&block).unwrap());
        }
        assert_eq!(ours.dynamic.len(), 3);
        assert_eq!(ours.size, 215);
    }

    #[test]
    fn huffman_round_trips_every_byte() {
        // Encode all 256 bytes with the table, then decode.
        let input: Vec<u8> = (0..=255u8)
            .chain(b"date: Sun, 06 Dec 2026".iter().copied())
            .collect();
        let (mut acc, mut bits, mut out) = (0u64, 0u32, Vec::new());
        for &b in &input {
            let (code, len) = CODES[b as usize];
            acc = acc << len | code as u64;
            bits += len as u32;
            while bits >= 8 {
                out.push((acc >> (bits - 8)) as u8);
                bits -= 8;
            }
        }
        if bits > 0 {
            out.push(((acc << (8 - bits)) as u8) | ((1u8 << (8 - bits)) - 1));
        }
        let mut decoded = Vec::new();
        Huffman::new().decode(&out, &mut decoded).unwrap();
        assert_eq!(decoded, input);
        // Padding of zeros, or of 8 bits, is an error.
        assert!(
            Huffman::new().decode(&[0x00], &mut Vec::new()).is_err() || CODES[b'0' as usize].1 == 5
        );
        assert!(Huffman::new().decode(&[0xff], &mut Vec::new()).is_err());
    }

    #[test]
    fn skipping_unwanted_values_keeps_the_table_right() {
        // C.6's first response block, then the second which refers to its entries.
        let hex = ["488264025885aec3771a4b6196d07abe941054d444a8200595040b8166e082a62d1bff6e919d29ad171863c78f0b97c8e9ae82ae43d3", "4883640effc1c0bf"];
        let blocks: Vec<Vec<u8>> = hex
            .iter()
            .map(|h| {
                (0..h.len())
                    .step_by(2)
                    .map(|i| u8::from_str_radix(&h[i..i + 2], 16).unwrap())
                    .collect()
            })
            .collect();
        let small = || HpackDecoder {
            max_size: 256,
            ..Default::default()
        };
        let (mut all, mut some) = (small(), small());
        for b in &blocks {
            let want = fields(&mut all, b);
            let mut got = Vec::new();
            some.decode_some(b, false, |n, v| got.push((n.to_vec(), v.to_vec())))
                .unwrap();
            assert_eq!(got, want, "every field here is indexed or pseudo");
        }
        // A literal without indexing is skipped, the next field still decodes.
        let mut got = Vec::new();
        some.decode_some(b"\x0f\x12\x83abc\x88", false, |n, v| {
            got.push((n.to_vec(), v.to_vec()))
        })
        .unwrap();
        assert_eq!(got, [(b":status".to_vec(), b"200".to_vec())]);
        // nginx: a size update to 0, then literals "with indexing" that nothing keeps.
        let mut nginx = HpackDecoder::default();
        let mut got = Vec::new();
        nginx
            .decode_some(b"\x20\x88\x76\x83abc", false, |n, v| {
                got.push((n.to_vec(), v.to_vec()))
            })
            .unwrap();
        assert_eq!(got, [(b":status".to_vec(), b"200".to_vec())]);
        assert!(nginx.dynamic.is_empty());
    }

    #[test]
    fn rejects_bad_blocks() {
        let mut d = HpackDecoder::default();
        assert!(d.decode(&[0x80], |_, _| {}).is_err()); // index 0
        assert!(d.decode(&[0xbe], |_, _| {}).is_err()); // 62: empty dynamic table
        assert!(d.decode(&[0x82, 0x20], |_, _| {}).is_err()); // size update after a field
        assert!(d.decode(&[0x3f, 0xe2, 0x1f], |_, _| {}).is_err()); // size 4,097
        assert!(d.decode(&[0x04, 0x05, b'a'], |_, _| {}).is_err()); // string past the block
    }
}
