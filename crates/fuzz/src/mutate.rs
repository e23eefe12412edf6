//! Inputs made from a corpus: a seed, then a few edits — bytes flipped, inserted, deleted or
//! repeated, hostile tokens from a dictionary, splices from other seeds. Positions are kept
//! abstract (taken modulo the length when applied) so that proptest can shrink them.

use proptest::prelude::*;
use std::sync::Arc;

/// Tokens that have broken parsers before, or would: numbers beyond every limit, template and
/// YAML syntax, line breaks, a byte-order mark, credentials, deep brackets.
pub const DICTIONARY: &[&str] = &[
    "1e20",
    "18446744073709551616",
    "-1",
    "0",
    "0s",
    ".nan",
    ".inf",
    "4294967295",
    "1e12/s",
    "720h",
    "{{",
    "}}",
    "{{ vu }}",
    "{{ env.HOME }}",
    "{{ random_int(1, 9223372036854775807) }}",
    "{{ random_string(4096) }}",
    "{{ users.name }}",
    "{{ token }}",
    "\r\n",
    "\n",
    "\r",
    "\0",
    "\t",
    "\u{feff}",
    "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[",
    "]",
    "{",
    "}",
    "&a ",
    "*a",
    "<<: *a",
    "!!binary ",
    "'",
    "\"",
    ": ",
    "- ",
    "\n  ",
    "study:",
    "capacity:",
    "load: {model: open, rate: 1e12/s, duration: 720h}\n",
    "model: burst",
    "http://u:p@127.0.0.1:1/",
    "%",
    "%0D%0A",
    "µs",
    "..",
    "$.a[-1]",
    "Transfer-Encoding: chunked\r\n",
    "Content-Length: 18446744073709551616\r\n",
    "Content-Length: 5\r\n",
    "HTTP/1.1 100 Continue\r\n\r\n",
    "HTTP/1.1 200 OK\r\n",
    "ffffffffffffffff\r\n",
    "0\r\n\r\n",
    ";ext=1",
    "\"schema\": \"loadlab.run.v1\"",
    "NaN",
    "1e999",
    "-0",
    "null",
    "[]",
    "{}",
];

/// One edit. Offsets and lengths are reduced modulo the input's length when applied.
#[derive(Debug, Clone)]
pub enum Mutation {
    Flip {
        at: usize,
        byte: u8,
    },
    Insert {
        at: usize,
        byte: u8,
    },
    Delete {
        at: usize,
        len: usize,
    },
    Repeat {
        at: usize,
        len: usize,
        times: u8,
    },
    Token {
        at: usize,
        token: usize,
    },
    Splice {
        at: usize,
        seed: usize,
        from: usize,
        len: usize,
    },
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        1 => (any::<usize>(), any::<u8>()).prop_map(|(at, byte)| Mutation::Flip { at, byte }),
        1 => (any::<usize>(), any::<u8>()).prop_map(|(at, byte)| Mutation::Insert { at, byte }),
        1 => (any::<usize>(), 1usize..64).prop_map(|(at, len)| Mutation::Delete { at, len }),
        1 => (any::<usize>(), 1usize..32, 2u8..16)
            .prop_map(|(at, len, times)| Mutation::Repeat { at, len, times }),
        3 => (any::<usize>(), 0..DICTIONARY.len())
            .prop_map(|(at, token)| Mutation::Token { at, token }),
        1 => (any::<usize>(), any::<usize>(), any::<usize>(), 1usize..256)
            .prop_map(|(at, seed, from, len)| Mutation::Splice { at, seed, from, len }),
    ]
}

/// A seed of `corpus` with up to `max_edits` mutations applied.
pub fn mutated(corpus: Vec<Vec<u8>>, max_edits: usize) -> impl Strategy<Value = Vec<u8>> {
    let corpus = Arc::new(corpus);
    let count = corpus.len();
    (
        0..count,
        proptest::collection::vec(mutation(), 0..=max_edits),
    )
        .prop_map(move |(seed, edits)| {
            let mut data = corpus[seed].clone();
            for edit in &edits {
                apply(&mut data, edit, &corpus);
            }
            data
        })
}

fn apply(data: &mut Vec<u8>, edit: &Mutation, corpus: &[Vec<u8>]) {
    let len = data.len();
    let at = |at: usize| if len == 0 { 0 } else { at % (len + 1) };
    match *edit {
        Mutation::Flip { at: i, byte } if len > 0 => data[i % len] = byte,
        Mutation::Flip { .. } => {}
        Mutation::Insert { at: i, byte } => data.insert(at(i), byte),
        Mutation::Delete { at: i, len: n } => {
            let start = at(i).min(len);
            let end = (start + n).min(len);
            data.drain(start..end);
        }
        Mutation::Repeat {
            at: i,
            len: n,
            times,
        } => {
            let start = at(i).min(len);
            let end = (start + n).min(len);
            let piece = data[start..end].to_vec();
            for _ in 1..times {
                data.splice(end..end, piece.iter().copied());
            }
        }
        Mutation::Token { at: i, token } => {
            let i = at(i);
            data.splice(i..i, DICTIONARY[token].bytes());
        }
        Mutation::Splice {
            at: i,
            seed,
            from,
            len: n,
        } => {
            let other = &corpus[seed % corpus.len()];
            if other.is_empty() {
                return;
            }
            let start = from % other.len();
            let end = (start + n).min(other.len());
            let i = at(i);
            data.splice(i..i, other[start..end].iter().copied());
        }
    }
}
