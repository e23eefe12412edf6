//! `http.get/post/put/patch/del/head/options/request(...)` as a request step: the URL, the
//! body (`JSON.stringify` → `json:`, an object → `form:`, text → `body:`) and the params
//! (`headers`, `tags.name` → the step's name, `timeout`).

use super::js::Expr;
use super::values::{Conv, Scope};
use crate::report::Report;
use serde_json::Value;

#[derive(Debug, Clone, PartialEq)]
pub enum Body {
    Json(Value),
    Text(String),
    Form(Vec<(String, String)>),
}

/// The checks of a step, in the scenario language's terms.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Checks {
    pub status: Vec<u16>,
    pub json: Vec<(String, Value)>,
    pub body_contains: Option<String>,
    pub header: Vec<(String, String)>,
    pub max_latency: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    pub line: usize,
    /// `params.tags.name`.
    pub name: Option<String>,
    pub method: &'static str,
    pub url: String,
    pub group: Option<String>,
    pub headers: Vec<(String, String)>,
    pub body: Option<Body>,
    pub timeout: Option<String>,
    pub checks: Checks,
    /// `(variable, JSONPath)`.
    pub captures: Vec<(String, String)>,
    pub comments: Vec<String>,
}

/// The method of `http.NAME`.
fn shape(func: &str) -> Option<&'static str> {
    Some(match func {
        "get" => "get",
        "head" => "head",
        "post" => "post",
        "put" => "put",
        "patch" => "patch",
        "del" => "delete",
        "options" => "options",
        _ => return None,
    })
}

fn method_of(text: &str) -> Option<&'static str> {
    Some(match text.to_ascii_uppercase().as_str() {
        "GET" => "get",
        "POST" => "post",
        "PUT" => "put",
        "PATCH" => "patch",
        "DELETE" => "delete",
        "HEAD" => "head",
        "OPTIONS" => "options",
        _ => return None,
    })
}

/// Whether `func` (after `http.`) is a request this module converts.
pub fn is_request(func: &str) -> bool {
    func == "request" || shape(func).is_some()
}

/// The request step of `http.FUNC(args)` at `line`.
pub fn request(
    scope: &mut Scope,
    func: &str,
    args: &[Expr],
    line: usize,
    group: Option<&str>,
    report: &mut Report,
) -> Conv<Request> {
    let (method, args) = if func == "request" {
        let m = args
            .first()
            .and_then(|m| scope.text(m).ok())
            .ok_or_else(|| "http.request without a literal method".to_string())?;
        let method =
            method_of(&m).ok_or_else(|| format!("http.request method `{m}`: not converted"))?;
        (method, &args[1..])
    } else {
        let method = shape(func).ok_or_else(|| format!("http.{func}"))?;
        (method, args)
    };
    // `http.get(url, params)`; the others take a body before the params (k6's `http.request`
    // too, whatever its method).
    let (body_at, params_at) = match (func, method) {
        ("get" | "head", _) => (None, 1),
        _ => (Some(1), 2),
    };
    let url_expr = args
        .first()
        .ok_or_else(|| format!("http.{func} without a URL"))?;
    let url = scope
        .url(url_expr)
        .map_err(|why| format!("the URL {why}"))?;
    let mut req = Request {
        line,
        name: None,
        method,
        url,
        group: group.map(str::to_string),
        headers: Vec::new(),
        body: None,
        timeout: None,
        checks: Checks::default(),
        captures: Vec::new(),
        comments: Vec::new(),
    };
    if let Some(b) = body_at.and_then(|i| args.get(i)) {
        req.body = body(scope, b).map_err(|why| format!("the body: {why}"))?;
    }
    let absent =
        |e: &&Expr| matches!(e, Expr::Null) || matches!(e, Expr::Ident(n) if n == "undefined");
    if let Some(p) = args.get(params_at).filter(|p| !absent(p)) {
        params(scope, p, &mut req, report)?;
    }
    // `json:` and `form:` set their Content-Type; without a body the header says nothing.
    let drop_type = match &req.body {
        Some(Body::Json(_)) => Some("application/json"),
        Some(Body::Form(_)) => Some("application/x-www-form-urlencoded"),
        Some(Body::Text(_)) => None,
        None => Some(""),
    };
    if let Some(t) = drop_type {
        req.headers
            .retain(|(k, v)| !(k.eq_ignore_ascii_case("content-type") && v.starts_with(t)));
    }
    Ok(req)
}

fn body(scope: &mut Scope, e: &Expr) -> Conv<Option<Body>> {
    match e {
        Expr::Null => return Ok(None),
        Expr::Ident(n) if n == "undefined" => return Ok(None),
        _ => {}
    }
    if let Some((name, args, _)) = e.as_call() {
        if name == "JSON.stringify" {
            let v = args.first().ok_or("JSON.stringify()")?;
            return scope.json(v).map(|j| Some(Body::Json(j)));
        }
    }
    if let Expr::Ident(n) = e {
        if let Some(super::values::Binding::Value(v)) = scope.lookup(n).cloned() {
            return body(scope, &v);
        }
    }
    if let Some(props) = scope.object(e) {
        let mut form = Vec::new();
        for (k, v) in props {
            form.push((k, scope.text(&v)?));
        }
        // `["GET", url, {}, params]` in a batch: k6 sends no body for an empty object.
        return Ok((!form.is_empty()).then_some(Body::Form(form)));
    }
    scope
        .text(e)
        .map(|t| (!t.is_empty()).then_some(Body::Text(t)))
}

fn params(scope: &mut Scope, p: &Expr, req: &mut Request, report: &mut Report) -> Conv<()> {
    let props = scope.object(p).ok_or_else(|| {
        format!(
            "the params `{}`: not an object the importer can read",
            p.sketch()
        )
    })?;
    for (key, v) in props {
        match key.as_str() {
            "headers" => {
                let headers = scope
                    .object(&v)
                    .ok_or_else(|| format!("the headers `{}`", v.sketch()))?;
                for (k, hv) in headers {
                    let text = scope
                        .text(&hv)
                        .map_err(|why| format!("header {k}: {why}{}", credential_hint(&k, &hv)))?;
                    req.headers.retain(|(x, _)| !x.eq_ignore_ascii_case(&k));
                    req.headers.push((k, text));
                }
            }
            "tags" => {
                for (k, tv) in scope.object(&v).unwrap_or_default() {
                    if k == "name" {
                        req.name = Some(scope.text(&tv)?);
                    } else {
                        let at = line_of(&v, &k).unwrap_or(req.line);
                        let what = format!("tag `{k}`: loadlab tags steps by name and group only");
                        report.unsupported(Some(at), what.clone());
                        req.comments
                            .push(format!("not converted (line {at}): {what}"));
                    }
                }
            }
            "timeout" => {
                req.timeout = Some(match &v {
                    Expr::Num(ms) => format!("{}ms", crate::scaffold::fmt_num(*ms)),
                    other => scope.text(other)?,
                });
            }
            other => {
                let at = line_of(p, other).unwrap_or(req.line);
                let what = format!("request param `{other}`: not converted");
                report.unsupported(Some(at), what.clone());
                req.comments
                    .push(format!("not converted (line {at}): `{other}`"));
            }
        }
    }
    Ok(())
}

/// The line of the property `key` of an object literal (or of one it holds).
fn line_of(e: &Expr, key: &str) -> Option<usize> {
    match e {
        Expr::Object(props) => props
            .iter()
            .find(|p| p.key == key)
            .map(|p| p.line)
            .or_else(|| props.iter().find_map(|p| line_of(&p.value, key))),
        _ => None,
    }
}

/// For a credential header whose value cannot be followed (a token `setup()` returned,
/// `'Basic ' + encoding.b64encode(…)`), the line to write instead: from the environment.
fn credential_hint(header: &str, value: &Expr) -> String {
    if !crate::credentials::is_credential_name(header) {
        return String::new();
    }
    let text = format!("{value:?}");
    if !header.eq_ignore_ascii_case("authorization") {
        let var = crate::names::snake_case(header).to_ascii_uppercase();
        return format!(" (write `{header}: \"{{{{ env.{var} }}}}\"` and set {var})");
    }
    if text.contains("b64encode") || text.contains("Basic") {
        " (write `Authorization: \"Basic {{ env.BASIC_AUTH }}\"` and set BASIC_AUTH to the base64 of user:password)".into()
    } else {
        " (write `Authorization: \"Bearer {{ env.TOKEN }}\"` and set TOKEN to a token obtained beforehand, or capture it from a login step)".into()
    }
}
