//! Reading an OpenAPI document: its operations (with path-level parameters merged), its
//! server, example values of parameters and bodies, documented statuses and links — what the
//! scenario is then built from.

use super::schema;
use crate::yaml::{Entry, Node};
use serde_json::Value;

pub const METHODS: &[&str] = &["post", "get", "put", "patch", "delete", "head", "options"];

/// One operation of the spec.
pub struct Op<'a> {
    pub path: String,
    pub method: &'static str,
    pub op: &'a Value,
    /// Path-level parameters, overridden by the operation's (resolved).
    pub params: Vec<&'a Value>,
    pub id: Option<String>,
    /// The first of the operation's own `servers`, else of its path item's.
    pub servers: Option<&'a Value>,
}

/// YAML as JSON (keys such as `200:` become strings).
pub fn to_json(v: &serde_yaml_ng::Value) -> Value {
    use serde_yaml_ng::Value as Y;
    match v {
        Y::Null => Value::Null,
        Y::Bool(b) => Value::Bool(*b),
        Y::Number(n) => {
            if let Some(i) = n.as_i64() {
                Value::from(i)
            } else if let Some(u) = n.as_u64() {
                Value::from(u)
            } else {
                n.as_f64()
                    .and_then(serde_json::Number::from_f64)
                    .map_or(Value::Null, Value::Number)
            }
        }
        Y::String(s) => Value::String(s.clone()),
        Y::Sequence(s) => Value::Array(s.iter().map(to_json).collect()),
        Y::Mapping(m) => Value::Object(
            m.iter()
                .map(|(k, v)| {
                    let key = match k {
                        Y::String(s) => s.clone(),
                        Y::Number(n) => n.to_string(),
                        Y::Bool(b) => b.to_string(),
                        other => format!("{other:?}"),
                    };
                    (key, to_json(v))
                })
                .collect(),
        ),
        Y::Tagged(t) => to_json(&t.value),
    }
}

/// `servers[0].url` as target and base path; a relative URL keeps its path and asks for a host.
pub fn server(spec: &Value) -> (String, String, Option<String>) {
    let Some(s) = spec.pointer("/servers/0") else {
        return (
            "http://127.0.0.1:8080".into(),
            String::new(),
            Some("decide: the spec names no server".into()),
        );
    };
    let read = read_server(s);
    let origin = read
        .origin
        .unwrap_or_else(|| "http://127.0.0.1:8080".into());
    (origin, read.base, read.remark)
}

/// One server object read: its origin (none for a relative URL), its path without the
/// trailing `/`, and what the person should decide about it.
pub struct Server {
    pub origin: Option<String>,
    pub base: String,
    pub remark: Option<String>,
}

/// A server object's URL with its variables filled: each variable's `default`, else (invalid,
/// but seen) its first `enum` value. A scheme-relative URL (`//host/v2`) is read as https.
pub fn read_server(s: &Value) -> Server {
    let mut url = s
        .get("url")
        .and_then(Value::as_str)
        .unwrap_or("/")
        .to_string();
    let written = url.clone();
    let mut remarks = Vec::new();
    if let Some(vars) = s.get("variables").and_then(Value::as_object) {
        for (k, v) in vars {
            if !url.contains(&format!("{{{k}}}")) {
                continue;
            }
            let first_enum = v.pointer("/enum/0").map(scalar_text);
            let value = match (v.get("default").map(scalar_text), first_enum) {
                (Some(d), _) => d,
                (None, Some(e)) => {
                    remarks.push(format!("its variable `{k}` has no default: the first of its `enum`, `{e}`, is used"));
                    e
                }
                (None, None) => {
                    remarks.push(format!("its variable `{k}` has no default and no `enum`: `{k}` is written in its place"));
                    k.clone()
                }
            };
            url = url.replace(&format!("{{{k}}}"), &value);
        }
    }
    if let Some(rest) = url.strip_prefix("//") {
        remarks.push("it names no scheme: https is assumed".into());
        url = format!("https://{rest}");
    }
    let remark = |extra: Option<String>| {
        let all: Vec<String> = extra.into_iter().chain(remarks.iter().cloned()).collect();
        (!all.is_empty())
            .then(|| format!("decide: the spec's server `{written}`: {}", all.join("; ")))
    };
    match url::Url::parse(&url) {
        Ok(u) if u.has_host() && !url.contains("{{") => Server {
            origin: Some(u[..url::Position::BeforePath].to_string()),
            base: u.path().trim_end_matches('/').to_string(),
            remark: remark(None),
        },
        _ => Server {
            origin: None,
            base: url.trim_end_matches('/').replace("{{", "{ {"),
            remark: remark(Some("it has no host; the paths keep its prefix".into())),
        },
    }
}

/// The server an operation names for itself (its own `servers`, else its path item's), as
/// the prefix its steps' URLs start with: an absolute URL when its origin is not the target's.
pub fn own_server(o: &Op<'_>, target: &str) -> Option<(String, Option<String>)> {
    let s = o.servers?;
    let read = read_server(s);
    let prefix = match read.origin {
        Some(origin) if origin != target => format!("{origin}{}", read.base),
        _ => read.base,
    };
    Some((prefix, read.remark))
}

/// The `parameters:` a path item or an operation declares, references resolved.
fn declared_parameters<'a>(spec: &'a Value, node: &'a Value) -> Vec<&'a Value> {
    node.get("parameters")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|p| schema::resolve(spec, p))
        .collect()
}

pub fn operations(spec: &Value) -> Vec<Op<'_>> {
    let mut out = Vec::new();
    let Some(paths) = spec.get("paths").and_then(Value::as_object) else {
        return out;
    };
    for (path, item) in paths {
        let item = schema::resolve(spec, item);
        let shared = declared_parameters(spec, item);
        for method in METHODS {
            let Some(op) = item.get(*method) else {
                continue;
            };
            let own = declared_parameters(spec, op);
            let key = |p: &Value| (p.get("name").cloned(), p.get("in").cloned());
            let mut params: Vec<&Value> = shared
                .iter()
                .filter(|s| !own.iter().any(|o| key(o) == key(s)))
                .copied()
                .collect();
            params.extend(own);
            out.push(Op {
                path: path.clone(),
                method,
                op,
                params,
                id: op
                    .get("operationId")
                    .and_then(Value::as_str)
                    .map(str::to_string),
                servers: op
                    .pointer("/servers/0")
                    .or_else(|| item.pointer("/servers/0")),
            });
        }
    }
    out
}

/// The `{name}`s of an operation's path that no path parameter of it declares, each with why:
/// a parameter whose `$ref` never reaches one (it refers to itself, or names nothing) is no
/// declaration, and the path would be sent with `{name}` in it.
pub fn undeclared_path_names(o: &Op<'_>) -> Vec<(String, String)> {
    let declared: Vec<&str> = o
        .params
        .iter()
        .filter(|p| p.get("in") == Some(&json_str("path")))
        .filter_map(|p| p.get("name").and_then(Value::as_str))
        .collect();
    let unresolved: Vec<&str> = o
        .params
        .iter()
        .filter_map(|p| p.get("$ref").and_then(Value::as_str))
        .collect();
    let why = match unresolved.as_slice() {
        [] => "no path parameter declares it".to_string(),
        refs => format!(
            "no path parameter declares it (`$ref: {}` never reaches a parameter: it refers to itself or names nothing)",
            refs.join("`, `")
        ),
    };
    o.path
        .split('{')
        .skip(1)
        .filter_map(|rest| rest.split_once('}').map(|(name, _)| name))
        .filter(|name| !name.is_empty() && !declared.contains(name))
        .map(|name| (name.to_string(), why.clone()))
        .collect()
}

/// A parameter's example (never one holding `{{`: see [`schema::holds_braces`]).
pub fn param_example(spec: &Value, p: &Value) -> schema::Example {
    schema::example_for(spec, p, p.get("schema"))
}

/// A path parameter's value as its `style` writes it into the path (a `data:` value is one
/// scalar, [`super::style::single`]); a primitive in the simple style stays as it is.
pub fn path_value(p: &Value, v: &Value) -> Value {
    let style = p.get("style").and_then(Value::as_str).unwrap_or("simple");
    if style == "simple" && !matches!(v, Value::Array(_) | Value::Object(_)) {
        return v.clone();
    }
    Value::String(super::style::single(p, v))
}

pub fn scalar_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(a) => a.iter().map(scalar_text).collect::<Vec<_>>().join(","),
        other => other.to_string(),
    }
}

/// The body entry for a request body: JSON when offered, else a form, else text; with the
/// media type to send as `Content-Type` when a JSON one is not plain `application/json`
/// (`application/json-patch+json`: an API checking it answers 415 to `application/json`).
/// `defused` is set when an example of the spec held `{{` and a generated value stands in.
pub fn request_body(
    spec: &Value,
    body: &Value,
    defused: &mut bool,
) -> Result<Option<(Entry, Option<String>)>, String> {
    let Some(content) = body.get("content").and_then(Value::as_object) else {
        return Ok(None);
    };
    let mut example = |media: &Value| {
        let e = schema::example_for(spec, media, media.get("schema"));
        *defused |= e.defused;
        match media.get("schema") {
            None if e.defused || schema::given_example(spec, media).is_none() => Value::Null,
            _ => e.value,
        }
    };
    let essence = |t: &str| {
        t.split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase()
    };
    let json = content
        .iter()
        .find(|(t, _)| essence(t) == "application/json")
        .or_else(|| {
            content.iter().find(|(t, _)| {
                let e = essence(t);
                e.starts_with("application/") && (e.ends_with("+json") || e.ends_with("/json"))
            })
        });
    if let Some((t, media)) = json {
        let value = example(media);
        if value.is_null() && *defused {
            return Err(format!(
                "a `{t}` body whose only example holds `{{{{` (read as a template) and which has no schema to generate one from: the body is left out"
            ));
        }
        let media_type = (essence(t) != "application/json" && !t.contains("{{")).then(|| t.clone());
        return Ok(Some((Entry::new("json", Node::json(&value)), media_type)));
    }
    if let Some(media) = content.get("application/x-www-form-urlencoded") {
        let fields: Vec<(String, Node)> = example(media)
            .as_object()
            .into_iter()
            .flatten()
            .map(|(k, v)| (k.clone(), Node::str(scalar_text(v))))
            .collect();
        return Ok(Some((Entry::new("form", Node::map(fields)), None)));
    }
    if let Some((t, media)) = content.iter().find(|(t, _)| t.starts_with("text/")) {
        if let Value::String(s) = example(media) {
            return Ok(Some((Entry::new("body", Node::str(s)), None)));
        }
        return Err(format!("a `{t}` body without a text example"));
    }
    let types: Vec<&str> = content.keys().map(String::as_str).collect();
    Err(format!(
        "a request body of type {} (binary, multipart or XML bodies are not generated)",
        types.join(", ")
    ))
}

/// Documented 2xx statuses (`200`, `201`…; `2XX` and `default` say nothing exact).
pub fn success_statuses(op: &Value) -> Vec<u16> {
    op.get("responses")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter_map(|(k, _)| k.parse::<u16>().ok())
        .filter(|s| (200..300).contains(s))
        .collect()
}

/// `(operationId, parameter, runtime expression)` of the links of an operation's 2xx responses.
pub fn links(spec: &Value, op: &Value) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    for (code, resp) in op
        .get("responses")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        if !code.starts_with('2') {
            continue;
        }
        let resp = schema::resolve(spec, resp);
        for link in resp
            .get("links")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .map(|(_, l)| schema::resolve(spec, l))
        {
            let Some(target) = link.get("operationId").and_then(Value::as_str) else {
                continue;
            };
            for (param, expr) in link
                .get("parameters")
                .and_then(Value::as_object)
                .into_iter()
                .flatten()
            {
                if let Some(e) = expr.as_str() {
                    let param = param.rsplit('.').next().unwrap_or(param);
                    out.push((target.to_string(), param.to_string(), e.to_string()));
                }
            }
        }
    }
    out
}

/// `$response.body#/id` → `$.id`; `$response.header.Location` → `{header: Location}`.
pub fn capture_for(expr: &str) -> Option<Node> {
    if let Some(pointer) = expr.strip_prefix("$response.body#") {
        let mut path = String::from("$");
        for part in pointer.split('/').skip(1) {
            let part = part.replace("~1", "/").replace("~0", "~");
            if part.chars().all(|c| c.is_ascii_digit()) && !part.is_empty() {
                path.push_str(&format!("[{part}]"));
            } else if part.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                path.push('.');
                path.push_str(&part);
            } else {
                path.push_str(&format!("['{part}']"));
            }
        }
        return Some(Node::str(path));
    }
    if let Some(h) = expr.strip_prefix("$response.header.") {
        return Some(Node::map([("header", Node::str(h))]));
    }
    None
}

/// A JSON string, for comparing with fields of the spec.
pub fn json_str(s: &str) -> Value {
    Value::String(s.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_parameter_keeps_its_type_unless_its_style_writes_text() {
        let p = serde_json::json!({"name": "id"});
        assert_eq!(path_value(&p, &serde_json::json!(5)), serde_json::json!(5));
        assert_eq!(
            path_value(&p, &serde_json::json!([3, 4])),
            serde_json::json!("3,4")
        );
        let label = serde_json::json!({"name": "id", "style": "label"});
        assert_eq!(
            path_value(&label, &serde_json::json!(5)),
            serde_json::json!(".5")
        );
    }

    #[test]
    fn link_expressions_become_captures() {
        assert_eq!(capture_for("$response.body#/id"), Some(Node::str("$.id")));
        assert_eq!(
            capture_for("$response.body#/data/items/0/id"),
            Some(Node::str("$.data.items[0].id"))
        );
        assert_eq!(
            capture_for("$response.header.Location"),
            Some(Node::map([("header", Node::str("Location"))]))
        );
        assert_eq!(capture_for("$request.path.id"), None);
    }
}
