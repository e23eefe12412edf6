//! Security schemes as request headers (or query parameters) read from environment variables:
//! a spec says how to authenticate, never with what. The one exception is a bearer token that
//! the spec's own sign-in answers ([`token_source`]): it is captured there instead.

use crate::names;
use serde_json::Value;

/// What a step adds for its security requirement.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Auth {
    pub headers: Vec<(String, String)>,
    pub query: Vec<(String, String)>,
    /// `(variable, why)`.
    pub variables: Vec<(String, String)>,
    pub comments: Vec<String>,
}

/// The first requirement of `security` (the operation's, else the document's) made concrete.
pub fn auth_for(spec: &Value, op: &Value) -> Auth {
    let requirements = op
        .get("security")
        .or_else(|| spec.get("security"))
        .and_then(Value::as_array);
    let mut out = Auth::default();
    let Some(first) = requirements
        .and_then(|r| r.first())
        .and_then(Value::as_object)
    else {
        return out;
    };
    for name in first.keys() {
        let Some(scheme) = spec.pointer(&format!("/components/securitySchemes/{name}")) else {
            continue;
        };
        // Two schemes of one requirement on one header (`{apiKey: [], bearer: []}`, both
        // `Authorization`): a request sends a header once, so the first is kept and the
        // person decides.
        if let Some(taken) = header_taken(scheme, &out.headers) {
            out.comments.push(format!(
                "decide: security scheme `{name}` also sets the `{taken}` header, which an earlier scheme of the same requirement sets: only the earlier one is sent"
            ));
            continue;
        }
        let ty = scheme.get("type").and_then(Value::as_str).unwrap_or("");
        let http = scheme
            .get("scheme")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_ascii_lowercase();
        match (ty, http.as_str()) {
            ("http", "bearer") | ("oauth2", _) | ("openIdConnect", _) => {
                out.headers
                    .push(("Authorization".into(), ENV_BEARER.into()));
                out.variables.push((
                    "TOKEN".into(),
                    format!("a bearer token for the `{name}` security scheme"),
                ));
                if ty != "http" {
                    out.comments.push(format!(
                        "decide: `{name}` is {ty}; get a token outside the test (or add a sign-in step) and set TOKEN"
                    ));
                }
            }
            ("http", "basic") => {
                out.headers
                    .push(("Authorization".into(), "Basic {{ env.BASIC_AUTH }}".into()));
                out.variables.push((
                    "BASIC_AUTH".into(),
                    format!("base64 of user:password for `{name}`"),
                ));
            }
            ("apiKey", _) => api_key(name, scheme, &mut out),
            _ => out.comments.push(format!(
                "decide: security scheme `{name}` ({ty} {http}) is not converted"
            )),
        }
    }
    out
}

/// An API key: its header, query parameter or cookie, from `{{ env.SCHEME_NAME }}`.
fn api_key(name: &str, scheme: &Value, out: &mut Auth) {
    let key = scheme
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or("api_key");
    if key.contains("{{") {
        out.comments.push(format!(
            "decide: security scheme `{name}` names its key with `{{{{` (read as a template): not converted"
        ));
        return;
    }
    let var = names::env_name(name);
    let value = format!("{{{{ env.{var} }}}}");
    match scheme.get("in").and_then(Value::as_str) {
        Some("query") => out.query.push((key.into(), value)),
        Some("cookie") => out
            .headers
            .push(("Cookie".into(), format!("{key}={value}"))),
        _ => out.headers.push((key.into(), value)),
    }
    out.variables
        .push((var, format!("the API key of the `{name}` security scheme")));
}

/// The header (other than `Cookie`, whose pairs are joined) that `scheme` would set and an
/// earlier scheme already sets.
fn header_taken(scheme: &Value, headers: &[(String, String)]) -> Option<String> {
    let ty = scheme.get("type").and_then(Value::as_str).unwrap_or("");
    let header = match (ty, scheme.get("in").and_then(Value::as_str)) {
        ("http" | "oauth2" | "openIdConnect", _) => "Authorization",
        ("apiKey", Some("header") | None) => scheme
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("api_key"),
        _ => return None,
    };
    headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(header))
        .map(|(k, _)| k.clone())
}

/// JSON properties that hold a bearer token in a sign-in's response.
const TOKEN_FIELDS: &[&str] = &["token", "access_token", "accessToken", "id_token", "jwt"];

/// The header value a bearer requirement becomes when no sign-in gives the token.
pub const ENV_BEARER: &str = "Bearer {{ env.TOKEN }}";

/// Where the bearer token comes from, when the spec has a sign-in: the one operation that
/// needs no security and whose 2xx JSON response has a token property.
#[derive(Debug, Clone, PartialEq)]
pub struct TokenSource {
    /// Index into the operations.
    pub op: usize,
    /// The response's property (`token`), captured as `{{ token }}`.
    pub field: String,
}

/// The spec's sign-in, if some operation needs a bearer token and exactly one operation
/// without security answers one. A spec cannot say which response gives a token (a link
/// feeds parameters, and `Authorization` is no parameter), so this is a guess the import
/// reports; with none or several candidates the token stays `{{ env.TOKEN }}`.
pub fn token_source(spec: &Value, ops: &[super::spec::Op<'_>]) -> Option<TokenSource> {
    let needs_bearer = ops.iter().any(|o| {
        auth_for(spec, o.op)
            .headers
            .iter()
            .any(|(_, v)| v == ENV_BEARER)
    });
    if !needs_bearer {
        return None;
    }
    let mut found = ops.iter().enumerate().filter_map(|(i, o)| {
        if !unauthenticated(spec, o.op) {
            return None;
        }
        let field = token_field(spec, o.op)?;
        Some(TokenSource { op: i, field })
    });
    let first = found.next()?;
    found.next().is_none().then_some(first)
}

/// No requirement, an empty list, or an empty (optional) requirement.
fn unauthenticated(spec: &Value, op: &Value) -> bool {
    match op.get("security").or_else(|| spec.get("security")) {
        None => true,
        Some(Value::Array(reqs)) => {
            reqs.is_empty()
                || reqs
                    .iter()
                    .any(|r| r.as_object().is_some_and(|o| o.is_empty()))
        }
        Some(_) => false,
    }
}

/// The token property of the operation's 2xx JSON response schema, if it has one.
fn token_field(spec: &Value, op: &Value) -> Option<String> {
    let responses = op.get("responses")?.as_object()?;
    for (code, resp) in responses {
        if !code.starts_with('2') {
            continue;
        }
        let resp = super::schema::resolve(spec, resp);
        for (media, content) in resp.get("content").and_then(Value::as_object)? {
            if !(media.contains("json")) {
                continue;
            }
            if let Some(schema) = content.get("schema") {
                if let Some(f) = TOKEN_FIELDS
                    .iter()
                    .find(|f| has_string_property(spec, schema, f, 0))
                {
                    return Some((*f).to_string());
                }
            }
        }
    }
    None
}

/// Whether `schema` (through `$ref` and `allOf`) has a property `name` that may be a string.
fn has_string_property(spec: &Value, schema: &Value, name: &str, depth: usize) -> bool {
    if depth > 8 {
        return false;
    }
    let schema = super::schema::resolve(spec, schema);
    let own = schema
        .pointer(&format!("/properties/{name}"))
        .map(|p| super::schema::resolve(spec, p))
        .is_some_and(|p| p.get("type").is_none_or(|t| t == "string"));
    own || schema
        .get("allOf")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .any(|s| has_string_property(spec, s, name, depth + 1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn schemes_become_env_variables() {
        let spec = json!({
            "security": [{"bearer": []}],
            "components": {"securitySchemes": {
                "bearer": {"type": "http", "scheme": "bearer"},
                "api_key": {"type": "apiKey", "name": "api_key", "in": "header"},
                "q": {"type": "apiKey", "name": "key", "in": "query"},
                "petstore_auth": {"type": "oauth2", "flows": {}}
            }}
        });
        let global = auth_for(&spec, &json!({}));
        assert_eq!(
            global.headers,
            [(
                "Authorization".to_string(),
                "Bearer {{ env.TOKEN }}".to_string()
            )]
        );
        let key = auth_for(&spec, &json!({"security": [{"api_key": []}]}));
        assert_eq!(
            key.headers,
            [("api_key".to_string(), "{{ env.API_KEY }}".to_string())]
        );
        assert_eq!(key.variables[0].0, "API_KEY");
        let q = auth_for(&spec, &json!({"security": [{"q": []}]}));
        assert_eq!(q.query, [("key".to_string(), "{{ env.Q }}".to_string())]);
        let oauth = auth_for(
            &spec,
            &json!({"security": [{"petstore_auth": ["write:pets"]}]}),
        );
        assert_eq!(oauth.variables[0].0, "TOKEN");
        assert!(oauth.comments[0].contains("oauth2"));
        assert_eq!(auth_for(&spec, &json!({"security": []})), Auth::default());
    }

    #[test]
    fn the_token_comes_from_the_one_open_operation_that_answers_one() {
        let session = json!({"200": {"content": {"application/json": {"schema":
            {"allOf": [{"$ref": "#/components/schemas/Session"}]}}}}});
        let mut spec = json!({
            "security": [{"bearer": []}],
            "components": {
                "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
                "schemas": {"Session": {"properties": {"access_token": {"type": "string"}}}}
            },
            "paths": {
                "/login": {"post": {"security": [{}], "responses": session}},
                "/me": {"get": {"responses": session}},
                "/health": {"get": {"security": [], "responses": {"200": {}}}}
            }
        });
        let ops = super::super::spec::operations(&spec);
        let found = token_source(&spec, &ops).expect("a sign-in");
        assert_eq!(ops[found.op].path, "/login");
        assert_eq!(found.field, "access_token");
        // Two open operations answering a token: which one is a guess too far.
        spec["paths"]["/refresh"] = json!({"post": {"security": [], "responses": session}});
        let ops = super::super::spec::operations(&spec);
        assert_eq!(token_source(&spec, &ops), None);
        // No operation needs a bearer token: nothing to sign in for.
        spec["security"] = json!([]);
        let ops = super::super::spec::operations(&spec);
        assert_eq!(token_source(&spec, &ops), None);
    }
}
