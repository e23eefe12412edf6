//! HPACK response decoding (RFC 7541): the dynamic table, integers and strings (Huffman
//! strings through `huffman`).
//! Our own because the crates on offer cost more than the rest of a request: `loona-hpack`
//! and `fluke-hpack` build a HashMap-based Huffman decoder for every Huffman string (most of
//! this client's CPU in its first profiles against nginx; bench/README.md), `httlib-hpack` copies every field
//! and drains its input buffer. `loona-hpack` stays the oracle of the tests.

use super::huffman::Huffman;
use super::recent::RecentStrings;
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

/// The most SETTINGS_HEADER_TABLE_SIZE allows: we never send one, so the default.
const MAX_TABLE_SIZE: usize = 4096;

/// A header block that breaks RFC 7541: a COMPRESSION_ERROR.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("HPACK: {0}")]
pub struct HpackError(pub &'static str);

/// The decoding state of one connection's responses.
pub struct HpackDecoder {
    huffman: Huffman,
    recent: RecentStrings,
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
            recent: RecentStrings::default(),
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
    (huffman, recent): (&Huffman, &mut RecentStrings),
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
    recent.decode(huffman, raw, scratch).map_err(HpackError)?;
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
        wanted: &impl Fn(&[u8]) -> bool,
        ns: &mut Vec<u8>,
        vs: &mut Vec<u8>,
        field: &mut impl FnMut(&[u8], &[u8]),
    ) -> Result<(), HpackError> {
        let name: &[u8] = if index == 0 {
            string((&self.huffman, &mut self.recent), block, pos, ns)?
        } else {
            let (n, _) = self.entry(index)?;
            ns.clear();
            ns.extend_from_slice(n);
            ns
        };
        // A table sized 0 (nginx sends that update first, then indexes nothing) keeps
        // nothing and is already empty.
        let stored = indexing && self.max_size > 0;
        if !stored && !name.starts_with(b":") && !wanted(name) {
            // Nobody reads this value and the table does not keep it: step over it
            // without decoding its Huffman string (a `date` on every response).
            let len = integer(block, pos, 7)?;
            if block.len() - *pos < len {
                return Err(HpackError("a string longer than its block"));
            }
            *pos += len;
            return Ok(());
        }
        let value = string((&self.huffman, &mut self.recent), block, pos, vs)?;
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
        self.decode_some(block, |_| true, field)
    }

    /// As [`HpackDecoder::decode`], but only pseudo-headers, fields that come from or go into
    /// the table and fields whose name is `wanted` are handed over (the rest are checked and
    /// skipped, their values never decoded).
    pub fn decode_some(
        &mut self,
        block: &[u8],
        wanted: impl Fn(&[u8]) -> bool,
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
                    block, &mut pos, index, indexing, &wanted, &mut ns, &mut vs, &mut field,
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
            some.decode_some(b, |_| false, |n, v| got.push((n.to_vec(), v.to_vec())))
                .unwrap();
            assert_eq!(got, want, "every field here is indexed or pseudo");
        }
        // A literal without indexing is skipped, the next field still decodes.
        let mut got = Vec::new();
        some.decode_some(
            b"\x0f\x12\x83abc\x88",
            |_| false,
            |n, v| got.push((n.to_vec(), v.to_vec())),
        )
        .unwrap();
        assert_eq!(got, [(b":status".to_vec(), b"200".to_vec())]);
        // Only the wanted name's literal is handed over: `server-timing` (no index, a new
        // name), not `age` (index 21) before it.
        let mut got = Vec::new();
        some.decode_some(
            b"\x0f\x06\x03abc\x00\x0dserver-timing\x09app;dur=1\x88",
            |n| n == b"server-timing",
            |n, v| got.push((n.to_vec(), v.to_vec())),
        )
        .unwrap();
        assert_eq!(
            got,
            [
                (b"server-timing".to_vec(), b"app;dur=1".to_vec()),
                (b":status".to_vec(), b"200".to_vec())
            ]
        );
        // nginx: a size update to 0, then literals "with indexing" that nothing keeps.
        let mut nginx = HpackDecoder::default();
        let mut got = Vec::new();
        nginx
            .decode_some(
                b"\x20\x88\x76\x83abc",
                |_| false,
                |n, v| got.push((n.to_vec(), v.to_vec())),
            )
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
