//! The "Protocols" section of the Markdown and HTML run reports, and the protocol lines of
//! the terminal summary: a run with a WebSocket step and a gRPC step shows their messages,
//! bytes, close codes, statuses and percentiles; a plain HTTP run shows none of it.

mod common;

use loadlab_metrics::result::StepResult;
use loadlab_metrics::{GrpcResult, WsResult};
use loadlab_report::{render_html, render_markdown, render_summary, run_report, RunResult, Style};

/// The sample run with a WebSocket step (`chat`) and two gRPC steps: a unary one
/// (`create permit`) and a server stream (`watch permits`).
fn with_protocols() -> RunResult {
    let mut r = common::sample();
    let chat = StepResult {
        name: "chat".into(),
        requests: 40,
        ws: Some(WsResult {
            messages_sent: 400,
            messages_received: 398,
            message_bytes_sent: 12_800,
            message_bytes_received: 2_048_000,
            close_codes: [("1000".to_string(), 38), ("1006".to_string(), 2)].into(),
            session_ms: common::lat(
                900.0, 1010.0, 1002.0, 1040.0, 1065.0, 1180.0, 1190.0, 1200.0,
            ),
        }),
        ..StepResult::default()
    };
    let create = StepResult {
        name: "create permit".into(),
        requests: 1_204,
        grpc: Some(GrpcResult {
            status_codes: [("OK".to_string(), 1_200), ("UNAVAILABLE".to_string(), 3)].into(),
            messages_sent: 1_203,
            messages_received: 1_200,
            message_bytes_sent: 48_120,
            message_bytes_received: 96_000,
            ..GrpcResult::default()
        }),
        ..StepResult::default()
    };
    let watch = StepResult {
        name: "watch permits".into(),
        requests: 50,
        grpc: Some(GrpcResult {
            status_codes: [("OK".to_string(), 50)].into(),
            messages_sent: 50,
            messages_received: 250,
            message_bytes_sent: 500,
            message_bytes_received: 10_000,
            first_message_ms: common::lat(0.8, 1.9, 1.7, 3.1, 3.6, 7.25, 8.0, 8.1),
        }),
        ..StepResult::default()
    };
    r.steps.extend([chat, create, watch]);
    r
}

fn markdown(r: &RunResult) -> String {
    render_markdown(&run_report(r, None), "charts").text
}

/// The Markdown lines of a section, from its heading to the next section.
fn section<'a>(md: &'a str, title: &str) -> &'a str {
    let start = md
        .find(&format!("## {title}\n"))
        .unwrap_or_else(|| panic!("no {title} section in:\n{md}"));
    let rest = &md[start..];
    let end = rest[3..].find("\n## ").map_or(rest.len(), |e| e + 3);
    &rest[..end]
}

#[test]
fn markdown_report_shows_websocket_and_grpc_figures() {
    let md = markdown(&with_protocols());
    let s = section(&md, "Protocols");
    println!("{s}");
    assert!(s.contains("### WebSocket"), "{s}");
    assert!(
        s.contains("| `chat` | 40 | 400 (12.5 KiB) | 398 (2.0 MiB) | 1000=38 1006=2 | 1.00s | 1.06s | 1.18s |"),
        "{s}"
    );
    assert!(s.contains("### gRPC"), "{s}");
    assert!(
        s.contains("| `create permit` | 1204 | OK 1200, UNAVAILABLE 3 | 1203 (47.0 KiB) | 1200 (93.8 KiB) |  |  |  |"),
        "a unary step has no first-message figures: {s}"
    );
    assert!(
        s.contains("| `watch permits` | 50 | OK 50 | 50 (500 B) | 250 (9.8 KiB) | 1.70ms | 3.60ms | 7.25ms |"),
        "{s}"
    );
    // HTTP steps are not protocol rows.
    assert!(!s.contains("POST /cart"), "{s}");
    // It comes right after the results.
    assert!(md.find("## Protocols").unwrap() > md.find("## Results").unwrap());
}

#[test]
fn html_report_shows_the_same_figures() {
    let html = render_html(&run_report(&with_protocols(), None));
    let start = html
        .find("<section id=\"protocols\">")
        .expect("a protocols section");
    let s = &html[start..start + html[start..].find("</section>").unwrap()];
    assert!(s.contains("<h2>Protocols</h2>"), "{s}");
    assert!(
        s.contains("<h3>WebSocket</h3>") && s.contains("<h3>gRPC</h3>"),
        "{s}"
    );
    for cell in [
        "<code>chat</code>",
        "1000=38 1006=2",
        "400 (12.5 KiB)",
        "1.18s",
        "OK 1200, UNAVAILABLE 3",
        "1203 (47.0 KiB)",
        "250 (9.8 KiB)",
        "7.25ms",
    ] {
        assert!(s.contains(&format!(">{cell}</td>")), "{cell}: {s}");
    }
    assert!(html.contains("<a href=\"#protocols\">Protocols</a>"));
}

#[test]
fn terminal_summary_has_a_line_per_protocol_step() {
    let mut out = Vec::new();
    render_summary(&with_protocols(), &mut out, Style::PLAIN).unwrap();
    let text = String::from_utf8(out).unwrap();
    let line = |needle: &str| {
        text.lines()
            .find(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("no {needle:?} in:\n{text}"))
            .to_string()
    };
    assert_eq!(
        line("grpc ...").trim_start(),
        "grpc ..............: create permit: 1204 calls: OK 1200, UNAVAILABLE 3 · 1203 messages sent (47.0 KiB), 1200 received (93.8 KiB)"
    );
    assert!(line("watch permits:").ends_with(
        "50 calls: OK 50 · 50 messages sent (500 B), 250 received (9.8 KiB) · first message p50 1.70ms p95 3.60ms"
    ));
    assert!(line("websocket ...").contains(
        "chat: 40 sessions (p50 1.00s), 400 messages sent (12.5 KiB), 398 received (2.0 MiB), closed 1000=38 1006=2"
    ));
}

#[test]
fn a_plain_http_run_has_no_protocols_section() {
    let r = common::sample();
    let md = markdown(&r);
    assert!(!md.contains("Protocols"), "{md}");
    let html = render_html(&run_report(&r, None));
    assert!(!html.contains("protocols"));
    let mut out = Vec::new();
    render_summary(&r, &mut out, Style::PLAIN).unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(
        !text.contains("grpc ") && !text.contains("websocket "),
        "{text}"
    );
}
