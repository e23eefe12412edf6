//! The gRPC lines of the terminal summary: per gRPC step, its calls by status, messages and
//! bytes each way, and for server streams the time to the first message.

use crate::format::format_ms;
use crate::protocol_values::{grpc_statuses, grpc_steps, messages_each_way};
use crate::terminal_lines::kv;
use loadlab_metrics::result::RunResult;
use std::io::{self, Write};

/// One line per gRPC step (none when the run made no call).
pub(crate) fn calls(r: &RunResult, out: &mut dyn Write) -> io::Result<()> {
    for (s, g) in grpc_steps(&r.steps) {
        let mut line = format!(
            "{}: {} calls: {} · {}",
            s.name,
            s.requests,
            grpc_statuses(g),
            messages_each_way(
                (g.messages_sent, g.message_bytes_sent),
                (g.messages_received, g.message_bytes_received)
            ),
        );
        let first = &g.first_message_ms;
        if first.count > 0 {
            line += &format!(
                " · first message p50 {} p95 {}",
                format_ms(first.p50),
                format_ms(first.p95)
            );
        }
        kv(out, "grpc", &line)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use loadlab_metrics::result::{LatencySummary, StepResult};
    use loadlab_metrics::GrpcResult;

    #[test]
    fn one_line_per_grpc_step_with_first_message_for_streams() {
        let mut r = RunResult::default();
        r.steps.push(StepResult {
            name: "create permit".into(),
            requests: 1203,
            grpc: Some(GrpcResult {
                status_codes: [("UNAVAILABLE".to_string(), 3), ("OK".to_string(), 1200)].into(),
                messages_sent: 1203,
                messages_received: 1200,
                message_bytes_sent: 24_060,
                message_bytes_received: 36_000,
                ..GrpcResult::default()
            }),
            ..StepResult::default()
        });
        r.steps.push(StepResult::default());
        r.steps.push(StepResult {
            name: "watch".into(),
            requests: 10,
            grpc: Some(GrpcResult {
                status_codes: [("OK".to_string(), 10)].into(),
                messages_sent: 10,
                messages_received: 50,
                first_message_ms: LatencySummary {
                    count: 10,
                    p50: 2.5,
                    p95: 4.0,
                    ..LatencySummary::default()
                },
                ..GrpcResult::default()
            }),
            ..StepResult::default()
        });
        let mut out = Vec::new();
        calls(&r, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2, "{text}");
        assert_eq!(
            lines[0],
            "  grpc ..............: create permit: 1203 calls: OK 1200, UNAVAILABLE 3 · 1203 messages sent (23.5 KiB), 1200 received (35.2 KiB)"
        );
        assert!(!lines[0].contains("first message"), "unary: {text}");
        assert!(
            lines[1].ends_with("watch: 10 calls: OK 10 · 10 messages sent (0 B), 50 received (0 B) · first message p50 2.50ms p95 4.00ms"),
            "{text}"
        );
    }
}
