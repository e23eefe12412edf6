//! The WebSocket lines of the terminal summary: per session step, its sessions, messages
//! and bytes each way, session duration and close codes.

use crate::format::format_ms;
use crate::protocol_values::{messages_each_way, ws_close_codes, ws_steps};
use crate::terminal_lines::kv;
use loadlab_metrics::result::RunResult;
use std::io::{self, Write};

/// One line per WebSocket step (none when the run has no session).
pub(crate) fn sessions(r: &RunResult, out: &mut dyn Write) -> io::Result<()> {
    for (s, ws) in ws_steps(&r.steps) {
        let line = format!(
            "{}: {} sessions (p50 {}), {}, closed {}",
            s.name,
            s.requests,
            format_ms(ws.session_ms.p50),
            messages_each_way(
                (ws.messages_sent, ws.message_bytes_sent),
                (ws.messages_received, ws.message_bytes_received)
            ),
            ws_close_codes(ws),
        );
        kv(out, "websocket", &line)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use loadlab_metrics::result::StepResult;
    use loadlab_metrics::WsResult;

    #[test]
    fn one_line_per_session_step() {
        let mut r = RunResult::default();
        r.steps.push(StepResult {
            name: "echo".into(),
            requests: 3,
            ws: Some(WsResult {
                messages_sent: 6,
                messages_received: 5,
                message_bytes_sent: 60,
                message_bytes_received: 50,
                close_codes: [("1000".to_string(), 2), ("1006".to_string(), 1)].into(),
                ..WsResult::default()
            }),
            ..StepResult::default()
        });
        r.steps.push(StepResult::default());
        let mut out = Vec::new();
        sessions(&r, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(text.lines().count(), 1, "{text}");
        assert!(text.contains("echo: 3 sessions"), "{text}");
        assert!(
            text.contains("6 messages sent (60 B), 5 received (50 B), closed 1000=2 1006=1"),
            "{text}"
        );
    }
}
