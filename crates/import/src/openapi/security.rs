//! Security schemes as request headers (or query parameters) read from environment variables:
//! a spec says how to authenticate, never with what.

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
        let ty = scheme.get("type").and_then(Value::as_str).unwrap_or("");
        let http = scheme
            .get("scheme")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_ascii_lowercase();
        match (ty, http.as_str()) {
            ("http", "bearer") | ("oauth2", _) | ("openIdConnect", _) => {
                out.headers
                    .push(("Authorization".into(), "Bearer {{ env.TOKEN }}".into()));
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
            ("apiKey", _) => {
                let key = scheme
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or("api_key");
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
            _ => out.comments.push(format!(
                "decide: security scheme `{name}` ({ty} {http}) is not converted"
            )),
        }
    }
    out
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
}
