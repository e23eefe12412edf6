//! The report's "Protocols" section: what WebSocket sessions and gRPC calls exchanged, per
//! step — messages and bytes each way, close codes or statuses, session durations and the
//! time to a stream's first message. Worded as the terminal words them (`protocol_values`).

use crate::doc::{Block, Section, Table};
use crate::protocol_values::{
    grpc_statuses, grpc_steps, messages, percentiles, ws_close_codes, ws_steps,
};
use loadlab_metrics::result::RunResult;

/// The section, when a step opened WebSocket sessions or made gRPC calls (none otherwise).
pub(super) fn protocols(r: &RunResult) -> Option<Section> {
    let blocks: Vec<Block> = [websocket(r), grpc(r)]
        .into_iter()
        .flatten()
        .flatten()
        .collect();
    if blocks.is_empty() {
        return None;
    }
    let mut s = Section::new("protocols", "Protocols");
    s.blocks = blocks;
    Some(s)
}

fn websocket(r: &RunResult) -> Option<Vec<Block>> {
    let mut t = Table::new(&[
        "step",
        ">sessions",
        ">messages sent",
        ">messages received",
        "close codes",
        ">session p50",
        ">session p95",
        ">session p99",
    ]);
    for (s, ws) in ws_steps(&r.steps) {
        let [p50, p95, p99] = percentiles(&ws.session_ms);
        t.row(cells![
            format!("`{}`", s.name),
            s.requests.to_string(),
            messages(ws.messages_sent, ws.message_bytes_sent),
            messages(ws.messages_received, ws.message_bytes_received),
            ws_close_codes(ws),
            p50,
            p95,
            p99
        ]);
    }
    if t.rows.is_empty() {
        return None;
    }
    Some(vec![
        Block::Heading("WebSocket".to_string()),
        Block::Table(t.with_note(
            "A step's sessions are its requests (their latency is the upgrade's). Messages are text and binary messages, their payload bytes in brackets. Close code 1006: the connection ended without a close frame. Session: upgrade to close.",
        )),
    ])
}

fn grpc(r: &RunResult) -> Option<Vec<Block>> {
    let mut t = Table::new(&[
        "step",
        ">calls",
        "status codes",
        ">messages sent",
        ">messages received",
        ">first message p50",
        ">first message p95",
        ">first message p99",
    ]);
    for (s, g) in grpc_steps(&r.steps) {
        let [p50, p95, p99] = percentiles(&g.first_message_ms);
        t.row(cells![
            format!("`{}`", s.name),
            s.requests.to_string(),
            grpc_statuses(g),
            messages(g.messages_sent, g.message_bytes_sent),
            messages(g.messages_received, g.message_bytes_received),
            p50,
            p95,
            p99
        ]);
    }
    if t.rows.is_empty() {
        return None;
    }
    Some(vec![
        Block::Heading("gRPC".to_string()),
        Block::Table(t.with_note(
            "A step's calls are its requests (their latency runs to the trailers). Status codes are the `grpc-status` calls ended with; a call whose timeout passed counts as `DEADLINE_EXCEEDED` (as gRPC clients count it); one that ended without a status (connection failed, stream reset) counts under its error kind only. Message bytes (in brackets) are payloads, the 5-byte gRPC frame prefixes not counted. First message: server streams only, call start to the first response message.",
        )),
    ])
}
