//! The `ws:` step: its URL (a path, or an absolute `ws://`/`wss://` URL), its actions (one
//! key each), expectations, captures and bounds, each error located at its field.

use super::steps::{captures, think_time};
use super::{parse_size, Ctx};
use crate::error::ScenarioError;
use crate::model::{CaptureSource, Step};
use crate::raw::ByteSize;
use crate::raw_ws::{RawWs, RawWsAction, RawWsExpect, RawWsSend};
use crate::ws::{WsAction, WsExpect, WsMatch, WsMessage, WsStep, DEFAULT_WS_MAX_MESSAGE};
use std::collections::BTreeMap;
use std::time::Duration;

/// How long an `expect` waits when it does not say (`within:`).
pub const DEFAULT_WITHIN: Duration = Duration::from_secs(5);

/// A `ws:` step; `field` is the step's own path (`flows[0].steps[2]`).
pub(super) fn ws_step(
    raw: RawWs,
    name: Option<String>,
    group: Option<String>,
    field: &str,
    ctx: &Ctx,
) -> Result<Step, ScenarioError> {
    let wfield = format!("{field}.ws");
    let url = raw.url.ok_or_else(|| {
        ctx.err(&wfield, "a `ws:` step needs `url:`").with_hint(
            "e.g. `ws: {url: /ws/echo, steps: [{send: hello}, {expect: {contains: hello}}]}`",
        )
    })?;
    let url = ws_url(url, &format!("{wfield}.url"), ctx)?;
    let name = name.unwrap_or_else(|| format!("WS {url}"));
    if raw.steps.is_empty() && raw.close_after.is_none() {
        return Err(ctx
            .err(
                &format!("{wfield}.steps"),
                "the session does nothing: no steps and no `close_after`",
            )
            .with_hint("add `steps: [{send: ...}, {expect: {...}}]` or `close_after: 5s`"));
    }
    let mut actions = Vec::new();
    for (i, a) in raw.steps.into_iter().enumerate() {
        actions.push(action(a, &name, &format!("{wfield}.steps[{i}]"), ctx)?);
    }
    for (key, d) in [("close_after", raw.close_after), ("timeout", raw.timeout)] {
        if d.is_some_and(|d| d.is_zero()) {
            return Err(ctx.err(&format!("{wfield}.{key}"), "must be above zero"));
        }
    }
    let max_message = match raw.max_message {
        None => DEFAULT_WS_MAX_MESSAGE,
        Some(ByteSize::Bytes(n)) => n,
        Some(ByteSize::Text(t)) => {
            parse_size(&t).map_err(|m| ctx.err(&format!("{wfield}.max_message"), m))?
        }
    };
    if max_message == 0 {
        return Err(ctx.err(&format!("{wfield}.max_message"), "must be above zero"));
    }
    Ok(Step::Ws(Box::new(WsStep {
        name,
        group,
        url,
        headers: raw.headers.into_iter().collect(),
        actions,
        close_after: raw.close_after,
        timeout: raw.timeout,
        max_message,
        tags: raw
            .tags
            .into_iter()
            .map(|(k, v)| (k, v.into_text()))
            .collect(),
    })))
}

/// A path on the target, or an absolute `ws://` / `wss://` URL with no template in its host.
fn ws_url(url: String, field: &str, ctx: &Ctx) -> Result<String, ScenarioError> {
    if let Some(rest) = url
        .strip_prefix("ws://")
        .or_else(|| url.strip_prefix("wss://"))
    {
        let authority = rest.split(['/', '?']).next().unwrap_or("");
        if crate::template::has_template(authority) {
            return Err(ctx
                .err(field, "templates are not allowed in the host of a URL")
                .with_hint("connections are opened when the session starts from the URL's host: put variables in the path or query"));
        }
        let http = url.replacen("ws", "http", 1);
        crate::addresses::check_url(&http).map_err(|m| ctx.err(field, m))?;
        return Ok(url);
    }
    if url.starts_with('/') {
        return Ok(url);
    }
    let hint = if url.starts_with("http://") || url.starts_with("https://") {
        format!("write `{}`", url.replacen("http", "ws", 1))
    } else {
        format!("write `/{url}`")
    };
    Err(ctx
        .err(
            field,
            format!("`{url}` is neither a path starting with / nor a ws:// or wss:// URL"),
        )
        .with_hint(hint))
}

/// One action: exactly one of `send`, `expect`, `capture`, `think`.
fn action(
    raw: RawWsAction,
    session: &str,
    field: &str,
    ctx: &Ctx,
) -> Result<WsAction, ScenarioError> {
    let given = [
        raw.send.is_some(),
        raw.expect.is_some(),
        raw.capture.is_some(),
        raw.think.is_some(),
    ];
    if given.iter().filter(|g| **g).count() != 1 {
        return Err(ctx
            .err(field, "a session step takes exactly one of `send`, `expect`, `capture` or `think`")
            .with_hint("write each in a step of its own: `- send: hello` then `- expect: {contains: hello}`"));
    }
    if let Some(s) = raw.send {
        return Ok(WsAction::Send(send(s, &format!("{field}.send"), ctx)?));
    }
    if let Some(e) = raw.expect {
        return Ok(WsAction::Expect(expect(
            e,
            session,
            &format!("{field}.expect"),
            ctx,
        )?));
    }
    if let Some(c) = raw.capture {
        return capture(c, field, ctx);
    }
    let think = raw.think.expect("one key is given");
    Ok(WsAction::Think(
        think_time(think).map_err(|m| ctx.err(&format!("{field}.think"), m))?,
    ))
}

fn send(raw: RawWsSend, field: &str, ctx: &Ctx) -> Result<WsMessage, ScenarioError> {
    let form = match raw {
        RawWsSend::Text(t) => return Ok(WsMessage::Text(t)),
        RawWsSend::Form(f) => f,
    };
    match (form.text, form.binary, form.json) {
        (Some(t), None, None) => Ok(WsMessage::Text(t)),
        (None, Some(b), None) => {
            if !crate::template::has_template(&b) {
                use base64::Engine as _;
                base64::engine::general_purpose::STANDARD
                    .decode(b.trim())
                    .map_err(|e| {
                        ctx.err(&format!("{field}.binary"), format!("not base64: {e}"))
                            .with_hint(
                                "write the bytes in standard base64, e.g. `binary: aGVsbG8=`",
                            )
                    })?;
            }
            Ok(WsMessage::Binary(b))
        }
        (None, None, Some(j)) => Ok(WsMessage::Json(j)),
        _ => Err(ctx
            .err(
                field,
                "a message is exactly one of text, `{binary: <base64>}` or `{json: ...}`",
            )
            .with_hint(
                "e.g. `send: hello`, `send: {binary: aGVsbG8=}` or `send: {json: {op: ping}}`",
            )),
    }
}

fn expect(
    raw: RawWsExpect,
    session: &str,
    field: &str,
    ctx: &Ctx,
) -> Result<WsExpect, ScenarioError> {
    let matcher = match (raw.json, raw.equals, raw.contains) {
        (Some(p), equals, None) => WsMatch::Json {
            path: crate::jsonpath::JsonPath::parse(&p)
                .map_err(|m| ctx.err(&format!("{field}.json"), m))?,
            equals,
        },
        (None, None, Some(t)) => WsMatch::Contains(t),
        (None, None, None) => WsMatch::Any,
        (None, Some(_), _) => return Err(ctx
            .err(
                &format!("{field}.equals"),
                "`equals` compares the value at a `json:` path",
            )
            .with_hint(
                "write `expect: {json: \"$.status\", equals: received}`, or `contains:` for text",
            )),
        (Some(_), _, Some(_)) => {
            return Err(ctx.err(field, "give `json:` or `contains:`, not both"))
        }
    };
    let within = raw.within.unwrap_or(DEFAULT_WITHIN);
    if within.is_zero() {
        return Err(ctx.err(&format!("{field}.within"), "must be above zero"));
    }
    let name = format!("{session} › expect {}", matcher.describe());
    Ok(WsExpect {
        matcher,
        within,
        name,
    })
}

/// Captures from the last message an `expect` matched: JSONPath or regex (a message has no
/// headers).
fn capture(
    raw: BTreeMap<String, crate::raw::RawCapture>,
    field: &str,
    ctx: &Ctx,
) -> Result<WsAction, ScenarioError> {
    if raw.is_empty() {
        return Err(ctx.err(&format!("{field}.capture"), "nothing to capture"));
    }
    let list = captures(raw, field, ctx)?;
    if let Some(c) = list
        .iter()
        .find(|c| matches!(c.source, CaptureSource::Header(_)))
    {
        return Err(ctx
            .err(
                &format!("{field}.capture.{}", c.name),
                "a WebSocket message has no headers",
            )
            .with_hint("capture with a JSONPath (`\"$.id\"`) or `{regex: \"...\"}`"));
    }
    Ok(WsAction::Capture(list))
}
