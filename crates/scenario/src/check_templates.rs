//! Compiles every template of a scenario once at load time, so that an unknown variable or a
//! capture used before it is set is reported with its `file:line:column`, never at run time;
//! and checks every header written (name a token, value one line within its size limit), so
//! that nothing in a scenario or a `-H` flag can inject a header.

use crate::error::ScenarioError;
use crate::limits::{MAX_HEADER_NAME, MAX_HEADER_VALUE};
use crate::locate::Ctx;
use crate::model::{Body, DataSet, Defaults, Flow, Step};
use crate::template::{compile, has_template, is_control, Names, Part};
use std::collections::HashSet;

pub fn flows(
    flows: &[Flow],
    shorthand: bool,
    defaults: &Defaults,
    data: &[DataSet],
    ctx: &Ctx,
) -> Result<(), ScenarioError> {
    let mut captures: Vec<String> = Vec::new();
    let mut seen = HashSet::new();
    for f in flows {
        for c in crate::model::step_captures(&f.steps) {
            if seen.insert(c.name.as_str()) {
                captures.push(c.name.clone());
            }
        }
    }
    let names = Names {
        data,
        captures: &captures,
        available: None,
    };
    for (k, v) in &defaults.headers {
        header(k, v, &names, &format!("defaults.headers.{k}"), ctx)?;
    }
    for (i, f) in flows.iter().enumerate() {
        let path = if shorthand {
            "steps".to_string()
        } else {
            format!("flows[{i}].steps")
        };
        let mut available = Vec::new();
        let mut available_set = HashSet::new();
        walk(
            &f.steps,
            &path,
            data,
            &captures,
            (&mut available, &mut available_set),
            ctx,
        )?;
    }
    Ok(())
}

/// Captures set so far in a flow: in order (for templates) and as a set (to add each once).
type Available<'a, 'b> = (&'a mut Vec<String>, &'a mut HashSet<&'b str>);

fn walk<'b>(
    steps: &'b [Step],
    path: &str,
    data: &[DataSet],
    captures: &[String],
    (available, available_set): Available<'_, 'b>,
    ctx: &Ctx,
) -> Result<(), ScenarioError> {
    for (i, step) in steps.iter().enumerate() {
        let field = format!("{path}[{i}]");
        match step {
            Step::Think(_) => {}
            Step::Loop { steps, .. } => walk(
                steps,
                &format!("{field}.loop.steps"),
                data,
                captures,
                (available, available_set),
                ctx,
            )?,
            Step::Once(steps) => walk(
                steps,
                &format!("{field}.once"),
                data,
                captures,
                (available, available_set),
                ctx,
            )?,
            Step::Request(r) => {
                let names = Names {
                    data,
                    captures,
                    available: Some(available),
                };
                // A `grpc:` step's parts are written under `grpc:` (its URL is its `call:`).
                let (url_field, headers_field, body_field) = if r.grpc.is_some() {
                    (
                        format!("{field}.grpc.call"),
                        format!("{field}.grpc.metadata"),
                        format!("{field}.grpc.message"),
                    )
                } else {
                    let method = r.method.as_str().to_ascii_lowercase();
                    (
                        format!("{field}.{method}"),
                        format!("{field}.headers"),
                        format!("{field}.json"),
                    )
                };
                if let Some(rest) = r.url.split_once("://").map(|(_, rest)| rest) {
                    let authority = rest.split('/').next().unwrap_or("");
                    if has_template(authority) {
                        return Err(ctx
                            .err(&url_field, "templates are not allowed in the host of a URL")
                            .with_hint("connections are opened before the run: put variables in the path or query"));
                    }
                }
                check(&r.url, &names, &url_field, ctx)?;
                for (k, v) in &r.headers {
                    header(k, v, &names, &format!("{headers_field}.{k}"), ctx)?;
                }
                for (k, v) in &r.query {
                    check(v, &names, &format!("{field}.query.{k}"), ctx)?;
                }
                match &r.body {
                    Some(Body::Text(t)) => check(t, &names, &format!("{field}.body"), ctx)?,
                    Some(Body::Form(f)) => {
                        for (k, v) in f {
                            check(v, &names, &format!("{field}.form.{k}"), ctx)?;
                        }
                    }
                    Some(Body::Json(v)) => json(v, &names, &body_field, ctx)?,
                    None => {}
                }
                for c in &r.captures {
                    if available_set.insert(c.name.as_str()) {
                        available.push(c.name.clone());
                    }
                }
            }
            Step::Ws(w) => ws(
                w,
                &format!("{field}.ws"),
                data,
                captures,
                (available, available_set),
                ctx,
            )?,
        }
    }
    Ok(())
}

/// A WebSocket session's URL, headers and messages; its captures become available to the
/// actions after them.
fn ws<'b>(
    w: &'b crate::ws::WsStep,
    field: &str,
    data: &[DataSet],
    captures: &[String],
    (available, available_set): Available<'_, 'b>,
    ctx: &Ctx,
) -> Result<(), ScenarioError> {
    use crate::ws::{WsAction, WsMessage};
    let names = Names {
        data,
        captures,
        available: Some(available),
    };
    check(&w.url, &names, &format!("{field}.url"), ctx)?;
    for (k, v) in &w.headers {
        header(k, v, &names, &format!("{field}.headers.{k}"), ctx)?;
    }
    for (i, a) in w.actions.iter().enumerate() {
        let afield = format!("{field}.steps[{i}]");
        let names = Names {
            data,
            captures,
            available: Some(available),
        };
        match a {
            WsAction::Send(WsMessage::Text(t)) => check(t, &names, &format!("{afield}.send"), ctx)?,
            WsAction::Send(WsMessage::Binary(b)) => {
                check(b, &names, &format!("{afield}.send.binary"), ctx)?
            }
            WsAction::Send(WsMessage::Json(v)) => {
                json(v, &names, &format!("{afield}.send.json"), ctx)?
            }
            WsAction::Capture(list) => {
                for c in list {
                    if available_set.insert(c.name.as_str()) {
                        available.push(c.name.clone());
                    }
                }
            }
            WsAction::Expect(_) | WsAction::Think(_) => {}
        }
    }
    Ok(())
}

fn json(v: &serde_json::Value, names: &Names, field: &str, ctx: &Ctx) -> Result<(), ScenarioError> {
    match v {
        serde_json::Value::String(s) => check(s, names, field, ctx),
        serde_json::Value::Array(a) => {
            for (i, item) in a.iter().enumerate() {
                json(item, names, &format!("{field}[{i}]"), ctx)?;
            }
            Ok(())
        }
        serde_json::Value::Object(m) => {
            for (k, item) in m {
                json(item, names, &format!("{field}.{k}"), ctx)?;
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

/// A header as written: its name a token, its value one line (templates' literal and
/// `env.NAME` parts included: their text is known now) within the size limits.
fn header(
    name: &str,
    value: &str,
    names: &Names,
    field: &str,
    ctx: &Ctx,
) -> Result<(), ScenarioError> {
    if name.is_empty() || name.len() > MAX_HEADER_NAME || !name.bytes().all(is_token_byte) {
        let shown: String = name.chars().take(80).collect();
        return Err(ctx
            .err(
                field,
                format!("`{}` is not a valid header name", shown.escape_debug()),
            )
            .with_hint(
                "a header name is letters, digits and !#$%&'*+-.^_`|~ (no spaces or colons)",
            ));
    }
    if value.len() > MAX_HEADER_VALUE {
        return Err(ctx.err(
            field,
            format!(
                "the value is {} bytes, above the limit of {MAX_HEADER_VALUE} bytes for a header",
                value.len()
            ),
        ));
    }
    let template = template(value, names, field, ctx)?;
    let literal = [Part::Lit(value.to_string())];
    let parts = match &template {
        Some(t) => t.parts.as_slice(),
        None => &literal,
    };
    for part in parts {
        let (text, from_env) = match part {
            Part::Lit(t) => (t, false),
            Part::Env(t) => (t, true),
            Part::Var(_) => continue,
        };
        if let Some(bad) = text.bytes().find(|&b| is_control(b)) {
            let what = match bad {
                b'\r' | b'\n' => "a line break (CR or LF)".to_string(),
                other => format!("the control character {other:#04x}"),
            };
            let message = if from_env {
                format!("an environment variable used in this header holds {what}: it would inject a header")
            } else {
                format!("the header value holds {what}: a header value is one line")
            };
            return Err(ctx.err(field, message));
        }
    }
    Ok(())
}

/// RFC 9110 `tchar`.
fn is_token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

fn check(text: &str, names: &Names, field: &str, ctx: &Ctx) -> Result<(), ScenarioError> {
    template(text, names, field, ctx).map(|_| ())
}

/// The compiled template, or `None` for text without `{{`.
fn template(
    text: &str,
    names: &Names,
    field: &str,
    ctx: &Ctx,
) -> Result<Option<crate::template::Template>, ScenarioError> {
    if !has_template(text) {
        return Ok(None);
    }
    compile(text, names).map(Some).map_err(|m| {
        let (message, hint) = match m.split_once(", did you mean ") {
            Some((msg, s)) => (msg.to_string(), Some(format!("did you mean {s}"))),
            None => (m, None),
        };
        let e = ctx.err(field, message);
        match hint {
            Some(h) => e.with_hint(h),
            None => e,
        }
    })
}
