//! Which protocol a connection actually spoke (what ALPN or h2c prior knowledge settled), so a
//! run states what it measured, not only what the scenario asked for.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Protocol {
    /// HTTP/1.1, over plain TCP or TLS.
    #[serde(rename = "http/1.1")]
    Http1,
    /// HTTP/2 over TLS (ALPN `h2`).
    #[serde(rename = "h2")]
    H2,
    /// HTTP/2 over plain TCP (prior knowledge).
    #[serde(rename = "h2c")]
    H2c,
}

impl Protocol {
    pub const ALL: [Protocol; 3] = [Protocol::Http1, Protocol::H2, Protocol::H2c];
    pub const COUNT: usize = Self::ALL.len();

    pub fn index(self) -> usize {
        self as usize
    }

    /// The ALPN identifier (`h2c` for HTTP/2 over plain TCP).
    pub fn as_str(self) -> &'static str {
        match self {
            Protocol::Http1 => "http/1.1",
            Protocol::H2 => "h2",
            Protocol::H2c => "h2c",
        }
    }

    pub fn is_http2(self) -> bool {
        self != Protocol::Http1
    }
}

impl std::fmt::Display for Protocol {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Protocol {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Protocol::ALL
            .into_iter()
            .find(|p| p.as_str() == s)
            .ok_or_else(|| format!("unknown protocol `{s}`"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_as_text_and_json() {
        for (i, p) in Protocol::ALL.iter().enumerate() {
            assert_eq!(p.index(), i);
            assert_eq!(p.as_str().parse::<Protocol>(), Ok(*p));
            assert_eq!(
                serde_json::to_string(p).unwrap(),
                format!("\"{}\"", p.as_str())
            );
        }
    }
}
