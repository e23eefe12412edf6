//! What gRPC calls add to a step's counters: calls by the `grpc-status` they ended with, and
//! messages and their payload bytes each way (a server stream answers many). They add exactly
//! (merges stay exact), are written in the record's counters line (`grpc`), and shown in
//! `run.json` beside the step.

use crate::error_kind::ErrorKind;
use crate::message_counts::MessageCounts;
use crate::result::LatencySummary;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A gRPC status code (the `grpc-status` trailer), as the gRPC spec names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum GrpcCode {
    Ok = 0,
    Cancelled = 1,
    Unknown = 2,
    InvalidArgument = 3,
    DeadlineExceeded = 4,
    NotFound = 5,
    AlreadyExists = 6,
    PermissionDenied = 7,
    ResourceExhausted = 8,
    FailedPrecondition = 9,
    Aborted = 10,
    OutOfRange = 11,
    Unimplemented = 12,
    Internal = 13,
    Unavailable = 14,
    DataLoss = 15,
    Unauthenticated = 16,
}

impl GrpcCode {
    pub const ALL: [GrpcCode; 17] = [
        GrpcCode::Ok,
        GrpcCode::Cancelled,
        GrpcCode::Unknown,
        GrpcCode::InvalidArgument,
        GrpcCode::DeadlineExceeded,
        GrpcCode::NotFound,
        GrpcCode::AlreadyExists,
        GrpcCode::PermissionDenied,
        GrpcCode::ResourceExhausted,
        GrpcCode::FailedPrecondition,
        GrpcCode::Aborted,
        GrpcCode::OutOfRange,
        GrpcCode::Unimplemented,
        GrpcCode::Internal,
        GrpcCode::Unavailable,
        GrpcCode::DataLoss,
        GrpcCode::Unauthenticated,
    ];

    /// The code a `grpc-status` value stands for; codes above 16 are `UNKNOWN`, as the spec
    /// tells clients to read them.
    pub fn from_u32(code: u32) -> GrpcCode {
        GrpcCode::ALL
            .get(code as usize)
            .copied()
            .unwrap_or(GrpcCode::Unknown)
    }

    pub fn as_u8(self) -> u8 {
        self as u8
    }

    /// The spec's name: `OK`, `UNAVAILABLE`, `DEADLINE_EXCEEDED`...
    pub fn name(self) -> &'static str {
        match self {
            GrpcCode::Ok => "OK",
            GrpcCode::Cancelled => "CANCELLED",
            GrpcCode::Unknown => "UNKNOWN",
            GrpcCode::InvalidArgument => "INVALID_ARGUMENT",
            GrpcCode::DeadlineExceeded => "DEADLINE_EXCEEDED",
            GrpcCode::NotFound => "NOT_FOUND",
            GrpcCode::AlreadyExists => "ALREADY_EXISTS",
            GrpcCode::PermissionDenied => "PERMISSION_DENIED",
            GrpcCode::ResourceExhausted => "RESOURCE_EXHAUSTED",
            GrpcCode::FailedPrecondition => "FAILED_PRECONDITION",
            GrpcCode::Aborted => "ABORTED",
            GrpcCode::OutOfRange => "OUT_OF_RANGE",
            GrpcCode::Unimplemented => "UNIMPLEMENTED",
            GrpcCode::Internal => "INTERNAL",
            GrpcCode::Unavailable => "UNAVAILABLE",
            GrpcCode::DataLoss => "DATA_LOSS",
            GrpcCode::Unauthenticated => "UNAUTHENTICATED",
        }
    }

    /// Reads a code as a scenario writes it: its name in any case (`OK`, `unavailable`,
    /// `Deadline_Exceeded`) or its number.
    pub fn parse(text: &str) -> Option<GrpcCode> {
        let text = text.trim();
        if let Ok(n) = text.parse::<u32>() {
            return (n <= 16).then(|| GrpcCode::from_u32(n));
        }
        GrpcCode::ALL
            .into_iter()
            .find(|c| c.name().eq_ignore_ascii_case(text))
    }

    /// The error kind a call that ended with this code counts as (none for `OK`).
    pub fn error_kind(self) -> Option<ErrorKind> {
        ErrorKind::from_grpc(self)
    }
}

impl std::fmt::Display for GrpcCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A step's gRPC counters in one interval (or summed over many): its endings are
/// (grpc-status code, calls). A call whose timeout passed counts as `DEADLINE_EXCEEDED`, as
/// gRPC clients count it; calls that ended without a status (the connection failed, the
/// stream was reset) are not among them: they count under their error kind only.
pub type GrpcCounts = MessageCounts<u8>;

/// The counters as a counters line holds them (short keys: one per step and interval).
#[derive(Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct GrpcLine {
    #[serde(default)]
    pub ms: u64,
    #[serde(default)]
    pub mr: u64,
    #[serde(default)]
    pub bs: u64,
    #[serde(default)]
    pub br: u64,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub st: BTreeMap<u8, u64>,
}

impl From<&GrpcCounts> for GrpcLine {
    fn from(c: &GrpcCounts) -> Self {
        Self {
            ms: c.messages_sent,
            mr: c.messages_received,
            bs: c.bytes_sent,
            br: c.bytes_received,
            st: c.endings.iter().copied().collect(),
        }
    }
}

impl From<GrpcLine> for GrpcCounts {
    fn from(l: GrpcLine) -> Self {
        Self {
            messages_sent: l.ms,
            messages_received: l.mr,
            bytes_sent: l.bs,
            bytes_received: l.br,
            endings: l.st.into_iter().collect(),
        }
    }
}

/// A gRPC step's figures in `run.json` (the step's requests are its calls, their latency
/// the whole call's, to the trailers).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GrpcResult {
    /// Calls by the status they ended with, by name (`OK`, `UNAVAILABLE`...).
    #[serde(default)]
    pub status_codes: BTreeMap<String, u64>,
    pub messages_sent: u64,
    pub messages_received: u64,
    pub message_bytes_sent: u64,
    pub message_bytes_received: u64,
    /// Server-streaming calls: from the call's start to its first response message (empty,
    /// count 0, for a unary step).
    #[serde(default)]
    pub first_message_ms: LatencySummary,
}

impl GrpcResult {
    pub fn of(c: &GrpcCounts, first_message: LatencySummary) -> Self {
        Self {
            status_codes: c
                .endings
                .iter()
                .map(|&(code, n)| (GrpcCode::from_u32(code.into()).name().to_string(), n))
                .collect(),
            messages_sent: c.messages_sent,
            messages_received: c.messages_received,
            message_bytes_sent: c.bytes_sent,
            message_bytes_received: c.bytes_received,
            first_message_ms: first_message,
        }
    }

    /// Calls that ended with a status, whatever it was.
    pub fn calls(&self) -> u64 {
        self.status_codes.values().sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_parse_by_name_or_number_and_name_their_error_kind() {
        let table = [
            ("OK", Some(GrpcCode::Ok)),
            ("unavailable", Some(GrpcCode::Unavailable)),
            ("Deadline_Exceeded", Some(GrpcCode::DeadlineExceeded)),
            ("14", Some(GrpcCode::Unavailable)),
            ("17", None),
            ("NOPE", None),
        ];
        for (text, want) in table {
            assert_eq!(GrpcCode::parse(text), want, "{text}");
        }
        assert_eq!(GrpcCode::from_u32(99), GrpcCode::Unknown);
        assert_eq!(GrpcCode::Ok.error_kind(), None);
        for code in &GrpcCode::ALL[1..] {
            let kind = code
                .error_kind()
                .expect("every code but OK is an error kind");
            assert_eq!(
                kind.as_str(),
                format!("grpc_{}", code.name().to_lowercase())
            );
        }
    }

    #[test]
    fn counts_add_exactly_and_round_trip_through_a_line() {
        let mut sum = GrpcCounts {
            endings: vec![(0, 5)],
            messages_sent: 5,
            messages_received: 9,
            bytes_sent: 50,
            bytes_received: 90,
        };
        sum.add(&GrpcCounts {
            endings: vec![(0, 1), (14, 2)],
            messages_sent: 3,
            ..GrpcCounts::default()
        });
        assert_eq!(sum.endings, vec![(0, 6), (14, 2)]);
        assert_eq!(sum.messages_sent, 8);
        let back: GrpcCounts = GrpcLine::from(&sum).into();
        assert_eq!(back, sum);
        let result = GrpcResult::of(&sum, LatencySummary::default());
        assert_eq!(result.status_codes["UNAVAILABLE"], 2);
        assert_eq!(result.status_codes["OK"], 6);
        assert_eq!(result.calls(), 8);
    }
}
