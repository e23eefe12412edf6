//! Streaming endpoints of the target: an OpenAI-compatible `/v1/chat/completions` and
//! `/v1/completions` in front of a modelled inference server (`engine`: continuous batching,
//! prefill by prompt length, a queue beyond the batch), answering with Server-Sent Events
//! (`stream: true`) or one JSON document; and `/sse/ticks?rate=..&count=..`, events at a
//! fixed rate. They sit outside the capacity model (the engine is their capacity) and are
//! counted in `/metrics`.

mod engine;
mod sse;

pub use engine::{LlmConfig, LlmCounters};

use std::sync::{Arc, OnceLock};

use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};
use serde_json::Value;
use tokio::sync::mpsc;

use crate::response::Body;

/// The streaming endpoints by path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Endpoint {
    Chat,
    Completions,
    Ticks,
}

impl Endpoint {
    pub fn of(path: &str) -> Option<Endpoint> {
        match path {
            "/v1/chat/completions" => Some(Endpoint::Chat),
            "/v1/completions" => Some(Endpoint::Completions),
            "/sse/ticks" => Some(Endpoint::Ticks),
            _ => None,
        }
    }
}

/// The modelled inference server, started at its first request (it needs the runtime).
#[derive(Debug)]
pub struct LlmState {
    config: LlmConfig,
    engine: OnceLock<mpsc::UnboundedSender<engine::Seq>>,
    pub counters: Arc<LlmCounters>,
}

impl LlmState {
    pub fn new(config: LlmConfig) -> Self {
        LlmState {
            config,
            engine: OnceLock::new(),
            counters: Arc::default(),
        }
    }

    fn submit(&self, seq: engine::Seq) {
        let engine = self.engine.get_or_init(|| {
            let (tx, rx) = mpsc::unbounded_channel();
            tokio::spawn(engine::run(self.config, rx, self.counters.clone()));
            tx
        });
        let _ = engine.send(seq);
    }

    /// The counts in the Prometheus text format.
    pub fn render(&self, out: &mut String) {
        use std::fmt::Write as _;
        use std::sync::atomic::Ordering::Relaxed;
        let c = &self.counters;
        for (name, kind, help, v) in [
            (
                "loadlab_target_llm_requests_total",
                "counter",
                "Generation requests received.",
                &c.requests,
            ),
            (
                "loadlab_target_llm_prompt_tokens_total",
                "counter",
                "Prompt tokens received (words).",
                &c.prompt_tokens,
            ),
            (
                "loadlab_target_llm_tokens_total",
                "counter",
                "Tokens generated and sent.",
                &c.tokens,
            ),
            (
                "loadlab_target_llm_cancelled_total",
                "counter",
                "Sequences whose client left before the end.",
                &c.cancelled,
            ),
            (
                "loadlab_target_llm_waiting",
                "gauge",
                "Sequences waiting for a batch slot.",
                &c.waiting,
            ),
            (
                "loadlab_target_llm_running",
                "gauge",
                "Sequences in the batch.",
                &c.running,
            ),
        ] {
            let _ = writeln!(
                out,
                "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {}",
                v.load(Relaxed)
            );
        }
    }
}

/// Serves a streaming endpoint.
pub async fn handle(
    state: &LlmState,
    endpoint: Endpoint,
    req: Request<Incoming>,
) -> Response<Body> {
    if endpoint == Endpoint::Ticks {
        return sse::ticks(req.uri().query().unwrap_or(""));
    }
    if req.method() != hyper::Method::POST {
        return plain(StatusCode::METHOD_NOT_ALLOWED, "use POST with a JSON body");
    }
    let body = match crate::request_body::read_json_body(req).await {
        Ok(v) => v,
        Err(resp) => return resp.map(http_body_util::Either::Left),
    };
    let prompt_tokens = prompt_words(endpoint, &body);
    let max_tokens = body
        .get("max_tokens")
        .or_else(|| body.get("max_completion_tokens"))
        .and_then(Value::as_u64)
        .map_or(state.config.default_max_tokens, |n| {
            n.clamp(1, 100_000) as u32
        });
    let streaming = body.get("stream").and_then(Value::as_bool).unwrap_or(false);
    let usage = body
        .pointer("/stream_options/include_usage")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let model = body
        .get("model")
        .and_then(Value::as_str)
        .unwrap_or("loadlab-sim")
        .to_string();
    use std::sync::atomic::Ordering::Relaxed;
    state.counters.requests.fetch_add(1, Relaxed);
    state
        .counters
        .prompt_tokens
        .fetch_add(u64::from(prompt_tokens), Relaxed);
    let (tx, rx) = mpsc::unbounded_channel();
    state.submit(engine::Seq {
        prompt_tokens,
        max_tokens,
        tx,
    });
    let reply = sse::Reply {
        chat: endpoint == Endpoint::Chat,
        model,
        prompt_tokens,
        max_tokens,
        usage,
    };
    if streaming {
        sse::stream(reply, rx)
    } else {
        sse::whole(reply, rx).await
    }
}

/// Prompt length in words (the model's "tokens"): the messages' contents, or the prompt.
fn prompt_words(endpoint: Endpoint, body: &Value) -> u32 {
    let words = |v: &Value| v.as_str().map_or(0, |s| s.split_whitespace().count());
    let n = match endpoint {
        Endpoint::Chat => body
            .get("messages")
            .and_then(Value::as_array)
            .map_or(0, |m| m.iter().map(|m| words(&m["content"])).sum()),
        _ => words(&body["prompt"]),
    };
    n.min(1_000_000) as u32
}

fn plain(status: StatusCode, message: &str) -> Response<Body> {
    crate::response::error(status, message).map(http_body_util::Either::Left)
}

/// The generated text's word `n` (1-based): a fixed sentence, over and over.
pub(crate) fn word(n: u32) -> &'static str {
    const WORDS: [&str; 12] = [
        "Load ",
        "tests ",
        "measure ",
        "what ",
        "users ",
        "wait ",
        "for: ",
        "the ",
        "first ",
        "token ",
        "and ",
        "the rest. ",
    ];
    WORDS[(n as usize - 1) % WORDS.len()]
}
