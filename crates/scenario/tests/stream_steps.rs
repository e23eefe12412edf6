//! The `stream:` option: the brief's form becomes a request step carrying its stream spec,
//! stream checks and thresholds; mistakes name the field and the fix.

use loadlab_metrics::StreamTime;
use loadlab_scenario::stream::{StreamFormat, TokenCounting, DEFAULT_MAX_EVENT};
use loadlab_scenario::threshold::{Quantity, Stat};
use loadlab_scenario::{Check, Scenario, Step};
use std::path::Path;
use std::time::Duration;

const FULL: &str = r#"
target: http://127.0.0.1:8080
load: {model: open, rate: 5/s, duration: 1s}
data:
  prompts: { values: [ {prompt: hi} ] }
thresholds:
  - stream.ttft.p95 < 500ms
  - step.chat.stream.tpot.p95 < 50ms
  - stream.goodput > 1
steps:
  - name: chat
    post: /v1/chat/completions
    json: { model: m, stream: true, messages: [{role: user, content: "{{ prompts.prompt }}"}], max_tokens: 128 }
    stream:
      format: sse
      tokens: openai
      done: "[DONE]"
      stall: 2s
    check: { status: 200, stream: { min_events: 1 } }
    capture: { text: "$.choices[0].delta.content" }
  - name: lines
    get: /ndjson
    stream: { format: ndjson, tokens: "$.token", max_event: 4KiB }
  - name: ticks
    get: /sse/ticks
    stream: { format: chunks, tokens: events }
"#;

fn path(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples")
        .join(name)
        .display()
        .to_string()
}

#[test]
fn the_brief_s_form_becomes_a_streaming_request_step() {
    let s = Scenario::parse(FULL, &path("stream-test.yaml")).unwrap();
    let steps: Vec<_> = s.flows[0]
        .steps
        .iter()
        .map(|st| match st {
            Step::Request(r) => r.as_ref(),
            other => panic!("a request step, got {other:?}"),
        })
        .collect();
    let chat = steps[0].stream.as_deref().expect("chat streams");
    assert_eq!(chat.format, StreamFormat::Sse);
    assert_eq!(chat.tokens, TokenCounting::OpenAi);
    assert_eq!(chat.done.as_deref(), Some("[DONE]"));
    assert_eq!(chat.stall, Some(Duration::from_secs(2)));
    assert_eq!(chat.max_event, DEFAULT_MAX_EVENT);
    assert_eq!(
        steps[0].checks,
        [Check::Status(vec![200]), Check::StreamEvents(1)]
    );
    let lines = steps[1].stream.as_deref().unwrap();
    assert_eq!(lines.format, StreamFormat::Ndjson);
    assert!(matches!(&lines.tokens, TokenCounting::Path(p) if p.text() == "$.token"));
    assert_eq!(lines.max_event, 4096);
    assert_eq!(lines.end_marker(), None);
    assert_eq!(chat.end_marker(), Some("[DONE]"));
    assert_eq!(
        steps[2].stream.as_deref().unwrap().format,
        StreamFormat::Chunks
    );
    assert_eq!(
        s.thresholds[0].metric.quantity,
        Quantity::StreamTime(StreamTime::Ttft, Stat::Percentile(95.0))
    );
}

fn error_of(src: &str) -> String {
    Scenario::parse(src, &path("bad.yaml"))
        .unwrap_err()
        .to_string()
}

#[test]
fn bad_stream_steps_are_located_with_a_fix() {
    let head =
        "target: http://127.0.0.1:8080\nload: {model: closed, vus: 1, duration: 1s}\nsteps:\n";
    let cases: &[(&str, &str)] = &[
        (
            "  - get: /s\n    stream: {format: xml}\n",
            "steps[0].stream.format: unknown stream format `xml`",
        ),
        (
            "  - get: /s\n    stream: {tokens: words}\n",
            "steps[0].stream.tokens: `words` is not a way to count tokens",
        ),
        (
            "  - get: /s\n    stream: {format: chunks}\n",
            "steps[0].stream.tokens: raw chunks are not JSON events",
        ),
        (
            "  - get: /s\n    stream: {done: \"\"}\n",
            "steps[0].stream.done: the end marker is empty",
        ),
        (
            "  - get: /s\n    stream: {stall: 0s}\n",
            "steps[0].stream.stall: must be above zero",
        ),
        (
            "  - get: /s\n    stream: {max_event: 0}\n",
            "steps[0].stream.max_event: 0 bytes is outside 1 byte to 1GiB",
        ),
        (
            "  - get: /s\n    stream: {formt: sse}\n",
            "unknown field `formt`",
        ),
        (
            "  - get: /s\n    check: {stream: {min_events: 1}}\n",
            "steps[0].check.stream: `check: {stream: ...}` needs a step that reads a stream",
        ),
        (
            "  - get: /s\n    stream: {}\n    capture: {t: {regex: \"a(b)\"}}\n",
            "steps[0].capture.t: a regex capture reads a whole body",
        ),
        (
            "  - think: 1s\n    stream: {}\n",
            "steps[0].stream: `stream:` belongs to a request step",
        ),
        (
            "  - ws: {url: /ws/echo, steps: [{send: hi}]}\n    stream: {}\n",
            "a `ws:` step cannot also have `stream`",
        ),
    ];
    for (step, want) in cases {
        let e = error_of(&format!("{head}{step}"));
        assert!(e.contains(want), "{step}: {e}\n  wanted: {want}");
    }
    let e = error_of(&format!(
        "{head}  - get: /s\nthresholds: [group.g.stream.ttft.p95 < 1s]\n"
    ));
    assert!(e.contains("not for a group"), "{e}");
}

#[test]
fn prompts_come_from_json_lines() {
    let tmp = tempfile::Builder::new()
        .prefix("loadlab-stream-steps-")
        .tempdir()
        .unwrap();
    let dir = tmp.path();
    std::fs::write(
        dir.join("p.jsonl"),
        "{\"prompt\": \"a\", \"n\": 1}\n\n{\"prompt\": \"b\", \"n\": 2}\n",
    )
    .unwrap();
    let src = "target: http://127.0.0.1:8080\nload: {model: closed, vus: 1, duration: 1s}\ndata:\n  p: { jsonl: p.jsonl }\nsteps:\n  - get: \"/x?q={{ p.prompt }}\"\n";
    let file = dir.join("s.yaml").display().to_string();
    let s = Scenario::parse(src, &file).unwrap();
    let mut columns = s.data[0].columns.clone();
    columns.sort();
    assert_eq!(columns, ["n", "prompt"]);
    assert_eq!(s.data[0].rows.len(), 2);
    std::fs::write(dir.join("p.jsonl"), "{\"prompt\": \"a\"}\n[1]\n").unwrap();
    let e = Scenario::parse(src, &file).unwrap_err().to_string();
    assert!(
        e.contains("p.jsonl line 2: each line must be a JSON object"),
        "{e}"
    );
    std::fs::write(dir.join("p.jsonl"), "{\"prompt\": \"a\"}\n{oops\n").unwrap();
    let e = Scenario::parse(src, &file).unwrap_err().to_string();
    assert!(e.contains("p.jsonl line 2"), "{e}");
    let _ = std::fs::remove_dir_all(dir);
}
