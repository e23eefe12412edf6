//! What WebSocket sessions add to a step's counters: messages and their payload bytes each
//! way, and the close codes sessions ended with. They add exactly (merges stay exact), are
//! written in the record's counters line (`ws`), and shown in `run.json` beside the step.

use crate::message_counts::MessageCounts;
use crate::result::LatencySummary;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Close code counted for a session whose connection ended without a close frame (RFC 6455
/// §7.1.5 reserves 1006 for exactly this; it is never sent on the wire).
pub const CLOSE_ABNORMAL: u16 = 1006;

/// A step's WebSocket counters in one interval (or summed over many): its endings are
/// (close code, sessions).
pub type WsCounts = MessageCounts<u16>;

/// The counters as a counters line holds them (short keys: one per step and interval).
#[derive(Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct WsLine {
    #[serde(default)]
    pub ms: u64,
    #[serde(default)]
    pub mr: u64,
    #[serde(default)]
    pub bs: u64,
    #[serde(default)]
    pub br: u64,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub close: BTreeMap<u16, u64>,
}

impl From<&WsCounts> for WsLine {
    fn from(c: &WsCounts) -> Self {
        Self {
            ms: c.messages_sent,
            mr: c.messages_received,
            bs: c.bytes_sent,
            br: c.bytes_received,
            close: c.endings.iter().copied().collect(),
        }
    }
}

impl From<WsLine> for WsCounts {
    fn from(l: WsLine) -> Self {
        Self {
            messages_sent: l.ms,
            messages_received: l.mr,
            bytes_sent: l.bs,
            bytes_received: l.br,
            endings: l.close.into_iter().collect(),
        }
    }
}

/// A WebSocket step's figures in `run.json` (the step's requests are its sessions, their
/// latency the upgrade's).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WsResult {
    pub messages_sent: u64,
    pub messages_received: u64,
    pub message_bytes_sent: u64,
    pub message_bytes_received: u64,
    /// Sessions by the close code they ended with (`1006`: no close frame).
    #[serde(default)]
    pub close_codes: BTreeMap<String, u64>,
    /// How long sessions lasted, upgrade to close.
    #[serde(default)]
    pub session_ms: LatencySummary,
}

impl WsResult {
    pub fn of(c: &WsCounts, session: LatencySummary) -> Self {
        Self {
            messages_sent: c.messages_sent,
            messages_received: c.messages_received,
            message_bytes_sent: c.bytes_sent,
            message_bytes_received: c.bytes_received,
            close_codes: c.endings.iter().map(|(c, n)| (c.to_string(), *n)).collect(),
            session_ms: session,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_add_exactly_and_round_trip_through_a_line() {
        let a = WsCounts {
            messages_sent: 3,
            messages_received: 5,
            bytes_sent: 30,
            bytes_received: 50,
            endings: vec![(1000, 2)],
        };
        let b = WsCounts {
            messages_sent: 1,
            endings: vec![(1000, 1), (1006, 1)],
            ..WsCounts::default()
        };
        let mut sum = a.clone();
        sum.add(&b);
        assert_eq!(sum.messages_sent, 4);
        assert_eq!(sum.endings, vec![(1000, 3), (1006, 1)]);
        let back: WsCounts = WsLine::from(&sum).into();
        assert_eq!(back, sum);
    }
}
