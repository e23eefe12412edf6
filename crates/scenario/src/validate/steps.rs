//! Flows and their steps: requests, groups, loops, think times, captures and checks.

use super::Ctx;
use crate::addresses::check_url;
use crate::credentials::{split_credentials, Credentials};
use crate::error::ScenarioError;
use crate::model::*;
use crate::raw::*;
use crate::units::parse_duration;
use std::collections::BTreeMap;

pub(super) fn flows(
    raw_flows: Vec<RawFlow>,
    raw_steps: Steps,
    target_auth: Option<&Credentials>,
    ctx: &Ctx,
) -> Result<Vec<Flow>, ScenarioError> {
    let raw_flows = match (raw_flows.is_empty(), raw_steps.is_empty()) {
        (false, false) => {
            return Err(ctx.err(
                "steps",
                "give either `flows` or top-level `steps`, not both",
            ))
        }
        (true, true) => {
            return Err(ctx
                .err("flows", "no flows: nothing to send")
                .with_hint("add e.g. `flows: [{name: main, steps: [{get: /health}]}]`"))
        }
        (false, true) => raw_flows
            .into_iter()
            .enumerate()
            .map(|(i, f)| (format!("flows[{i}]"), f))
            .collect::<Vec<_>>(),
        (true, false) => vec![(
            String::new(),
            RawFlow {
                name: Some("default".into()),
                weight: None,
                steps: raw_steps,
            },
        )],
    };
    let mut out: Vec<Flow> = Vec::new();
    let mut names = std::collections::HashSet::new();
    for (path, raw) in raw_flows {
        let steps_path = if path.is_empty() {
            "steps".to_string()
        } else {
            format!("{path}.steps")
        };
        let name = raw.name.unwrap_or_else(|| format!("flow{}", out.len() + 1));
        if !names.insert(name.clone()) {
            return Err(ctx.err(
                &format!("{path}.name"),
                format!("duplicate flow name `{name}`"),
            ));
        }
        let mut steps = Vec::new();
        for (i, s) in raw.steps.into_iter().enumerate() {
            steps.push(step(s, &format!("{steps_path}[{i}]"), target_auth, ctx)?);
        }
        let mut requests = Vec::new();
        crate::model::collect_requests(&steps, &mut requests);
        let mut sessions = Vec::new();
        crate::model::collect_ws(&steps, &mut sessions);
        if requests.is_empty() && sessions.is_empty() {
            return Err(ctx.err(&steps_path, format!("flow `{name}` has no request step")));
        }
        out.push(Flow {
            name,
            weight: raw.weight.unwrap_or(1),
            steps,
        });
    }
    if out.iter().all(|f| f.weight == 0) {
        return Err(ctx.err("flows", "all flow weights are 0"));
    }
    Ok(out)
}

/// One step as written: a loop, a `once` block, a think time or a request, each checked for
/// keys that belong to another kind of step.
fn step(
    mut raw: Box<RawStep>,
    field: &str,
    target_auth: Option<&Credentials>,
    ctx: &Ctx,
) -> Result<Step, ScenarioError> {
    if let Some(grpc) = raw.grpc.take() {
        return super::grpc::grpc_step(raw, grpc, field, target_auth, ctx);
    }
    if let Some(ws) = raw.ws.take() {
        return ws_step(raw, ws, field, ctx);
    }
    let sends = [
        &raw.get,
        &raw.post,
        &raw.put,
        &raw.patch,
        &raw.delete,
        &raw.head,
        &raw.options,
    ]
    .iter()
    .any(|m| m.is_some());
    if raw.stream.is_some() && !sends {
        return Err(ctx
            .err(
                &format!("{field}.stream"),
                "`stream:` belongs to a request step",
            )
            .with_hint("e.g. `- post: /v1/chat/completions` with `json: {..., stream: true}` and `stream: {format: sse}`"));
    }
    if raw.http.is_some() && !sends {
        return Err(ctx
            .err(
                &format!("{field}.http"),
                "`http:` belongs to a request step",
            )
            .with_hint("set it on the steps that send requests, or in the top-level `http:`"));
    }
    if let Some(l) = raw.loop_ {
        if sends || raw.think.is_some() || raw.once.is_some() {
            return Err(ctx
                .err(
                    field,
                    "a `loop` step cannot also send a request, think or hold `once`",
                )
                .with_hint("put the request inside `loop: {count: N, steps: [...]}`"));
        }
        let steps = sub_steps(l.steps, &format!("{field}.loop.steps"), target_auth, ctx)?;
        return Ok(Step::Loop {
            count: l.count,
            steps,
        });
    }
    if let Some(once) = raw.once {
        if sends || raw.think.is_some() {
            return Err(ctx
                .err(field, "a `once` step cannot also send a request or think")
                .with_hint("write `- once: [ {post: /api/auth/signin, ...} ]`"));
        }
        return Ok(Step::Once(sub_steps(
            once,
            &format!("{field}.once"),
            target_auth,
            ctx,
        )?));
    }
    request_step(raw, field, target_auth, ctx)
}

/// A `ws:` step, which holds nothing of a request's, a loop's or a think's.
fn ws_step(
    raw: Box<RawStep>,
    ws: crate::raw_ws::RawWs,
    field: &str,
    ctx: &Ctx,
) -> Result<Step, ScenarioError> {
    let other = [
        ("get", raw.get.is_some()),
        ("post", raw.post.is_some()),
        ("put", raw.put.is_some()),
        ("patch", raw.patch.is_some()),
        ("delete", raw.delete.is_some()),
        ("head", raw.head.is_some()),
        ("options", raw.options.is_some()),
        ("json", raw.json.is_some()),
        ("body", raw.body.is_some()),
        ("form", raw.form.is_some()),
        ("think", raw.think.is_some()),
        ("loop", raw.loop_.is_some()),
        ("once", raw.once.is_some()),
        ("http", raw.http.is_some()),
        ("check", raw.check.is_some()),
        ("timeout", raw.timeout.is_some()),
        ("capture", !raw.capture.is_empty()),
        ("headers", !raw.headers.is_empty()),
        ("query", !raw.query.is_empty()),
        ("tags", !raw.tags.is_empty()),
        ("stream", raw.stream.is_some()),
    ];
    if let Some((key, _)) = other.iter().find(|(_, set)| *set) {
        return Err(ctx
            .err(
                &format!("{field}.{key}"),
                format!("a `ws:` step cannot also have `{key}`"),
            )
            .with_hint("put the session's headers, timeout and tags inside `ws:`, its messages, checks and captures in `ws.steps`, and anything else in a step of its own"));
    }
    super::ws::ws_step(ws, raw.name, raw.group, field, ctx)
}

/// A step that is neither a loop nor a `once` block: a think time or one request, with its
/// URL, body, captures and checks checked in that order.
fn request_step(
    mut raw: Box<RawStep>,
    field: &str,
    target_auth: Option<&Credentials>,
    ctx: &Ctx,
) -> Result<Step, ScenarioError> {
    let methods = [
        (Method::Get, raw.get),
        (Method::Post, raw.post),
        (Method::Put, raw.put),
        (Method::Patch, raw.patch),
        (Method::Delete, raw.delete),
        (Method::Head, raw.head),
        (Method::Options, raw.options),
    ];
    let mut chosen: Vec<(Method, String)> = methods
        .into_iter()
        .filter_map(|(m, u)| u.map(|u| (m, u)))
        .collect();
    if let Some(think) = raw.think {
        if !chosen.is_empty() || raw.json.is_some() || raw.body.is_some() || raw.form.is_some() {
            return Err(ctx
                .err(field, "a `think` step cannot also send a request")
                .with_hint("put `think` in a step of its own"));
        }
        return Ok(Step::Think(
            think_time(think).map_err(|m| ctx.err(&format!("{field}.think"), m))?,
        ));
    }
    if chosen.len() != 1 {
        let msg = if chosen.is_empty() {
            "a step needs one of get, post, put, patch, delete, head, options, ws, grpc, think, loop or once"
        } else {
            "a step sends one request: give only one of get, post, put, patch, delete, head, options"
        };
        return Err(ctx
            .err(field, msg)
            .with_hint("e.g. `- get: /api/ping` or `- post: /api/users` with `json: {...}`"));
    }
    let (method, url) = chosen.remove(0);
    let url_field = format!("{field}.{}", method.as_str().to_ascii_lowercase());
    let (url, auth) = request_url(url, &url_field, target_auth, ctx)?;
    let body = request_body(raw.json, raw.body, raw.form, field, ctx)?;
    let captures = captures(raw.capture, field, ctx)?;
    let stream = match raw.stream.take() {
        Some(s) => Some(super::stream::stream_spec(s, field, ctx)?),
        None => None,
    };
    if let Some(spec) = &stream {
        super::stream::check_captures(&captures, spec, field, ctx)?;
    }
    let stream_check = raw.check.as_mut().and_then(|c| c.stream.take());
    let mut checks = match raw.check {
        Some(c) => checks(c, &format!("{field}.check"), ctx)?,
        None => Vec::new(),
    };
    checks.extend(super::stream::stream_checks(
        stream_check,
        stream.is_some(),
        &format!("{field}.check"),
        ctx,
    )?);
    let http_version = super::http::step_version(raw.http, field, ctx)?;
    let name = raw
        .name
        .unwrap_or_else(|| format!("{} {}", method.as_str(), url));
    Ok(Step::Request(Box::new(RequestStep {
        name,
        group: raw.group,
        method,
        url,
        headers: raw.headers.into_iter().collect(),
        body,
        timeout: raw.timeout,
        query: raw
            .query
            .into_iter()
            .map(|(k, v)| (k, v.into_text()))
            .collect(),
        tags: raw
            .tags
            .into_iter()
            .map(|(k, v)| (k, v.into_text()))
            .collect(),
        captures,
        checks,
        auth,
        http_version,
        grpc: None,
        stream: stream.map(std::sync::Arc::new),
    })))
}

/// A request's URL, a path on the target or an absolute URL, and the credentials it is sent
/// with: those written in an absolute URL, else the target's.
pub(super) fn request_url(
    url: String,
    url_field: &str,
    target_auth: Option<&Credentials>,
    ctx: &Ctx,
) -> Result<(String, Option<Credentials>), ScenarioError> {
    let url = crate::url_env::with_env_origin(&url).map_err(|m| ctx.err(url_field, m))?;
    if url.starts_with("http://") || url.starts_with("https://") {
        let url = crate::credentials::with_userinfo_env(&url).map_err(|m| ctx.err(url_field, m))?;
        // The host, after any `user:password@`.
        let host = url
            .split_once("://")
            .map_or("", |(_, r)| r.split(['/', '?']).next().unwrap_or(""));
        let host = host.rsplit_once('@').map_or(host, |(_, h)| h);
        if crate::template::has_template(host) {
            return Err(ctx
                .err(url_field, "templates are not allowed in the host of a URL")
                .with_hint(
                    "connections are opened before the run: put variables in the path or query (`{{ env.NAME }}`, read when the file loads, may stand in the host)",
                ));
        }
        check_url(&url).map_err(|m| ctx.err(url_field, m))?;
        return Ok(split_credentials(&url));
    }
    if !url.starts_with('/') {
        return Err(ctx
            .err(
                url_field,
                format!("`{url}` is neither a path starting with / nor an http(s) URL"),
            )
            .with_hint(format!("write `/{url}`")));
    }
    Ok((url, target_auth.cloned()))
}

/// At most one of `json`, `body` and `form`.
fn request_body(
    json: Option<serde_json::Value>,
    body: Option<String>,
    form: Option<BTreeMap<String, Scalar>>,
    field: &str,
    ctx: &Ctx,
) -> Result<Option<Body>, ScenarioError> {
    match (json, body, form) {
        (Some(j), None, None) => Ok(Some(Body::Json(j))),
        (None, Some(b), None) => Ok(Some(Body::Text(b))),
        (None, None, Some(f)) => Ok(Some(Body::Form(
            f.into_iter().map(|(k, v)| (k, v.into_text())).collect(),
        ))),
        (None, None, None) => Ok(None),
        _ => Err(ctx.err(
            &format!("{field}.body"),
            "give only one of `json`, `body` or `form`",
        )),
    }
}

/// `capture:`: variable names, JSONPaths and regexes (with the group they take) checked.
pub(super) fn captures(
    raw: BTreeMap<String, RawCapture>,
    field: &str,
    ctx: &Ctx,
) -> Result<Vec<Capture>, ScenarioError> {
    let mut captures = Vec::new();
    for (name, c) in raw {
        let cfield = format!("{field}.capture.{name}");
        if !is_identifier(&name) {
            return Err(ctx
                .err(&cfield, format!("`{name}` is not a valid variable name"))
                .with_hint("use letters, digits and `_`, starting with a letter"));
        }
        let source = match c {
            RawCapture::JsonPath(p) => CaptureSource::JsonPath(
                crate::jsonpath::JsonPath::parse(&p).map_err(|m| ctx.err(&cfield, m))?,
            ),
            RawCapture::Header { header } => CaptureSource::Header(header),
            RawCapture::Regex { regex, group } => regex_capture(regex, group, &cfield, ctx)?,
        };
        captures.push(Capture { name, source });
    }
    Ok(captures)
}

/// A regex capture takes group 1 when the regex has groups, else the whole match.
fn regex_capture(
    regex: String,
    group: Option<usize>,
    cfield: &str,
    ctx: &Ctx,
) -> Result<CaptureSource, ScenarioError> {
    let re =
        regex::Regex::new(&regex).map_err(|e| ctx.err(cfield, format!("invalid regex: {e}")))?;
    let group = group.unwrap_or(if re.captures_len() > 1 { 1 } else { 0 });
    if group >= re.captures_len() {
        return Err(ctx.err(
            cfield,
            format!(
                "the regex has {} group(s); group {group} does not exist",
                re.captures_len() - 1
            ),
        ));
    }
    Ok(CaptureSource::Regex {
        pattern: regex,
        group,
    })
}

/// `check:`, in the order the engine runs them: status first.
pub(super) fn checks(c: RawCheck, cfield: &str, ctx: &Ctx) -> Result<Vec<Check>, ScenarioError> {
    if c.grpc_status.is_some() {
        return Err(ctx
            .err(
                &format!("{cfield}.grpc_status"),
                "`grpc_status` only applies to `grpc:` steps",
            )
            .with_hint("check an HTTP answer with `status:`, e.g. `check: { status: 200 }`"));
    }
    if c.stream.is_some() {
        return Err(ctx
            .err(
                &format!("{cfield}.stream"),
                "`check: {stream: ...}` needs a step that reads a stream",
            )
            .with_hint("add `stream: {format: sse}` to a request step"));
    }
    let mut checks = Vec::new();
    match c.status {
        Some(StatusSpec::One(s)) => checks.push(Check::Status(vec![s])),
        Some(StatusSpec::Many(v)) if !v.is_empty() => checks.push(Check::Status(v)),
        Some(StatusSpec::Many(_)) => {
            return Err(ctx.err(&format!("{cfield}.status"), "list at least one status"))
        }
        None => {}
    }
    if let Some(Check::Status(v)) = checks.first() {
        if let Some(bad) = v.iter().find(|s| !(100..=599).contains(*s)) {
            return Err(ctx.err(
                &format!("{cfield}.status"),
                format!("`{bad}` is not an HTTP status (100..599)"),
            ));
        }
    }
    for (path, expected) in c.json {
        let path = crate::jsonpath::JsonPath::parse(&path)
            .map_err(|m| ctx.err(&format!("{cfield}.json"), m))?;
        checks.push(Check::Json { path, expected });
    }
    if let Some(t) = c.body_contains {
        checks.push(Check::BodyContains(t));
    }
    for (name, value) in c.header {
        checks.push(Check::Header { name, value });
    }
    if let Some(d) = c.max_latency {
        checks.push(Check::MaxLatency(d));
    }
    Ok(checks)
}

fn sub_steps(
    raw: Steps,
    field: &str,
    target_auth: Option<&Credentials>,
    ctx: &Ctx,
) -> Result<Vec<Step>, ScenarioError> {
    if raw.is_empty() {
        return Err(ctx.err(field, "no steps"));
    }
    raw.into_iter()
        .enumerate()
        .map(|(i, s)| step(s, &format!("{field}[{i}]"), target_auth, ctx))
        .collect()
}

fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

pub(super) fn think_time(spec: ThinkSpec) -> Result<ThinkTime, String> {
    match spec {
        ThinkSpec::Seconds(s) => {
            let d = crate::limits::duration_from_secs(s)?;
            Ok(ThinkTime { min: d, max: d })
        }
        ThinkSpec::Text(t) => {
            if let Some((a, b)) = t.split_once("..") {
                let (min, max) = (parse_duration(a)?, parse_duration(b)?);
                if min > max {
                    return Err(format!(
                        "think range `{t}` runs backwards: write the shorter time first"
                    ));
                }
                Ok(ThinkTime { min, max })
            } else {
                let d = parse_duration(&t)?;
                Ok(ThinkTime { min: d, max: d })
            }
        }
    }
}
