//! Credentials never travel from a recording into a scenario file: values held by a field
//! named like a credential (headers, query and form parameters, JSON keys, cookies) and values
//! shaped like one (JWTs, vendor keys, long random tokens) wherever they stand — URL, headers,
//! body — become `{{ env.NAME }}` when no response explains them, and the import says which
//! variables to set.

use super::request::{Exchange, Place, ReqBody};
use crate::credentials::{self, Namer};
use crate::names;
use crate::report::{Finding, Report};
use crate::scrub::cookie_pairs_with_env;
use crate::template_text::outside_templates;

/// The variable for a header whose whole value is a credential.
fn header_env(name: &str) -> String {
    match name.to_ascii_lowercase().as_str() {
        "authorization" => "AUTHORIZATION".into(),
        "proxy-authorization" => "PROXY_AUTHORIZATION".into(),
        "x-api-key" | "api-key" | "apikey" => "API_KEY".into(),
        "x-auth-token" => "AUTH_TOKEN".into(),
        other => names::env_name(other),
    }
}

/// Replaces every literal credential left after correlation; names the variables in `report`.
pub fn replace_credentials(exchanges: &mut [Exchange], report: &mut Report) {
    let mut namer = Namer::default();
    for x in exchanges.iter_mut() {
        for slot in x.slots() {
            let key = slot.key.clone().unwrap_or_default();
            let step = x.name.clone();
            let replacement = match &slot.place {
                Place::Header(_) if key.eq_ignore_ascii_case("cookie") => {
                    cookie_pairs_with_env(&slot.text, &mut |pair_name, value| {
                        Some(namer.name(
                            value,
                            format!("COOKIE_{}", names::env_name(pair_name)),
                            report,
                            &format!(
                                "cookie `{pair_name}` sent by `{step}` (set before the recording)"
                            ),
                        ))
                    })
                }
                Place::Header(_) if credentials::is_credential_name(&key) => {
                    whole_header(&slot.text, &key, &step, &mut namer, report)
                }
                Place::Json(_) | Place::Form(_) | Place::Query(_)
                    if credentials::is_credential_name(&key) || names::is_secret_key(&key) =>
                {
                    (!slot.text.is_empty() && !slot.text.contains("{{")).then(|| {
                        let var = namer.name(
                            &slot.text,
                            names::env_name(&key),
                            report,
                            &format!("`{key}` sent by `{step}`"),
                        );
                        format!("{{{{ env.{var} }}}}")
                    })
                }
                Place::Query(_) if is_api_key(&key, &slot.text) => {
                    let var = namer.name(
                        &slot.text,
                        "API_KEY".into(),
                        report,
                        &format!("query `{key}` sent by `{step}`"),
                    );
                    Some(format!("{{{{ env.{var} }}}}"))
                }
                Place::RawQuery => raw_query(&slot.text, &step, &mut namer, report),
                Place::Text => quoted_credentials(&slot.text, &step, &mut namer, report),
                _ => None,
            };
            let text = replacement.unwrap_or(slot.text.clone());
            let place = x.describe(&slot.place);
            let shaped = shaped_tokens(&text, &key, &step, &place, &mut namer, report);
            if let Some(t) = shaped.or_else(|| (text != slot.text).then_some(text)) {
                x.set(&slot.place, t);
            }
        }
        if let Some(ReqBody::Form(fields)) = &mut x.body {
            // A body posted as a form that is not one (JSON sent as
            // `application/x-www-form-urlencoded`) has its text in a field's name.
            let step = x.name.clone();
            for (name, _) in fields.iter_mut() {
                let place = format!("a form field's name of `{step}`");
                let named = quoted_credentials(name, &step, &mut namer, report);
                let text = named.as_deref().unwrap_or(name);
                if let Some(t) =
                    shaped_tokens(text, "", &step, &place, &mut namer, report).or(named)
                {
                    *name = t;
                }
            }
        }
    }
    everywhere(exchanges, &namer);
}

/// A credential found once is replaced wherever else its literal stands (a cookie's value sent
/// again as a query parameter, a token inside a form field's name): the same variable, so no
/// copy of it is left in the scenario. Only a literal that could be nothing but that
/// credential is followed: 8 or more characters mixing letters and digits, or shaped like a
/// key (a cookie `AMCVS_…=1` must not turn every `1` of the scenario into its variable).
fn everywhere(exchanges: &mut [Exchange], namer: &Namer) {
    let given: Vec<(&str, &str)> = namer
        .given()
        .into_iter()
        .filter(|(literal, _)| is_distinctive(literal))
        .collect();
    let replaced = |text: &str| -> Option<String> {
        let mut out = text.to_string();
        for (literal, var) in &given {
            let template = format!("{{{{ env.{var} }}}}");
            out = outside_templates(&out, |part| part.replace(literal, &template));
        }
        (out != text).then_some(out)
    };
    for x in exchanges.iter_mut() {
        for slot in x.slots() {
            if let Some(t) = replaced(&slot.text) {
                x.set(&slot.place, t);
            }
        }
        if let Some(ReqBody::Form(fields)) = &mut x.body {
            for (name, _) in fields.iter_mut() {
                if let Some(t) = replaced(name) {
                    *name = t;
                }
            }
        }
    }
}

/// `text` with the values of its `"token":"…"` pairs (JSON written as text, where no parser
/// sees a key) as variables when the key names a credential; `None` when it has none.
fn quoted_credentials(
    text: &str,
    step: &str,
    namer: &mut Namer,
    report: &mut Report,
) -> Option<String> {
    let mut out = String::with_capacity(text.len());
    let mut pos = 0;
    let mut search = 0;
    while let Some((key, value)) = next_quoted_pair(text, search) {
        let (v_start, v_end) = value;
        let (key, v) = (&text[key.0..key.1], &text[v_start..v_end]);
        if !v.is_empty() && !v.contains("{{") && credentials::is_credential_name(key) {
            let why = format!("`{key}` sent by `{step}`");
            let var = namer.name(v, names::env_name(key), report, &why);
            out.push_str(&text[pos..v_start]);
            out.push_str(&format!("{{{{ env.{var} }}}}"));
        } else {
            out.push_str(&text[pos..v_end]);
        }
        pos = v_end;
        // Past the value's closing quote, which must not open the next key.
        search = v_end + 1;
    }
    (pos > 0 && out != text[..pos]).then(|| out + &text[pos..])
}

/// The next `"key":"value"` from `from`: the byte ranges of the key and of the value.
fn next_quoted_pair(text: &str, from: usize) -> Option<((usize, usize), (usize, usize))> {
    let mut at = from;
    loop {
        let k_start = at + text[at..].find('"')? + 1;
        let k_end = k_start + text[k_start..].find('"')?;
        let after = &text[k_end + 1..];
        let value = after
            .strip_prefix(':')
            .map(str::trim_start)
            .and_then(|t| t.strip_prefix('"'));
        if let Some(v) = value {
            let v_start = text.len() - v.len();
            let v_end = v_start + v.find('"')?;
            return Some(((k_start, k_end), (v_start, v_end)));
        }
        at = k_end + 1;
    }
}

/// A literal found elsewhere is the same credential, not a common word or number.
fn is_distinctive(literal: &str) -> bool {
    credentials::shape(literal).is_some()
        || literal.len() >= 8
            && literal.chars().any(|c| c.is_ascii_alphabetic())
            && literal.chars().any(|c| c.is_ascii_digit())
}

/// `key=AIzaSy…` (Google's and many vendors' API keys are sent as a bare `key`): a value of 16
/// or more letters and digits (dashes and underscores allowed) with both, not a word.
fn is_api_key(name: &str, value: &str) -> bool {
    name.eq_ignore_ascii_case("key")
        && value.len() >= 16
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        && value.chars().any(|c| c.is_ascii_digit())
        && value.chars().any(|c| c.is_ascii_alphabetic())
}

/// A credential header (`Authorization: Bearer x`, `X-Access-Token: x`): the value after its
/// scheme becomes a variable; `None` when it is a template already.
fn whole_header(
    text: &str,
    key: &str,
    step: &str,
    namer: &mut Namer,
    report: &mut Report,
) -> Option<String> {
    if text.contains("{{") || text.trim().is_empty() {
        return None;
    }
    let (scheme, rest) = match text.split_once(' ') {
        Some((s, r))
            if ["bearer", "basic", "token", "digest", "apikey", "sso-key"]
                .contains(&s.to_ascii_lowercase().as_str()) =>
        {
            (Some(s), r)
        }
        _ => (None, text),
    };
    let wanted = match scheme.map(str::to_ascii_lowercase).as_deref() {
        Some("bearer") | Some("token") => "TOKEN".to_string(),
        Some("basic") => "BASIC_AUTH".to_string(),
        _ => header_env(key),
    };
    let var = namer.name(
        rest,
        wanted,
        report,
        &format!("`{key}` sent by `{step}`, which no recorded response gave"),
    );
    Some(match scheme {
        Some(s) => format!("{s} {{{{ env.{var} }}}}"),
        None => format!("{{{{ env.{var} }}}}"),
    })
}

/// A query kept as written (`a=1&a=2&token=x`): each credential-named value becomes a variable.
fn raw_query(text: &str, step: &str, namer: &mut Namer, report: &mut Report) -> Option<String> {
    let mut changed = false;
    let pairs: Vec<String> = text
        .split('&')
        .map(|pair| match pair.split_once('=') {
            Some((k, v)) if !v.is_empty() && !v.contains("{{") => {
                let name: String = url::form_urlencoded::parse(k.as_bytes())
                    .map(|(k, _)| k.into_owned())
                    .next()
                    .unwrap_or_default();
                if credentials::is_credential_name(&name) || names::is_secret_key(&name) {
                    changed = true;
                    let var = namer.name(
                        v,
                        names::env_name(&name),
                        report,
                        &format!("query `{name}` sent by `{step}`"),
                    );
                    format!("{k}={{{{ env.{var} }}}}")
                } else {
                    pair.to_string()
                }
            }
            _ => pair.to_string(),
        })
        .collect();
    changed.then(|| pairs.join("&"))
}

/// `text` with every token shaped like a credential (a JWT, a vendor key, a long random string
/// not under a public name such as `marker` or `ETag`) replaced by a variable; `None` when it
/// holds none.
fn shaped_tokens(
    text: &str,
    key: &str,
    step: &str,
    place: &str,
    namer: &mut Namer,
    report: &mut Report,
) -> Option<String> {
    let found = crate::opaque::find_in_field(key, text);
    if found.is_empty() {
        return None;
    }
    let mut out = text.to_string();
    for (start, end, shape) in found.into_iter().rev() {
        let literal = &text[start..end];
        let wanted = if credentials::is_credential_name(key) {
            names::env_name(key)
        } else {
            shape.env_stem()
        };
        let var = namer.name(
            literal,
            wanted,
            report,
            &format!("{} in {place} of `{step}`", shape.describe()),
        );
        out.replace_range(start..end, &format!("{{{{ env.{var} }}}}"));
    }
    Some(out)
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

    #[test]
    fn a_credential_found_once_is_replaced_wherever_else_it_stands() {
        let mut first = exchange(
            &[(
                "Cookie",
                "wfivefivec=CHUz7sBf1zvM3H2; AMCVS_843F02BE53271A1A0A490D4C=1",
            )],
            json!({}),
        );
        first.body = None;
        let mut second = exchange(&[], json!({}));
        second.query = vec![
            ("p_user_id".into(), "CHUz7sBf1zvM3H2".into()),
            ("key".into(), "L8J7G-PYWL3-TB3KE-XWHRX-LQVBU".into()),
            ("key_2".into(), "plain-words-here".into()),
            ("d_verify".into(), "1".into()),
        ];
        second.body = Some(ReqBody::Form(vec![(
            r#"{"tm":0.1,"output":"js","token":"VBtfPhGeeMcKEwiInfmzhPGpAhWaB9oKHSsbZW8YACAAMPnq","q":"CHUz7sBf1zvM3H2"}"#.into(),
            "x".into(),
        )]));
        let mut third = exchange(&[], json!({}));
        third.body = Some(ReqBody::Text(
            r#"{"user":"ann","password":"hunter22","n":1"#.into(),
            "text/plain".into(),
        ));
        let mut xs = vec![first, second, third];
        let mut report = Report::default();
        replace_credentials(&mut xs, &mut report);
        assert_eq!(
            xs[0].headers[0].1,
            "wfivefivec={{ env.COOKIE_WFIVEFIVEC }}; AMCVS_843F02BE53271A1A0A490D4C={{ env.COOKIE_AMCVS_843_F02_BE53271_A1_A0_A490_D4_C }}"
        );
        assert_eq!(xs[1].query[0].1, "{{ env.COOKIE_WFIVEFIVEC }}");
        assert_eq!(xs[1].query[1].1, "{{ env.API_KEY }}");
        assert_eq!(xs[1].query[2].1, "plain-words-here", "a word is no key");
        assert_eq!(
            xs[1].query[3].1, "1",
            "a cookie's `1` is no credential elsewhere"
        );
        let Some(ReqBody::Form(fields)) = &xs[1].body else {
            unreachable!()
        };
        assert_eq!(
            fields[0].0,
            r#"{"tm":0.1,"output":"js","token":"{{ env.TOKEN }}","q":"{{ env.COOKIE_WFIVEFIVEC }}"}"#
        );
        let Some(ReqBody::Text(text, _)) = &xs[2].body else {
            unreachable!()
        };
        assert_eq!(
            text,
            r#"{"user":"ann","password":"{{ env.PASSWORD }}","n":1"#
        );
    }

    #[test]
    fn random_looking_public_handles_stay_and_keys_under_other_names_go() {
        // Three literals: one found as a credential would be replaced wherever it stands.
        const RANDOM: &str = "JV9IRGZmieiBasejOG9yDCRNgd2ymoZIbjsxbJMjIs3kioVii";
        const OTHER: &str = "q8Hv2LmZpX4rTn7WbKc9YdF3sJg6AeUo1Nw5Ri0Ct";
        const THIRD: &str = "Zt4Wq9LmB2xVn7KpR3sHd8FgJ6cYa1EuXo5Ni0Tb";
        let mut x = exchange(
            &[("If-None-Match", RANDOM), ("X-Api-Key-Id", OTHER)],
            json!({}),
        );
        x.query = vec![
            ("marker".into(), RANDOM.into()),
            ("next_cursor".into(), RANDOM.into()),
            ("access".into(), THIRD.into()),
        ];
        let mut xs = vec![x];
        replace_credentials(&mut xs, &mut Report::default());
        let header = |name: &str| {
            let (_, v) = xs[0].headers.iter().find(|(k, _)| k == name).unwrap();
            v.clone()
        };
        assert_eq!(header("If-None-Match"), RANDOM, "an ETag is public");
        assert!(
            header("X-Api-Key-Id").contains("{{ env."),
            "a key's id is never public"
        );
        assert_eq!(xs[0].query[0].1, RANDOM, "a pagination marker is public");
        assert_eq!(xs[0].query[1].1, RANDOM, "a cursor is public");
        assert!(
            xs[0].query[2].1.contains("{{ env."),
            "an unnamed random token is a key"
        );
    }
}
