//! What the terminal summary and the run report both show of a run's protocol steps —
//! WebSocket sessions and gRPC calls — worded once for both, so they always agree.

use crate::format::{format_bytes, format_ms};
use loadlab_metrics::result::{LatencySummary, StepResult};
use loadlab_metrics::{GrpcCode, GrpcResult, WsResult};

/// Calls by status in the spec's order (`OK` first): `OK 1200, UNAVAILABLE 3`; `-` for none.
pub(crate) fn grpc_statuses(g: &GrpcResult) -> String {
    let mut codes: Vec<(u8, &str, u64)> = g
        .status_codes
        .iter()
        .map(|(name, &n)| {
            let rank = GrpcCode::parse(name).map_or(u8::MAX, GrpcCode::as_u8);
            (rank, name.as_str(), n)
        })
        .collect();
    codes.sort();
    let words: Vec<String> = codes
        .iter()
        .map(|(_, name, n)| format!("{name} {n}"))
        .collect();
    if words.is_empty() {
        "-".to_string()
    } else {
        words.join(", ")
    }
}

/// Sessions by close code: `1000=2 1006=1`; `-` for none.
pub(crate) fn ws_close_codes(ws: &WsResult) -> String {
    let words: Vec<String> = ws
        .close_codes
        .iter()
        .map(|(code, n)| format!("{code}={n}"))
        .collect();
    if words.is_empty() {
        "-".to_string()
    } else {
        words.join(" ")
    }
}

/// A message count with its payload bytes: `1203 (11.7 KiB)`.
pub(crate) fn messages(count: u64, bytes: u64) -> String {
    format!("{count} ({})", format_bytes(bytes as f64))
}

/// Messages each way with their bytes: `6 messages sent (60 B), 5 received (50 B)`.
pub(crate) fn messages_each_way(sent: (u64, u64), received: (u64, u64)) -> String {
    format!(
        "{} messages sent ({}), {} received ({})",
        sent.0,
        format_bytes(sent.1 as f64),
        received.0,
        format_bytes(received.1 as f64)
    )
}

/// p50, p95 and p99 of a summary, or three empty cells when nothing was measured (a unary
/// gRPC step has no first message; an older record, no session durations).
pub(crate) fn percentiles(l: &LatencySummary) -> [String; 3] {
    if l.count == 0 {
        return Default::default();
    }
    [format_ms(l.p50), format_ms(l.p95), format_ms(l.p99)]
}

/// The steps that made gRPC calls, with their figures.
pub(crate) fn grpc_steps(steps: &[StepResult]) -> impl Iterator<Item = (&StepResult, &GrpcResult)> {
    steps.iter().filter_map(|s| Some((s, s.grpc.as_ref()?)))
}

/// The steps that opened WebSocket sessions, with their figures.
pub(crate) fn ws_steps(steps: &[StepResult]) -> impl Iterator<Item = (&StepResult, &WsResult)> {
    steps.iter().filter_map(|s| Some((s, s.ws.as_ref()?)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_read_in_code_order() {
        let table: [(&[(&str, u64)], &str); 3] = [
            (&[], "-"),
            (&[("OK", 1200)], "OK 1200"),
            (
                &[("UNAVAILABLE", 3), ("OK", 1200), ("DEADLINE_EXCEEDED", 1)],
                "OK 1200, DEADLINE_EXCEEDED 1, UNAVAILABLE 3",
            ),
        ];
        for (codes, want) in table {
            let g = GrpcResult {
                status_codes: codes.iter().map(|(c, n)| (c.to_string(), *n)).collect(),
                ..GrpcResult::default()
            };
            assert_eq!(grpc_statuses(&g), want);
        }
    }

    #[test]
    fn percentiles_are_blank_when_nothing_was_measured() {
        assert_eq!(percentiles(&LatencySummary::default()), ["", "", ""]);
        let l = LatencySummary {
            count: 4,
            p50: 1.5,
            p95: 3.0,
            p99: 12.0,
            ..LatencySummary::default()
        };
        assert_eq!(percentiles(&l), ["1.50ms", "3.00ms", "12.00ms"]);
    }
}
