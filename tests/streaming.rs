//! Streamed responses end to end: the built-in target's OpenAI-compatible
//! `/v1/chat/completions` (its modelled inference server) measured token by token — TTFT,
//! TPOT, ITL, tokens and goodput in run.json, the terminal summary and thresholds — and a
//! server from another implementation (scripts/sse_server.py, plain asyncio) whose schedule is
//! known in advance: the measured TTFT and ITL must be the script's, and the counts its own.
//! Hostile streams (an endless event, a 10 MB event, no line end ever, invalid UTF-8, a stall,
//! a cut-off) are typed errors, in bounded time.

mod common;
#[path = "common/run_json.rs"]
mod run_json;

use common::{exclusive, Target};
use run_json::{http_get, metric, n, report_md, run, run_fresh, run_fresh_with, step};
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Command, Stdio};

fn chat(target: &str, rate: &str, thresholds: &str, tokens: u32) -> String {
    format!(
        r#"
target: {target}
load: {{ model: open, rate: {rate}, duration: 1s }}
thresholds: {thresholds}
steps:
  - name: chat
    post: /v1/chat/completions
    json:
      model: sim
      stream: true
      stream_options: {{ include_usage: true }}
      max_tokens: {tokens}
      messages: [{{ role: user, content: "three word prompt" }}]
    stream: {{ format: sse, tokens: openai, done: "[DONE]", stall: 5s }}
    check: {{ status: 200, stream: {{ min_events: 2 }} }}
    capture: {{ text: "$.choices[0].delta.content" }}
"#
    )
}

/// The terminal summary of the scenario `run` last wrote in `dir` (s.yaml), run again.
fn summary_of(dir: &Path) -> String {
    let out = Command::new(common::BIN)
        .arg("run")
        .arg(dir.join("s.yaml"))
        .arg("--no-progress")
        .env("LOADLAB_RESULTS", dir.join("results"))
        .output()
        .expect("run loadlab");
    common::text(&out)
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

#[test]
fn the_built_in_target_streams_tokens_measured_one_by_one() {
    let _load = exclusive();
    let dir = tempfile::tempdir().unwrap();
    let start = || Target::start(&["--batch", "8", "--step-time", "5ms", "--step-per-seq", "0s"]);
    let scenario = |target: &Target| {
        chat(
            &target.url,
            "20/s",
            "[stream.ttft.p95 < 5s, stream.tpot.p95 < 1s]",
            6,
        )
    };
    let (code, result, text, target) = run_fresh(dir.path(), start, scenario);
    assert_eq!(code, Some(0), "{text}\nvalidity: {}", result["validity"]);
    common::assert_matches_run_schema(&result);
    let s = step(&result, "chat");
    let streams = n(&s["requests"]);
    assert!(streams >= 15, "{s}");
    assert_eq!(n(&s["failed"]), 0, "{s}");
    let st = &s["stream"];
    assert_eq!(n(&st["streams"]), streams, "{st}");
    // The target sends usage: 6 completion tokens and 3 prompt words per stream.
    assert_eq!(n(&st["output_tokens"]), 6 * streams, "{st}");
    assert_eq!(n(&st["input_tokens"]), 3 * streams, "{st}");
    // A role chunk + 6 token chunks + the usage chunk ([DONE] is no event).
    assert_eq!(n(&st["events"]), 8 * streams, "{st}");
    // Steps of 5 ms: a stream's gaps are about a step (+ the tokio timer's tick), but the
    // first token's, which arrives with the role chunk (the first token event).
    let itl = &st["itl_ms"];
    assert_eq!(n(&itl["count"]), 6 * streams, "{itl}");
    assert!(f(&itl["p50"]) >= 4.5 && f(&itl["p50"]) < 12.0, "{itl}");
    assert!(f(&st["ttft_ms"]["p50"]) >= 4.5, "{st}");
    assert!(f(&st["tpot_ms"]["p50"]) >= 4.5, "{st}");
    assert_eq!(n(&st["good"]), streams, "{st}");
    assert!(f(&st["goodput_per_s"]) > 10.0, "{st}");
    assert!(
        f(&result["stream"]["output_tokens_per_s"]) > 50.0,
        "{}",
        result["stream"]
    );
    // What the target generated is what the run counted.
    let metrics = http_get(target.url.trim_start_matches("http://"), "/metrics");
    assert_eq!(
        metric(&metrics, "loadlab_target_llm_tokens_total"),
        6 * streams
    );
    // The terminal summary prints the stream figures; the report has a Streaming section.
    let summary = summary_of(dir.path());
    for want in ["ttft", "tpot", "itl", "tokens/s", "goodput"] {
        assert!(summary.contains(want), "{want} missing in:\n{summary}");
    }
    assert!(report_md(dir.path()).contains("Streaming"));
    // A threshold on a stream figure fails the run (exit 1), and names its value.
    let yaml = chat(&target.url, "20/s", "[stream.ttft.p50 < 1ms]", 6);
    let (code, result, text) = run(dir.path(), &yaml);
    assert_eq!(code, Some(1), "{text}");
    let t = &result["thresholds"][0];
    assert_eq!(t["ok"], false, "{t}");
    assert!(f(&t["actual"]) >= 4.5, "{t}");
    // As an objective, the same bound makes no stream good.
    assert_eq!(n(&result["stream"]["good"]), 0, "{}", result["stream"]);
}

#[test]
fn streams_over_http2_are_read_by_the_h2_client_when_wire_is_asked() {
    // The purpose-built HTTP/2 client reads no streams: a scenario with one keeps the `h2`
    // crate for its connections, and its streams are measured as ever (h2c here).
    let _load = exclusive();
    let dir = tempfile::tempdir().unwrap();
    let start = || Target::start(&["--batch", "8", "--step-time", "5ms", "--step-per-seq", "0s"]);
    let scenario = |t: &Target| {
        chat(&t.url, "10/s", "[]", 6).replace("steps:", "http: { version: \"2\" }\nsteps:")
    };
    let flags = ["--http2-client", "wire"];
    let (code, result, text, _target) = run_fresh_with(dir.path(), &flags, start, scenario);
    assert_eq!(code, Some(0), "{text}\nvalidity: {}", result["validity"]);
    assert_eq!(
        result["origins"][0]["protocol"], "h2c",
        "{}",
        result["origins"]
    );
    let s = step(&result, "chat");
    let streams = n(&s["requests"]);
    assert!(streams >= 5, "{s}");
    assert_eq!(n(&s["failed"]), 0, "{s}");
    assert_eq!(n(&s["stream"]["events"]), 8 * streams, "{}", s["stream"]);
}

#[test]
fn time_to_first_token_rises_when_requests_queue_beyond_the_batch() {
    let _load = exclusive();
    let dir = tempfile::tempdir().unwrap();
    let mut p95 = Vec::new();
    for batch in ["1", "32"] {
        let target = Target::start(&[
            "--batch",
            batch,
            "--step-time",
            "10ms",
            "--step-per-seq",
            "0s",
        ]);
        let (code, result, text) = run(dir.path(), &chat(&target.url, "30/s", "[]", 8));
        // A queue that outlasts the run may leave streams in flight at its end (interrupted).
        assert!(batch == "1" || code == Some(0), "{text}");
        assert!(result["stream"].is_object(), "{text}");
        p95.push(f(&result["stream"]["ttft_ms"]["p95"]));
    }
    // 30 streams/s of 8 steps of 10 ms: one at a time cannot keep up (a queue), 32 can.
    assert!(p95[0] > 3.0 * p95[1], "batch 1 vs 32 TTFT p95: {p95:?}");
}

/// scripts/sse_server.py on a free loopback port; killed on drop.
struct PySse {
    child: Child,
    addr: String,
}

impl PySse {
    fn start(ttft_ms: u32, itl_ms: u32) -> PySse {
        let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".into());
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/sse_server.py");
        let mut child = Command::new(python)
            .arg(script)
            .args([port.to_string(), ttft_ms.to_string(), itl_ms.to_string()])
            .stdout(Stdio::piped())
            .spawn()
            .expect("start scripts/sse_server.py");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert!(line.starts_with("listening"), "sse_server.py said {line:?}");
        PySse {
            child,
            addr: format!("127.0.0.1:{port}"),
        }
    }

    fn counts(&self) -> Value {
        serde_json::from_str(&http_get(&self.addr, "/counts")).unwrap()
    }
}

impl Drop for PySse {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Within 1 ms or 5 % of `want`, whichever is looser.
fn close_to(got: f64, want: f64) -> bool {
    (got - want).abs() <= (want * 0.05).max(1.0)
}

#[test]
fn an_outside_server_s_schedule_is_measured_exactly() {
    let _load = exclusive();
    let dir = tempfile::tempdir().unwrap();
    let scenario = |server: &PySse| chat(&format!("http://{}", server.addr), "10/s", "[]", 8);
    let (code, result, text, server) = run_fresh(dir.path(), || PySse::start(100, 20), scenario);
    assert_eq!(code, Some(0), "{text}\nvalidity: {}", result["validity"]);
    let st = &result["stream"];
    let streams = n(&st["streams"]);
    assert!(streams >= 9, "{st}");
    let counts = server.counts();
    assert_eq!(n(&counts["requests"]), streams, "{counts}");
    assert_eq!(n(&st["events"]), n(&counts["events"]), "{counts} vs {st}");
    assert_eq!(
        n(&st["output_tokens"]),
        n(&counts["tokens"]),
        "{counts} vs {st}"
    );
    // The script: first token at 100 ms, then one every 20 ms; TPOT = (E2E − TTFT)/7, where
    // E2E ends at the usage chunk, sent with the last token.
    let (ttft, itl, tpot) = (
        f(&st["ttft_ms"]["p50"]),
        f(&st["itl_ms"]["p50"]),
        f(&st["tpot_ms"]["p50"]),
    );
    assert!(
        close_to(ttft, 100.0),
        "TTFT p50 {ttft} ms, the script's 100: {st}"
    );
    assert!(
        close_to(itl, 20.0),
        "ITL p50 {itl} ms, the script's 20: {st}"
    );
    assert!(
        close_to(tpot, 20.0),
        "TPOT p50 {tpot} ms, the script's 20: {st}"
    );
    // Every token event but the first per stream is a gap (the role chunk shares its read).
    assert_eq!(n(&st["itl_ms"]["count"]), 8 * streams, "{st}");
    assert_eq!(step(&result, "chat")["failed"], 0);
}

#[test]
fn hostile_streams_are_typed_errors_in_bounded_time() {
    let _load = exclusive();
    let server = PySse::start(10, 5);
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        ("endless", "stream_malformed"),
        ("huge", "stream_malformed"),
        ("nonewline", "stream_malformed"),
        ("utf8", "stream_malformed"),
        ("stall", "stream_stalled"),
        ("truncate", "stream_truncated"),
    ];
    for (kind, error) in cases {
        let yaml = format!(
            r#"
target: http://{}
load: {{ model: closed, vus: 1, iterations: 2 }}
defaults: {{ timeout: 20s }}
steps:
  - name: {kind}
    get: /hostile/{kind}
    stream: {{ format: sse, tokens: openai, done: "[DONE]", stall: 300ms, max_event: 64KiB }}
"#,
            server.addr
        );
        let started = std::time::Instant::now();
        let (_, result, text) = run(dir.path(), &yaml);
        let took = started.elapsed();
        assert!(took.as_secs() < 10, "{kind}: {took:?}");
        let s = step(&result, kind);
        assert_eq!(n(&s["failed"]), 2, "{kind}: {s}\n{text}");
        assert_eq!(n(&s["errors"][error]), 2, "{kind}: {s}");
        assert!(
            s.get("stream").is_none_or(Value::is_null),
            "failed streams are not measured: {s}"
        );
    }
}

/// An abort threshold on a stream figure stops the run at its first window, as any other.
#[test]
fn an_abort_threshold_on_time_to_first_token_stops_the_run() {
    let _load = exclusive();
    let target = Target::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let yaml = chat(
        &target.url,
        "20/s",
        "[\"stream.ttft.p50 < 1ms over 500ms, abort\"]",
        6,
    )
    .replace("duration: 1s", "duration: 6s");
    let started = std::time::Instant::now();
    let (code, result, text) = run(dir.path(), &yaml);
    assert_eq!(code, Some(1), "{text}");
    assert_eq!(result["stop"], "threshold", "{text}");
    let breach = &result["aborted_by_threshold"];
    assert!(
        breach["threshold"]
            .as_str()
            .is_some_and(|t| t.contains("stream.ttft.p50")),
        "{breach}"
    );
    assert!(
        f(&breach["value"]) >= 4.5,
        "TTFT p50 of the window: {breach}"
    );
    assert!(
        f(&result["duration_s"]) < 3.0 && started.elapsed().as_secs() < 6,
        "stopped within a second or so of its first window, not after 6 s: {}",
        result["duration_s"]
    );
}
