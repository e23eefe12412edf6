//! Data sets holding credentials are kept out of the scenario: a data cell is sent as written
//! (no `{{ env.X }}` is read in it), so a set named like one (`passwordArr`, `tokens`,
//! `api_keys`) or with a column named like one (`{ password: 'p1' }`) becomes a CSV file the
//! user writes, and the requests read its column.

use super::data::{DataSet, Source};
use super::request::{Body, Request};
use crate::report::Report;
use serde_json::Value;

/// What replaces a set of credentials: the CSV to write and its header row.
#[derive(Debug, Clone, PartialEq)]
pub struct Withheld {
    /// Where the values were (`an inline array`, `data/tokens.json`).
    pub origin: String,
    pub csv: String,
    pub header: Vec<String>,
    /// The columns (or, for plain values, the one column) holding credentials.
    pub secrets: Vec<String>,
}

/// Collection words a set's name ends with (`passwordArr`, `token_list`, `secrets`).
const COLLECTION_SUFFIXES: &[&str] = &[
    "array", "arr", "list", "lst", "data", "set", "values", "items", "pool", "es", "s",
];

/// The credential a set's name speaks of (`passwordArr` → `password`, `api_keys` → `api_key`),
/// when it does: the name with its collection word removed, compared as a field name.
pub fn credential_stem(name: &str) -> Option<String> {
    let snake = crate::names::snake_case(name);
    let credential = crate::credentials::is_credential_name;
    COLLECTION_SUFFIXES
        .iter()
        .filter_map(|suffix| snake.strip_suffix(suffix))
        .map(|stem| stem.trim_end_matches('_'))
        .find(|stem| !stem.is_empty() && credential(stem))
        .map(str::to_string)
        .or_else(|| credential(&snake).then_some(snake.clone()))
}

/// Whether the set `name` of `rows` is kept out of the scenario by [`withhold`].
pub fn holds_credentials(name: &str, rows: &Value) -> bool {
    rows.as_array()
        .is_some_and(|r| plan(name, r, String::new(), String::new()).is_some())
}

/// Turns each inline set holding credentials into a CSV left to write, and makes the requests
/// reading a set of plain values (`{{ passwords }}`) read its one column
/// (`{{ passwords.password }}`).
pub fn withhold(sets: &mut [DataSet], requests: &mut [Request], report: &mut Report) {
    for set in sets.iter_mut() {
        let (origin, csv) = match &set.source {
            Source::Inline(_) if set.from_file.is_some() => {
                let path = set.from_file.clone().unwrap_or_default();
                let csv = match path.strip_suffix(".json") {
                    Some(stem) => format!("{stem}.csv"),
                    None => format!("{path}.csv"),
                };
                (path, csv)
            }
            Source::Inline(_) => ("an inline array".to_string(), format!("{}.csv", set.name)),
            _ => continue,
        };
        let Source::Inline(Value::Array(rows)) = &set.source else {
            continue;
        };
        let Some(w) = plan(&set.name, rows, origin, csv) else {
            continue;
        };
        if rows.iter().all(|r| !r.is_object()) {
            let column = &w.header[0];
            for r in requests.iter_mut() {
                reread(r, &set.name, column);
            }
        }
        report.did(format!(
            "line {}: `{}` holds credentials ({}): its values are left out of the scenario; write them to {} (header row `{}`)",
            set.line,
            set.name,
            w.secrets.join(", "),
            w.csv,
            w.header.join(",")
        ));
        set.source = Source::Withheld(w);
    }
}

/// The CSV replacing `rows` of the set `name` when its name or a column's holds a credential.
fn plan(name: &str, rows: &[Value], origin: String, csv: String) -> Option<Withheld> {
    let stem = credential_stem(name);
    let mut header: Vec<String> = Vec::new();
    let mut secrets: Vec<String> = Vec::new();
    // In a set named like a credential with no column named so, every literal text may be one.
    let mut literals: Vec<String> = Vec::new();
    let mut scalars = false;
    for row in rows {
        let Some(obj) = row.as_object() else {
            scalars = true;
            continue;
        };
        for (k, cell) in obj {
            if !header.contains(k) {
                header.push(k.clone());
            }
            let literal = cell
                .as_str()
                .is_some_and(|c| !c.is_empty() && !c.contains("{{"));
            if literal && !literals.contains(k) {
                literals.push(k.clone());
            }
            if literal && crate::credentials::is_credential_name(k) && !secrets.contains(k) {
                secrets.push(k.clone());
            }
        }
    }
    if scalars {
        let column = stem?;
        return Some(Withheld {
            origin,
            csv,
            header: vec![column.clone()],
            secrets: vec![column],
        });
    }
    if secrets.is_empty() && stem.is_some() {
        secrets = literals;
    }
    (!secrets.is_empty()).then_some(Withheld {
        origin,
        csv,
        header,
        secrets,
    })
}

/// `{{ set }}` → `{{ set.column }}` in everything `r` sends.
fn reread(r: &mut Request, set: &str, column: &str) {
    let from = format!("{{{{ {set} }}}}");
    let to = format!("{{{{ {set}.{column} }}}}");
    let swap = |t: &mut String| {
        if t.contains(&from) {
            *t = t.replace(&from, &to);
        }
    };
    swap(&mut r.url);
    r.headers.iter_mut().for_each(|(_, v)| swap(v));
    match &mut r.body {
        Some(Body::Json(v)) => swap_json(v, &swap),
        Some(Body::Text(t)) => swap(t),
        Some(Body::Form(f)) => f.iter_mut().for_each(|(_, v)| swap(v)),
        None => {}
    }
}

fn swap_json(v: &mut Value, swap: &dyn Fn(&mut String)) {
    match v {
        Value::String(s) => swap(s),
        Value::Array(a) => a.iter_mut().for_each(|x| swap_json(x, swap)),
        Value::Object(o) => o.values_mut().for_each(|x| swap_json(x, swap)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_names_speaking_of_a_credential() {
        let cases = [
            ("passwordArr", Some("password")),
            ("passwords", Some("password")),
            ("password_list", Some("password")),
            ("tokens", Some("token")),
            ("apiKeys", Some("api_key")),
            ("secretList", Some("secret")),
            ("pwdArr", Some("pwd")),
            ("pass", Some("pass")),
            ("authTokens", Some("auth_token")),
            ("usernameArr", None),
            ("users", None),
            ("pages", None),
            ("passengers", None),
            ("products", None),
        ];
        for (name, want) in cases {
            assert_eq!(credential_stem(name).as_deref(), want, "{name}");
        }
    }

    #[test]
    fn plain_values_get_one_column_rows_keep_theirs() {
        let scalars = [Value::from("123"), Value::from("1234")];
        let w = plan("passwordArr", &scalars, "x".into(), "p.csv".into()).unwrap();
        assert_eq!(w.header, ["password"]);
        assert!(plan("usernameArr", &scalars, "x".into(), "p.csv".into()).is_none());
        let rows = [serde_json::json!({"username": "u1", "password": "p1"})];
        let w = plan("users", &rows, "x".into(), "u.csv".into()).unwrap();
        assert_eq!(w.header, ["username", "password"]);
        assert_eq!(w.secrets, ["password"]);
        let w = plan("credentials", &rows, "x".into(), "c.csv".into()).unwrap();
        assert_eq!(w.secrets, ["password"]);
        // manan75 load.js: `API_KEYS = [{ name: 'valid', value: 'sk_student_123' }]`.
        let keys = [serde_json::json!({"name": "valid", "value": "sk_student_123"})];
        let w = plan("API_KEYS", &keys, "x".into(), "k.csv".into()).unwrap();
        assert_eq!(w.secrets, ["name", "value"]);
    }
}
