//! The `grpc:` step: its call, `.proto`, message, metadata, target and timeout, turned into a
//! request step (`POST /package.Service/Method` over HTTP/2 whose JSON body is the message)
//! carrying a [`GrpcCall`]; each mistake located at its field.

use super::grpc_proto::{call_name, method};
use super::steps::{captures, checks, request_url};
use super::Ctx;
use crate::credentials::Credentials;
use crate::error::ScenarioError;
use crate::grpc::GrpcCall;
use crate::model::{Body, CaptureSource, Check, HttpVersion, Method, RequestStep, Step};
use crate::raw::{RawCheck, RawStep, Scalar};
use crate::raw_grpc::{RawGrpc, RawGrpcStatus};
use loadlab_metrics::GrpcCode;
use std::collections::BTreeMap;
use std::sync::Arc;

/// A `grpc:` step; `field` is the step's own path (`flows[0].steps[2]`).
pub(super) fn grpc_step(
    raw: Box<RawStep>,
    g: RawGrpc,
    field: &str,
    target_auth: Option<&Credentials>,
    ctx: &Ctx,
) -> Result<Step, ScenarioError> {
    refuse_other_keys(&raw, field, ctx)?;
    let gfield = format!("{field}.grpc");
    let call = g.call.as_deref().ok_or_else(|| {
        ctx.err(
            &gfield,
            "a `grpc:` step needs `call: package.Service/Method`",
        )
        .with_hint(
            "e.g. `grpc: {call: permits.v1.Permits/Create, proto: permits.proto, message: {...}}`",
        )
    })?;
    let name = call_name(call, &format!("{gfield}.call"), ctx)?;
    let descriptor = match &g.proto {
        Some(p) => Some(method(p, &name, &gfield, ctx)?),
        None => None,
    };
    let message = message(g.message, descriptor.as_ref(), &gfield, ctx)?;
    let call = GrpcCall {
        service: name.service,
        method: name.method,
        descriptor,
        proto: g.proto,
    };
    let (url, auth) = url(&call, g.target, &gfield, target_auth, ctx)?;
    if g.timeout.is_some() && raw.timeout.is_some() {
        return Err(ctx
            .err(
                &format!("{gfield}.timeout"),
                "the timeout is given twice: in `grpc:` and on the step",
            )
            .with_hint("keep one of the two"));
    }
    let mut headers = vec![
        ("content-type".to_string(), "application/grpc".to_string()),
        ("te".to_string(), "trailers".to_string()),
    ];
    headers.extend(metadata(g.metadata, &gfield, ctx)?);
    let checks = match raw.check {
        Some(c) => grpc_checks(c, &format!("{field}.check"), ctx)?,
        None => Vec::new(),
    };
    let captures = json_captures(raw.capture, field, ctx)?;
    Ok(Step::Request(Box::new(RequestStep {
        name: raw
            .name
            .unwrap_or_else(|| format!("gRPC {}", call.full_name())),
        group: raw.group,
        method: Method::Post,
        url,
        headers,
        body: Some(Body::Json(message)),
        timeout: g.timeout.or(raw.timeout),
        query: Vec::new(),
        tags: raw
            .tags
            .into_iter()
            .map(|(k, v)| (k, v.into_text()))
            .collect(),
        captures,
        checks,
        auth,
        http_version: Some(HttpVersion::Http2),
        grpc: Some(Arc::new(call)),
        stream: None,
    })))
}

/// `message:` (the empty message when left out), checked against the input type when the
/// `.proto` is known.
fn message(
    raw: Option<serde_json::Value>,
    descriptor: Option<&prost_reflect::MethodDescriptor>,
    gfield: &str,
    ctx: &Ctx,
) -> Result<serde_json::Value, ScenarioError> {
    let message = match raw {
        None | Some(serde_json::Value::Null) => serde_json::json!({}),
        Some(m) => m,
    };
    let mfield = format!("{gfield}.message");
    match descriptor {
        Some(d) => super::grpc_message::check(&message, &d.input(), &mfield, ctx)?,
        None if !message.is_object() => {
            return Err(ctx
                .err(&mfield, "a message is written as a mapping of its fields")
                .with_hint("e.g. `message: {applicant: ada, kind: building}`"))
        }
        None => {}
    }
    Ok(message)
}

/// `capture:` by JSONPath (over the answer's JSON form) or header; a regex has no text to read.
fn json_captures(
    raw: BTreeMap<String, crate::raw::RawCapture>,
    field: &str,
    ctx: &Ctx,
) -> Result<Vec<crate::model::Capture>, ScenarioError> {
    let list = captures(raw, field, ctx)?;
    match list
        .iter()
        .find(|c| matches!(c.source, CaptureSource::Regex { .. }))
    {
        Some(c) => Err(ctx
            .err(
                &format!("{field}.capture.{}", c.name),
                "a regex capture reads a body's text; a gRPC answer is read in its JSON form",
            )
            .with_hint("capture with a JSONPath over the response message, e.g. `\"$.id\"`")),
        None => Ok(list),
    }
}

/// Keys of other kinds of steps, and those a gRPC call writes elsewhere.
fn refuse_other_keys(raw: &RawStep, field: &str, ctx: &Ctx) -> Result<(), ScenarioError> {
    let message = "a `grpc:` step sends `grpc.message`: move the fields there";
    let other = [
        ("json", raw.json.is_some(), message),
        ("body", raw.body.is_some(), message),
        ("form", raw.form.is_some(), message),
        (
            "headers",
            !raw.headers.is_empty(),
            "a gRPC call's headers are its `grpc.metadata`",
        ),
        (
            "http",
            raw.http.is_some(),
            "a gRPC call always speaks HTTP/2 (h2c on http://, ALPN h2 on https://)",
        ),
        (
            "query",
            !raw.query.is_empty(),
            "a gRPC call has no query string",
        ),
        (
            "stream",
            raw.stream.is_some(),
            "a gRPC server stream's messages are counted by the call itself",
        ),
    ];
    if let Some((key, _, why)) = other.iter().find(|(_, set, _)| *set) {
        return Err(ctx
            .err(&format!("{field}.{key}"), format!("a `grpc:` step cannot have `{key}`: {why}"))
            .with_hint("e.g. `grpc: {call: permits.v1.Permits/Get, message: {id: \"{{ permit_id }}\"}, metadata: {authorization: \"Bearer {{ token }}\"}}`"));
    }
    let kinds = [
        ("get", raw.get.is_some()),
        ("post", raw.post.is_some()),
        ("put", raw.put.is_some()),
        ("patch", raw.patch.is_some()),
        ("delete", raw.delete.is_some()),
        ("head", raw.head.is_some()),
        ("options", raw.options.is_some()),
        ("ws", raw.ws.is_some()),
        ("think", raw.think.is_some()),
        ("loop", raw.loop_.is_some()),
        ("once", raw.once.is_some()),
    ];
    match kinds.iter().find(|(_, set)| *set) {
        Some((key, _)) => Err(ctx
            .err(
                &format!("{field}.{key}"),
                format!("a `grpc:` step cannot also have `{key}`"),
            )
            .with_hint("put it in a step of its own")),
        None => Ok(()),
    }
}

/// The request's URL: the path alone (sent to the scenario's target), or `target:` + path.
fn url(
    call: &GrpcCall,
    target: Option<String>,
    gfield: &str,
    target_auth: Option<&Credentials>,
    ctx: &Ctx,
) -> Result<(String, Option<Credentials>), ScenarioError> {
    let Some(t) = target else {
        return Ok((call.path(), target_auth.cloned()));
    };
    let tfield = format!("{gfield}.target");
    let Some((scheme, rest)) = t
        .split_once("://")
        .filter(|(s, _)| *s == "http" || *s == "https")
    else {
        return Err(ctx
            .err(&tfield, format!("`{t}` is not an http:// or https:// URL"))
            .with_hint("write e.g. `target: http://127.0.0.1:50051` (h2c) or `https://api.example.com` (TLS, ALPN h2)"));
    };
    let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
    if !path.is_empty() {
        return Err(ctx
            .err(
                &tfield,
                format!("`{t}` has a path: a gRPC call's path is `{}`", call.path()),
            )
            .with_hint(format!("write `{scheme}://{authority}`")));
    }
    request_url(
        format!("{scheme}://{authority}{}", call.path()),
        &tfield,
        target_auth,
        ctx,
    )
}

/// `metadata:` as headers: names lowercased (HTTP/2), the ones gRPC itself sets refused,
/// `-bin` values checked as base64 when written out.
fn metadata(
    raw: BTreeMap<String, Scalar>,
    gfield: &str,
    ctx: &Ctx,
) -> Result<Vec<(String, String)>, ScenarioError> {
    let mut out = Vec::new();
    for (name, value) in raw {
        let mfield = format!("{gfield}.metadata.{name}");
        let lower = name.to_ascii_lowercase();
        let token = |b: u8| b.is_ascii_alphanumeric() || b"-_.".contains(&b);
        if lower.is_empty() || !lower.bytes().all(token) {
            return Err(ctx
                .err(&mfield, format!("`{name}` is not a metadata key"))
                .with_hint(
                    "use letters, digits, `-`, `_` and `.`, e.g. `authorization` or `x-request-id`",
                ));
        }
        if lower == "content-type" || lower == "te" || lower.starts_with("grpc-") {
            return Err(ctx
                .err(&mfield, format!("`{lower}` is set by gRPC itself"))
                .with_hint("leave it out; a deadline is the step's `timeout`"));
        }
        let value = value.into_text();
        if lower.ends_with("-bin") && !crate::template::has_template(&value) {
            use base64::Engine as _;
            base64::engine::general_purpose::STANDARD
                .decode(value.trim())
                .map_err(|e| {
                    ctx.err(&mfield, format!("a `-bin` key's value is base64: {e}"))
                        .with_hint("write the bytes in standard base64, e.g. `aGVsbG8=`")
                })?;
        }
        out.push((lower, value));
    }
    Ok(out)
}

/// A gRPC step's `check:`: `grpc_status` first, JSONPath, header and latency checks; an
/// HTTP status or a text search has no meaning for a gRPC answer.
fn grpc_checks(mut c: RawCheck, cfield: &str, ctx: &Ctx) -> Result<Vec<Check>, ScenarioError> {
    if c.status.is_some() {
        return Err(ctx
            .err(
                &format!("{cfield}.status"),
                "a gRPC call's outcome is its grpc-status, not an HTTP status: use `grpc_status`",
            )
            .with_hint("e.g. `check: { grpc_status: OK }` or `grpc_status: [OK, NOT_FOUND]`"));
    }
    if c.body_contains.is_some() {
        return Err(ctx
            .err(
                &format!("{cfield}.body_contains"),
                "a gRPC answer is checked in its JSON form: `body_contains` does not apply",
            )
            .with_hint("check a field with a JSONPath, e.g. `json: { \"$.status\": RECEIVED }`"));
    }
    let mut out = Vec::new();
    if let Some(spec) = c.grpc_status.take() {
        out.push(Check::GrpcStatus(statuses(
            spec,
            &format!("{cfield}.grpc_status"),
            ctx,
        )?));
    }
    out.extend(checks(c, cfield, ctx)?);
    Ok(out)
}

/// `OK`, `unavailable`, `14` or a list of them.
fn statuses(spec: RawGrpcStatus, field: &str, ctx: &Ctx) -> Result<Vec<GrpcCode>, ScenarioError> {
    let list = match spec {
        RawGrpcStatus::One(s) => vec![s],
        RawGrpcStatus::Many(v) if v.is_empty() => {
            return Err(ctx.err(field, "list at least one status"))
        }
        RawGrpcStatus::Many(v) => v,
    };
    let names: Vec<&str> = GrpcCode::ALL.iter().map(|c| c.name()).collect();
    let mut out = Vec::new();
    for s in list {
        let text = s.into_text();
        let code = GrpcCode::parse(&text).ok_or_else(|| {
            let err = ctx.err(field, format!("`{text}` is not a gRPC status"));
            let near = (text.parse::<u64>().is_err())
                .then(|| crate::suggest::closest(&text.to_ascii_uppercase(), names.iter().copied()))
                .flatten();
            match near {
                Some(n) => err.with_hint(format!("did you mean `{n}`?")),
                None => err.with_hint(format!(
                    "use a name or a number 0..16: {}",
                    names.join(", ")
                )),
            }
        })?;
        if !out.contains(&code) {
            out.push(code);
        }
    }
    Ok(out)
}
