//! The last line of defence, run on every importer's output: a credential left literal in a
//! scenario — a JWT or vendor key anywhere, or a literal value under a header, query, form,
//! JSON or cookie field named like a credential — becomes `{{ env.NAME }}`, named in the report.

use crate::credentials::{self, Namer};
use crate::names;
use crate::opaque;
use crate::report::Report;
use crate::yaml::{Document, Entry, Node};

/// Replaces what is left in `doc`; reports each variable.
pub fn scrub(doc: &mut Document, report: &mut Report) {
    let mut namer = Namer::default();
    let mut in_urls = Vec::new();
    for e in &mut doc.root {
        each_str(e, &mut |_, s| {
            for (start, end, user) in credentials::url_passwords(s) {
                in_urls.push((s[start..end].to_string(), password_var(&user)));
            }
        });
    }
    for e in &mut doc.root {
        entry(e, "", false, &mut namer, report);
    }
    // A URL's password is also a segment of other paths (`/basic-auth/user/pw`, its URL
    // split into `target:` and the step's path): the same variable there, none in a name.
    for (literal, wanted) in in_urls {
        let var = namer.name(
            &literal,
            wanted,
            report,
            "the password of a URL in the source",
        );
        for e in &mut doc.root {
            each_str(e, &mut |key, s| match key {
                "name" => replace_segment(s, &literal, "{password}"),
                k if is_url_key(k) => replace_segment(s, &literal, &format!("{{{{ env.{var} }}}}")),
                _ => {}
            });
        }
    }
}

/// Calls `f` with each text of `e` and the key it is under.
fn each_str(e: &mut Entry, f: &mut dyn FnMut(&str, &mut String)) {
    fn node(n: &mut Node, key: &str, f: &mut dyn FnMut(&str, &mut String)) {
        match n {
            Node::Str(s) => f(key, s),
            Node::Raw(_) => {}
            Node::Map(entries) => entries.iter_mut().for_each(|e| each_str(e, f)),
            Node::Seq(items) => items.iter_mut().for_each(|i| node(&mut i.value, key, f)),
        }
    }
    node(&mut e.value, &e.key, f);
}

/// The variable a URL's password is read from: `USER_PASSWORD` for `user:pw@`.
fn password_var(user: &str) -> String {
    if user.is_empty() || user.contains("{{") {
        "URL_PASSWORD".to_string()
    } else {
        names::env_name(&format!("{user} password"))
    }
}

/// Maps whose entries are request fields: a credential-named key there holds a credential.
fn is_field_map(key: &str) -> bool {
    matches!(key, "headers" | "query" | "form" | "json" | "cookies")
}

/// `owner` is the key of the map holding `e`: a data set's `values` are named by it.
fn entry(e: &mut Entry, owner: &str, in_fields: bool, namer: &mut Namer, report: &mut Report) {
    // A step's name is no place for a template: a URL's password is dropped from it.
    if e.key == "name" {
        if let Node::Str(s) = &mut e.value {
            for (start, end, _) in credentials::url_passwords(s).into_iter().rev() {
                s.replace_range(start - 1..end, "");
            }
        }
        return;
    }
    // A capture's value is where to read a response, never a literal secret.
    if matches!(e.key.as_str(), "capture" | "check") {
        return;
    }
    if is_url_key(&e.key) {
        if let Node::Str(s) = &mut e.value {
            query_credentials(s, namer, report);
        }
    }
    let key = e.key.clone();
    let fields_below = in_fields && key != "capture" || is_field_map(&key);
    match &mut e.value {
        Node::Str(s) if in_fields && key.eq_ignore_ascii_case("cookie") && s.contains('=') => {
            // One variable per pair that is a credential by its name (`PHPSESSID`, `sid`) or
            // its shape; `theme=dark` (an OpenAPI cookie parameter's example) stays as written.
            let mut env_for = |pair: &str, value: &str| {
                let secret = credentials::is_credential_name(pair)
                    || names::is_secret_key(pair)
                    || credentials::shape(value).is_some();
                if !secret {
                    return None;
                }
                let why = format!("cookie `{pair}` in the source's Cookie header");
                let wanted = format!("COOKIE_{}", names::env_name(pair));
                Some(namer.name(value, wanted, report, &why))
            };
            if let Some(with_env) = cookie_pairs_with_env(s, &mut env_for) {
                *s = with_env;
            }
        }
        Node::Str(s) if in_fields && credentials::is_credential_name(&key) => {
            if !s.is_empty() && !s.contains("{{") {
                let (scheme, rest) = split_scheme(s);
                let var = namer.name(
                    &rest,
                    names::env_name(&key),
                    report,
                    &format!("`{key}` in the source held a literal credential"),
                );
                *s = format!("{scheme}{{{{ env.{var} }}}}");
                return;
            }
            shaped(s, &key, namer, report);
        }
        Node::Str(s) => shaped(s, &key, namer, report),
        Node::Raw(_) => {}
        Node::Map(entries) => {
            for inner in entries {
                entry(inner, &key, fields_below, namer, report);
            }
        }
        Node::Seq(items) => {
            let items_key = if key == "values" && !owner.is_empty() {
                owner
            } else {
                &key
            };
            for item in items {
                node(&mut item.value, items_key, fields_below, namer, report);
            }
        }
    }
}

fn node(n: &mut Node, key: &str, in_fields: bool, namer: &mut Namer, report: &mut Report) {
    match n {
        Node::Str(s) => shaped(s, key, namer, report),
        Node::Raw(_) => {}
        Node::Map(entries) => {
            for inner in entries {
                entry(inner, key, in_fields, namer, report);
            }
        }
        Node::Seq(items) => {
            for item in items {
                node(&mut item.value, key, in_fields, namer, report);
            }
        }
    }
}

/// `Bearer abc` → (`Bearer `, `abc`); a value without a scheme → (``, value).
fn split_scheme(s: &str) -> (String, String) {
    match s.split_once(' ') {
        Some((scheme, rest))
            if ["bearer", "basic", "token", "digest"]
                .contains(&scheme.to_ascii_lowercase().as_str()) =>
        {
            (format!("{scheme} "), rest.to_string())
        }
        _ => (String::new(), s.to_string()),
    }
}

/// Keys whose value is a request's URL.
fn is_url_key(key: &str) -> bool {
    matches!(
        key,
        "target" | "get" | "post" | "put" | "patch" | "delete" | "head" | "options" | "url"
    )
}

/// A literal query parameter named like a credential (`?api_key=k3y`) becomes
/// `{{ env.API_KEY }}`, as it would in a `query:` map.
fn query_credentials(s: &mut String, namer: &mut Namer, report: &mut Report) {
    let Some(q) = s.find('?') else {
        return;
    };
    let mut out = s[..=q].to_string();
    for (i, pair) in s[q + 1..].split('&').enumerate() {
        if i > 0 {
            out.push('&');
        }
        match pair.split_once('=') {
            Some((k, v))
                if credentials::is_credential_name(k) && !v.is_empty() && !v.contains("{{") =>
            {
                let why =
                    format!("the query parameter `{k}` in the source held a literal credential");
                let var = namer.name(v, names::env_name(k), report, &why);
                out.push_str(&format!("{k}={{{{ env.{var} }}}}"));
            }
            _ => out.push_str(pair),
        }
    }
    *s = out;
}

/// `/literal` as a whole path segment of `s` becomes `/replacement`.
fn replace_segment(s: &mut String, literal: &str, replacement: &str) {
    let needle = format!("/{literal}");
    let mut at = 0;
    while let Some(found) = s[at..].find(&needle) {
        let start = at + found;
        let end = start + needle.len();
        let whole = s[end..]
            .chars()
            .next()
            .is_none_or(|c| "/?#\"' ".contains(c));
        if whole {
            s.replace_range(start + 1..end, replacement);
            at = start + 1 + replacement.len();
        } else {
            at = end;
        }
    }
}

/// A password written in a URL (`http://user:pw@host`) becomes `{{ env.USER_PASSWORD }}`,
/// which a scenario reads when it is loaded (docs/scenario.md, "Credentials in a URL").
fn url_passwords(s: &mut String, key: &str, namer: &mut Namer, report: &mut Report) {
    let text = s.clone();
    for (start, end, user) in credentials::url_passwords(&text).into_iter().rev() {
        let wanted = password_var(&user);
        let var = namer.name(
            &text[start..end],
            wanted,
            report,
            &format!("the password of a URL under `{key}` in the source"),
        );
        s.replace_range(start..end, &format!("{{{{ env.{var} }}}}"));
    }
}

fn shaped(s: &mut String, key: &str, namer: &mut Namer, report: &mut Report) {
    url_passwords(s, key, namer, report);
    let found = opaque::find_in_field(key, s);
    if found.is_empty() {
        return;
    }
    let text = s.clone();
    for (start, end, shape) in found.into_iter().rev() {
        let wanted = if credentials::is_credential_name(key) {
            names::env_name(key)
        } else {
            shape.env_stem()
        };
        let var = namer.name(
            &text[start..end],
            wanted,
            report,
            &format!("{} under `{key}` in the source", shape.describe()),
        );
        s.replace_range(start..end, &format!("{{{{ env.{var} }}}}"));
    }
}

/// `a=1; SESSION=xyz` with the pairs `env_for` names a variable for as `{{ env.NAME }}`;
/// `None` when it names none.
pub(crate) fn cookie_pairs_with_env(
    header: &str,
    env_for: &mut dyn FnMut(&str, &str) -> Option<String>,
) -> Option<String> {
    let mut changed = false;
    let pairs: Vec<String> = header
        .split(';')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|pair| match pair.split_once('=') {
            Some((name, value)) if !pair.contains("{{") => match env_for(name, value) {
                Some(var) => {
                    changed = true;
                    format!("{name}={{{{ env.{var} }}}}")
                }
                None => pair.to_string(),
            },
            _ => pair.to_string(),
        })
        .collect();
    changed.then(|| pairs.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literal_credentials_leave_any_import() {
        let jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJlLXNpZ25hdHVyZQ";
        let mut doc = Document {
            header: vec![],
            root: vec![
                Entry::new(
                    "defaults",
                    Node::map([(
                        "headers",
                        Node::map([
                            ("X-Access-Token", Node::str("plainsecret")),
                            ("Accept", Node::str("application/json")),
                        ]),
                    )]),
                ),
                Entry::new(
                    "steps",
                    Node::seq([Node::map([
                        ("get", Node::str(format!("/a?t={jwt}"))),
                        ("json", Node::map([("token", Node::str("abc123"))])),
                        ("capture", Node::map([("token", Node::str("$.token"))])),
                    ])]),
                ),
            ],
        };
        let mut report = Report::default();
        scrub(&mut doc, &mut report);
        let text = crate::yaml::write_document(&doc);
        assert!(!text.contains("plainsecret") && !text.contains(jwt) && !text.contains("abc123"));
        assert!(text.contains("$.token"), "{text}");
        assert!(text.contains("application/json"));
        let names: Vec<&str> = report.variables.iter().map(|v| v.name.as_str()).collect();
        assert_eq!(names, ["X_ACCESS_TOKEN", "JWT", "TOKEN"]);
    }

    /// A URL's password, wherever the URL is (the target, a step, a body), is read from the
    /// environment; the user stays, and a URL without a password is left as it is.
    #[test]
    fn a_password_written_in_a_url_leaves_any_import() {
        let mut doc = Document {
            header: vec![],
            root: vec![
                Entry::new("target", Node::str("http://user:passwd@httpbin.org")),
                Entry::new(
                    "steps",
                    Node::seq([Node::map([
                        (
                            "get",
                            Node::str("https://deploy:p%40ss@api.example.com:8443/x?y=1"),
                        ),
                        (
                            "body",
                            Node::str(
                                "see ftp://anon@files.example.com/ and http://user:passwd@h/",
                            ),
                        ),
                    ])]),
                ),
            ],
        };
        let mut report = Report::default();
        scrub(&mut doc, &mut report);
        let text = crate::yaml::write_document(&doc);
        assert!(
            !text.contains("passwd") && !text.contains("p%40ss"),
            "{text}"
        );
        assert!(
            text.contains("http://user:{{ env.USER_PASSWORD }}@httpbin.org"),
            "{text}"
        );
        assert!(
            text.contains("https://deploy:{{ env.DEPLOY_PASSWORD }}@api.example.com:8443/x?y=1"),
            "{text}"
        );
        assert!(text.contains("ftp://anon@files.example.com/"), "{text}");
        assert!(
            text.contains("http://user:{{ env.USER_PASSWORD }}@h/"),
            "the same password, the same variable: {text}"
        );
        let names: Vec<&str> = report.variables.iter().map(|v| v.name.as_str()).collect();
        assert_eq!(names, ["USER_PASSWORD", "DEPLOY_PASSWORD"]);
    }

    /// Random-looking values under a public handle's name (Box's pagination `marker`, an
    /// ETag, a data set of ids) stay as written; the same value under any other name, and a
    /// JWT under a public name, still leave.
    #[test]
    fn public_handles_stay_and_keys_beside_them_leave() {
        let marker = "JV9IRGZmieiBasejOG9yDCRNgd2ymoZIbjsxbJMjIs3kioVii";
        let key = "Zx8Qw3Lr9Tb2Yk7Mn4Vc6Hp1Sd5Fg0JjKuE2";
        let jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJlLXNpZ25hdHVyZQ";
        let mut doc = Document {
            header: vec![],
            root: vec![
                Entry::new(
                    "data",
                    Node::map([(
                        "zip_download_id",
                        Node::map([("values", Node::seq([Node::str(marker)]))]),
                    )]),
                ),
                Entry::new(
                    "steps",
                    Node::seq([Node::map([
                        ("get", Node::str(format!("/a?marker={marker}&x={key}"))),
                        ("query", Node::map([("marker", Node::str(marker))])),
                        (
                            "headers",
                            Node::map([
                                ("If-None-Match", Node::str(format!("\"{marker}\""))),
                                ("X-Trace", Node::str(key)),
                            ]),
                        ),
                        ("json", Node::map([("next_marker", Node::str(jwt))])),
                    ])]),
                ),
            ],
        };
        let mut report = Report::default();
        scrub(&mut doc, &mut report);
        let text = crate::yaml::write_document(&doc);
        assert_eq!(text.matches(marker).count(), 4, "{text}");
        assert!(!text.contains(key) && !text.contains(jwt), "{text}");
        let names: Vec<&str> = report.variables.iter().map(|v| v.name.as_str()).collect();
        assert_eq!(names, ["SECRET", "JWT"]);
    }
}
