//! A recorded stream measured by hand: the vLLM definitions of TTFT, ITL, TPOT, E2E and
//! goodput applied to known arrival times, and the reader's typed errors.

use super::*;
use loadlab_metrics::ErrorKind;
use loadlab_scenario::stream::DEFAULT_MAX_EVENT;
use tokio::time::Duration;

fn prepared(
    tokens: TokenCounting,
    done: Option<&str>,
    objectives: Vec<Objective>,
) -> Arc<PreparedStream> {
    Arc::new(PreparedStream {
        spec: StreamSpec {
            format: StreamFormat::Sse,
            tokens,
            done: done.map(String::from),
            stall: None,
            max_event: DEFAULT_MAX_EVENT,
        },
        captures: vec![Some(JsonPath::parse("$.choices[0].delta.content").unwrap())],
        json_events: true,
        keep_last_json: false,
        objectives,
    })
}

fn chunk(content: Option<&str>) -> Vec<u8> {
    let delta = match content {
        Some(c) => format!("{{\"content\":\"{c}\"}}"),
        None => "{\"role\":\"assistant\"}".into(),
    };
    format!("data: {{\"choices\":[{{\"index\":0,\"delta\":{delta}}}]}}\n\n").into_bytes()
}

/// The stream a server sends, with the ms after the request's start each event arrives.
fn recorded() -> Vec<(u64, Vec<u8>)> {
    vec![
        (120, chunk(None)),           // role only: vLLM's first token event (TTFT)
        (150, chunk(Some("Hel"))),    // gap 30
        (190, chunk(Some("lo"))),     // gap 40
        (200, chunk(Some(" there"))), // gap 10
        // usage only: not a token event, but the last event (E2E)
        (
            230,
            b"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":3}}\n\n"
                .to_vec(),
        ),
        (260, b"data: [DONE]\n\n".to_vec()),
    ]
}

fn read(
    p: Arc<PreparedStream>,
    events: &[(u64, Vec<u8>)],
    start: Instant,
) -> Result<StreamReader, StreamError> {
    let mut r = StreamReader::new(p);
    let mut buf = Vec::new();
    for (ms, bytes) in events {
        buf.extend_from_slice(bytes);
        r.feed(&mut buf, start + Duration::from_millis(*ms))?;
    }
    r.finish(&mut buf, start + Duration::from_millis(300))?;
    Ok(r)
}

#[test]
fn a_recorded_stream_is_measured_as_vllm_measures_it() {
    let start = Instant::now();
    let objective = |time, bound_ms| Objective {
        time,
        op: Op::Lt,
        bound_ms,
    };
    let p = prepared(
        TokenCounting::OpenAi,
        None,
        vec![
            objective(StreamTime::Ttft, 150.0),
            objective(StreamTime::Tpot, 60.0),
        ],
    );
    let r = read(p.clone(), &recorded(), start).unwrap();
    assert!(r.ended);
    assert_eq!((r.events, r.token_events, r.content_events), (5, 4, 3));
    assert_eq!(r.captured[0].as_deref(), Some("Hello there"));
    let s = measure(&r, start, false, &p.objectives);
    // TTFT: the first event with choices, at 120 ms.
    assert_eq!(s.ttft_us, Some(120_000));
    // ITL: every gap before a later token event (the usage event is none).
    assert_eq!(s.itl_us, &[30_000, 40_000, 10_000]);
    // E2E: the last event but the end marker, at 230 ms.
    assert_eq!(s.e2e_us, Some(230_000));
    // TPOT: (230 − 120) / (3 − 1) with usage.completion_tokens = 3.
    assert_eq!(s.tpot_us, Some(55_000));
    assert_eq!((s.input_tokens, s.output_tokens, s.events), (9, 3, 5));
    assert!(s.good, "TTFT 120 < 150 and TPOT 55 < 60");
    let strict = [objective(StreamTime::Tpot, 55.0)];
    assert!(!measure(&r, start, false, &strict).good, "55 is not < 55");
    assert!(
        !measure(&r, start, true, &[]).good,
        "a failed stream is never good"
    );
    // In the open model TTFT runs from the intended start, 20 ms earlier.
    let s = measure(&r, start - Duration::from_millis(20), false, &[]);
    assert_eq!((s.ttft_us, s.e2e_us), (Some(140_000), Some(250_000)));
}

#[test]
fn without_usage_tokens_are_the_events_with_text() {
    let start = Instant::now();
    let mut events = recorded();
    events.remove(4);
    let r = read(
        prepared(TokenCounting::OpenAi, None, vec![]),
        &events,
        start,
    )
    .unwrap();
    let s = measure(&r, start, false, &[]);
    assert_eq!(s.output_tokens, 3);
    // E2E is now the last token event, at 200 ms: TPOT (200 − 120) / 2.
    assert_eq!(s.tpot_us, Some(40_000));
    assert_eq!(s.input_tokens, 0);
    // Counting every event: the four chunks (the end marker is no event).
    let r = read(
        prepared(TokenCounting::Events, Some("[DONE]"), vec![]),
        &events,
        start,
    )
    .unwrap();
    assert_eq!(measure(&r, start, false, &[]).output_tokens, 4);
}

#[test]
fn broken_streams_are_typed_errors() {
    let start = Instant::now();
    let mut events = recorded();
    events.pop();
    let p = prepared(TokenCounting::OpenAi, Some("[DONE]"), vec![]);
    let e = read(p.clone(), &events, start).unwrap_err();
    assert!(matches!(e, StreamError::Truncated(_)), "{e}");
    assert_eq!(e.kind(), ErrorKind::StreamTruncated);
    let e = read(p.clone(), &[(1, b"data: not json\n\n".to_vec())], start).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::StreamMalformed);
    let e = read(p, &[(1, b"data: {\"choices\":[]}\n".to_vec())], start).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::StreamTruncated, "ended mid-event");
}

#[test]
fn objectives_come_from_upper_bounds_on_the_run_or_the_step() {
    let parse = |t: &str| Threshold::parse(t).unwrap();
    let thresholds = [
        parse("stream.ttft.p95 < 500ms"),
        parse("step.chat.stream.tpot.p95 <= 50ms"),
        parse("step.other.stream.e2e.p95 < 5s"),
        parse("stream.itl.p99 < 100ms"),
        parse("stream.ttft.p50 > 1ms"),
        parse("latency.p95 < 2s"),
    ];
    let got = objectives("chat", &thresholds);
    assert_eq!(
        got,
        [
            Objective {
                time: StreamTime::Ttft,
                op: Op::Lt,
                bound_ms: 500.0
            },
            Objective {
                time: StreamTime::Tpot,
                op: Op::Le,
                bound_ms: 50.0
            },
        ]
    );
}
