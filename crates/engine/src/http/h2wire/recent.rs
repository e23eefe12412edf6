//! The last few Huffman strings a connection decoded, found again by their encoded bytes.
//! Servers send the same values on every response (`server: nginx`, a `date` that changes
//! once a second, `content-type: text/plain`), most "with incremental indexing", so each
//! must be decoded to go into the dynamic table even when nobody reads it: comparing their
//! 5 to 25 bytes costs a fraction of decoding them bit by bit (3% of the generator's CPU
//! against nginx, issue 42).

use super::huffman::Huffman;

/// How many strings are remembered, and the longest one (encoded) that is.
const ENTRIES: usize = 8;
const MAX_LEN: usize = 64;

#[derive(Default)]
pub struct RecentStrings {
    /// (encoded, decoded), replaced in turn once full.
    entries: Vec<(Vec<u8>, Vec<u8>)>,
    next: usize,
}

impl RecentStrings {
    /// Decodes `src` onto `out` as [`Huffman::decode`] does, from memory when `src` was
    /// among the last strings decoded.
    pub fn decode(
        &mut self,
        huffman: &Huffman,
        src: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<(), &'static str> {
        if src.len() > MAX_LEN {
            return huffman.decode(src, out);
        }
        if let Some((_, decoded)) = self.entries.iter().find(|(raw, _)| raw == src) {
            out.extend_from_slice(decoded);
            return Ok(());
        }
        let start = out.len();
        huffman.decode(src, out)?;
        let decoded = &out[start..];
        if self.entries.len() < ENTRIES {
            self.entries.push((src.to_vec(), decoded.to_vec()));
        } else {
            let (raw, value) = &mut self.entries[self.next];
            raw.clear();
            raw.extend_from_slice(src);
            value.clear();
            value.extend_from_slice(decoded);
            self.next = (self.next + 1) % ENTRIES;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remembered_strings_decode_as_the_huffman_code_does() {
        let huffman = Huffman::new();
        let mut recent = RecentStrings::default();
        // RFC 7541 C.4.1: "www.example.com"; C.6.1: "private", "Mon, 21 Oct 2013 20:13:21 GMT".
        let www = b"\xf1\xe3\xc2\xe5\xf2\x3a\x6b\xa0\xab\x90\xf4\xff".as_slice();
        let private = b"\xae\xc3\x77\x1a\x4b".as_slice();
        let date = b"\xd0\x7a\xbe\x94\x10\x54\xd4\x44\xa8\x20\x05\x95\x04\x0b\x81\x66\xe0\x82\xa6\x2d\x1b\xff".as_slice();
        let want: [(&[u8], &[u8]); 3] = [
            (www, b"www.example.com"),
            (private, b"private"),
            (date, b"Mon, 21 Oct 2013 20:13:21 GMT"),
        ];
        for round in 0..3 {
            for (src, text) in want {
                let mut out = b"x".to_vec();
                recent.decode(&huffman, src, &mut out).unwrap();
                assert_eq!(&out[1..], text, "round {round}");
            }
        }
        assert_eq!(recent.entries.len(), 3);
        // More strings than it remembers: the oldest are replaced, every answer stays right.
        for n in 0..20u8 {
            let src = super::super::huffman::encode(&[b'a' + n % 26; 3]);
            let mut out = Vec::new();
            recent.decode(&huffman, &src, &mut out).unwrap();
            assert_eq!(out, [b'a' + n % 26; 3]);
        }
        assert_eq!(recent.entries.len(), ENTRIES);
        // A broken string is refused and not remembered.
        assert!(recent
            .decode(&huffman, b"\xff\xff\xff\xff", &mut Vec::new())
            .is_err());
        assert!(recent
            .entries
            .iter()
            .all(|(raw, _)| raw != b"\xff\xff\xff\xff"));
    }
}
