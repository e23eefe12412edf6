//! The bodies of the streaming endpoints: OpenAI chunks as Server-Sent Events, sent as the
//! engine produces tokens (`chat.completion.chunk` with `delta.content`, or `text_completion`
//! with `text`; a role chunk with the first token, as vLLM sends it; `usage` when
//! `stream_options.include_usage` asks; `data: [DONE]`), the same as one JSON document, and
//! the ticks of `/sse/ticks`.

use std::convert::Infallible;
use std::time::Duration;

use bytes::Bytes;
use futures_util::stream::{self, StreamExt};
use http_body_util::{Either, StreamBody};
use hyper::body::Frame;
use hyper::header::{HeaderValue, CACHE_CONTROL, CONTENT_TYPE};
use hyper::{Response, StatusCode};
use serde_json::json;
use tokio::sync::mpsc;

use super::engine::Out;
use crate::response::Body;

/// What every chunk of one answer repeats.
#[derive(Debug, Clone)]
pub struct Reply {
    pub chat: bool,
    pub model: String,
    pub prompt_tokens: u32,
    /// The last token's chunk carries `finish_reason: length`.
    pub max_tokens: u32,
    pub usage: bool,
}

impl Reply {
    fn chunk(&self, n: u32, finish: Option<&str>) -> serde_json::Value {
        let text = if n == 0 { "" } else { super::word(n) };
        let choice = if self.chat {
            let delta = if n == 0 {
                json!({"role": "assistant", "content": ""})
            } else {
                json!({"content": text})
            };
            json!({"index": 0, "delta": delta, "finish_reason": finish})
        } else {
            json!({"index": 0, "text": text, "finish_reason": finish})
        };
        json!({
            "id": "cmpl-loadlab",
            "object": if self.chat { "chat.completion.chunk" } else { "text_completion" },
            "created": 0,
            "model": self.model,
            "choices": [choice],
        })
    }

    fn usage(&self, completion: u32) -> serde_json::Value {
        json!({
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": completion,
            "total_tokens": self.prompt_tokens + completion,
        })
    }
}

fn event(v: &serde_json::Value) -> Bytes {
    Bytes::from(format!("data: {v}\n\n"))
}

fn sse_response(
    frames: impl futures_util::Stream<Item = Bytes> + Send + 'static,
) -> Response<Body> {
    let body = StreamBody::new(frames.map(|b| Ok::<_, Infallible>(Frame::data(b))).boxed());
    let mut resp = Response::new(Either::Right(body));
    resp.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    resp.headers_mut()
        .insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    resp
}

/// Streams the answer as the engine makes it.
pub fn stream(reply: Reply, rx: mpsc::UnboundedReceiver<Out>) -> Response<Body> {
    let frames = stream::unfold(
        (reply, rx, 0u32, false),
        |(reply, mut rx, sent, over)| async move {
            if over {
                return None;
            }
            let bytes = match rx.recv().await {
                Some(Out::Token(n)) => {
                    let finish = (n >= reply.max_tokens).then_some("length");
                    let mut b = Vec::new();
                    if n == 1 && reply.chat {
                        b.extend_from_slice(&event(&reply.chunk(0, None)));
                    }
                    b.extend_from_slice(&event(&reply.chunk(n, finish)));
                    Bytes::from(b)
                }
                Some(Out::Done) | None => {
                    let mut b = Vec::new();
                    if reply.usage {
                        let mut usage = reply.chunk(sent, None);
                        usage["choices"] = json!([]);
                        usage["usage"] = reply.usage(sent);
                        b.extend_from_slice(&event(&usage));
                    }
                    b.extend_from_slice(b"data: [DONE]\n\n");
                    return Some((Bytes::from(b), (reply, rx, sent, true)));
                }
            };
            Some((bytes, (reply, rx, sent + 1, false)))
        },
    );
    sse_response(frames)
}

/// Waits for the whole answer and sends it as one JSON document.
pub async fn whole(reply: Reply, mut rx: mpsc::UnboundedReceiver<Out>) -> Response<Body> {
    let mut text = String::new();
    let mut n = 0;
    while let Some(Out::Token(i)) = rx.recv().await {
        text.push_str(super::word(i));
        n = i;
    }
    let choice = if reply.chat {
        json!({"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "length"})
    } else {
        json!({"index": 0, "text": text, "finish_reason": "length"})
    };
    let doc = json!({
        "id": "cmpl-loadlab",
        "object": if reply.chat { "chat.completion" } else { "text_completion" },
        "created": 0,
        "model": reply.model,
        "choices": [choice],
        "usage": reply.usage(n),
    });
    crate::response::json(StatusCode::OK, &doc).map(Either::Left)
}

/// `/sse/ticks?rate=10&count=5`: `count` events `{"tick": i}` at `rate` per second (the
/// first after one period), then `data: [DONE]`.
pub fn ticks(query: &str) -> Response<Body> {
    let mut rate = 10.0f64;
    let mut count = 10u64;
    for pair in query.split('&') {
        match pair.split_once('=') {
            Some(("rate", v)) => rate = v.parse().unwrap_or(f64::NAN),
            Some(("count", v)) => count = v.parse().unwrap_or(u64::MAX),
            _ => {}
        }
    }
    if !(rate.is_finite() && rate > 0.0 && rate <= 100_000.0) || count > 1_000_000 {
        return crate::response::error(
            StatusCode::BAD_REQUEST,
            "ticks take rate (0 < rate <= 100000 per second) and count (at most 1000000)",
        )
        .map(Either::Left);
    }
    let period = Duration::from_secs_f64(1.0 / rate);
    let start = tokio::time::Instant::now();
    let frames = stream::unfold(0u64, move |i| async move {
        if i > count {
            return None;
        }
        if i == count {
            return Some((Bytes::from_static(b"data: [DONE]\n\n"), i + 1));
        }
        tokio::time::sleep_until(start + period * (i as u32 + 1)).await;
        Some((Bytes::from(format!("data: {{\"tick\":{i}}}\n\n")), i + 1))
    });
    sse_response(frames)
}
