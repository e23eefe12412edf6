//! Credentials never travel from a recording into a scenario file: passwords in bodies and
//! authorization values no response explains become `{{ env.NAME }}`, read when the scenario
//! is loaded, and the import says which variables to set.

use super::request::{Exchange, Place};
use crate::names;
use crate::report::{Finding, Report};

/// Headers whose whole value is a credential.
fn secret_header(name: &str) -> Option<&'static str> {
    let n = name.to_ascii_lowercase();
    Some(match n.as_str() {
        "authorization" => "AUTHORIZATION",
        "proxy-authorization" => "PROXY_AUTHORIZATION",
        "x-api-key" | "api-key" | "apikey" => "API_KEY",
        "x-auth-token" => "AUTH_TOKEN",
        "cookie" => "COOKIE",
        _ => return None,
    })
}

/// Replaces every literal credential left after correlation; names the variables in `report`.
pub fn replace_credentials(exchanges: &mut [Exchange], report: &mut Report) {
    // The same literal gets the same variable everywhere: (literal, variable).
    let mut given: Vec<(String, String)> = Vec::new();
    let mut name_for = |literal: &str, wanted: String, report: &mut Report, why: &str| {
        if let Some((_, v)) = given.iter().find(|(l, _)| l == literal) {
            return v.clone();
        }
        let mut name = wanted.clone();
        let mut n = 2;
        while given.iter().any(|(_, v)| *v == name) {
            name = format!("{wanted}_{n}");
            n += 1;
        }
        given.push((literal.to_string(), name.clone()));
        report.variable(&name, why);
        name
    };
    for x in exchanges.iter_mut() {
        for slot in x.slots() {
            if slot.text.contains("{{") && !matches!(slot.place, Place::Header(_)) {
                continue;
            }
            let key = slot.key.clone().unwrap_or_default();
            let replacement = match &slot.place {
                Place::Json(_) | Place::Form(_) | Place::Query(_) if names::is_secret_key(&key) => {
                    if slot.text.is_empty() {
                        continue;
                    }
                    let var = name_for(
                        &slot.text,
                        names::env_name(&key),
                        report,
                        &format!("`{key}` sent by `{}`", x.name),
                    );
                    format!("{{{{ env.{var} }}}}")
                }
                Place::Header(_) => match secret_header(&key) {
                    Some("COOKIE") => match cookie_with_env(&slot.text, &mut |pair_name, value| {
                        name_for(
                            value,
                            format!("COOKIE_{}", names::env_name(pair_name)),
                            report,
                            &format!(
                                "cookie `{pair_name}` sent by `{}` (set before the recording)",
                                x.name
                            ),
                        )
                    }) {
                        Some(t) => t,
                        None => continue,
                    },
                    Some(env) if !slot.text.contains("{{") => {
                        let (scheme, rest) = match slot.text.split_once(' ') {
                            Some((s, r))
                                if ["bearer", "basic", "token", "digest"]
                                    .contains(&s.to_ascii_lowercase().as_str()) =>
                            {
                                (Some(s), r)
                            }
                            _ => (None, slot.text.as_str()),
                        };
                        let wanted = match scheme.map(str::to_ascii_lowercase).as_deref() {
                            Some("bearer") | Some("token") => "TOKEN".to_string(),
                            Some("basic") => "BASIC_AUTH".to_string(),
                            _ => env.to_string(),
                        };
                        let var = name_for(
                            rest,
                            wanted,
                            report,
                            &format!(
                                "`{key}` sent by `{}`, which no recorded response gave",
                                x.name
                            ),
                        );
                        match scheme {
                            Some(s) => format!("{s} {{{{ env.{var} }}}}"),
                            None => format!("{{{{ env.{var} }}}}"),
                        }
                    }
                    _ => continue,
                },
                _ => continue,
            };
            x.set(&slot.place, replacement);
        }
    }
}

/// `a=1; SESSION=xyz` with literal pairs as `{{ env.COOKIE_A }}`; `None` when all are templates.
fn cookie_with_env(header: &str, env_for: &mut dyn FnMut(&str, &str) -> String) -> Option<String> {
    let mut changed = false;
    let pairs: Vec<String> = header
        .split(';')
        .map(|p| p.trim())
        .filter(|p| !p.is_empty())
        .map(|pair| {
            if pair.contains("{{") {
                return pair.to_string();
            }
            match pair.split_once('=') {
                Some((name, value)) => {
                    changed = true;
                    format!("{name}={{{{ env.{} }}}}", env_for(name, value))
                }
                None => pair.to_string(),
            }
        })
        .collect();
    changed.then(|| pairs.join("; "))
}

/// Values still literal that look generated (UUIDs, long hex, timestamps): reported, and a
/// comment on the step says where.
pub fn find_dynamic(exchanges: &mut [Exchange]) -> Vec<Finding> {
    let mut out = Vec::new();
    for x in exchanges.iter_mut() {
        for slot in x.slots() {
            if slot.text.contains("{{") {
                continue;
            }
            if let Some(kind) = names::looks_dynamic(&slot.text) {
                let place = x.describe(&slot.place);
                let hint = match kind {
                    "a UUID" => " (a new one per request: {{ uuid() }})",
                    "a timestamp in milliseconds" => " (the current time: {{ now_ms() }})",
                    _ => "",
                };
                x.comments.push(format!(
                    "decide: {place} `{}` looks like {kind} but no recorded response gave it{hint}",
                    slot.text
                ));
                out.push(Finding {
                    step: x.name.clone(),
                    place,
                    value: slot.text.clone(),
                    looks_like: kind.to_string(),
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::har::request::ReqBody;
    use serde_json::json;

    fn exchange(headers: &[(&str, &str)], body: serde_json::Value) -> Exchange {
        Exchange {
            method: "POST".into(),
            origin: "http://h".into(),
            segments: vec!["".into(), "login".into()],
            query: vec![],
            raw_query: None,
            headers: headers
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            body: Some(ReqBody::Json(body)),
            started_ms: None,
            ended_ms: None,
            status: 200,
            response_json: None,
            response_headers: vec![],
            set_cookies: vec![],
            name: "POST /login".into(),
            comments: vec![],
            captures: vec![],
        }
    }

    #[test]
    fn credentials_become_environment_variables() {
        let mut xs = vec![
            exchange(
                &[("Authorization", "Bearer abc.def.ghi"), ("X-Trace", "1")],
                json!({"user": "ann", "password": "hunter2", "nested": {"client_secret": "s3"}}),
            ),
            exchange(
                &[
                    ("Authorization", "Bearer {{ token }}"),
                    ("Cookie", "sid=xyz; theme=dark"),
                ],
                json!({"password": "hunter2", "pin": 1234}),
            ),
        ];
        let mut report = Report::default();
        replace_credentials(&mut xs, &mut report);
        let body = |x: &Exchange| match &x.body {
            Some(ReqBody::Json(v)) => v.clone(),
            _ => unreachable!(),
        };
        assert_eq!(
            body(&xs[0]),
            json!({"user": "ann", "password": "{{ env.PASSWORD }}", "nested": {"client_secret": "{{ env.CLIENT_SECRET }}"}})
        );
        assert_eq!(xs[0].headers[0].1, "Bearer {{ env.TOKEN }}");
        assert_eq!(xs[0].headers[1].1, "1");
        assert_eq!(
            body(&xs[1]),
            json!({"password": "{{ env.PASSWORD }}", "pin": "{{ env.PIN }}"})
        );
        assert_eq!(
            xs[1].headers[0].1, "Bearer {{ token }}",
            "a correlated value stays"
        );
        assert_eq!(
            xs[1].headers[1].1,
            "sid={{ env.COOKIE_SID }}; theme={{ env.COOKIE_THEME }}"
        );
        let mut names: Vec<&str> = report.variables.iter().map(|v| v.name.as_str()).collect();
        names.sort();
        assert_eq!(
            names,
            [
                "CLIENT_SECRET",
                "COOKIE_SID",
                "COOKIE_THEME",
                "PASSWORD",
                "PIN",
                "TOKEN"
            ]
        );
        let text = serde_json::to_string(&body(&xs[0])).unwrap();
        assert!(!text.contains("hunter2") && !text.contains("s3\""));
    }
}
