//! `new SharedArray('users', () => papaparse.parse(open('./users.csv'), { header: true }).data)`,
//! `JSON.parse(open('./users.json'))` or an inline array as a `data:` set; how its rows are
//! indexed (`users[__VU % users.length]`) gives the `pick` (see `values.rs`).

use super::js::Expr;
use super::request::{Body, Request};
use super::values::Scope;
use crate::report::Report;
use crate::yaml::Node;

/// A data set read from the script.
#[derive(Debug, Clone, PartialEq)]
pub struct DataSet {
    pub name: String,
    pub source: Source,
    pub line: usize,
    /// The JSON file an inline set was read from.
    pub from_file: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Source {
    /// A CSV file; `header`: its first row names the columns (papaparse's `header: true`).
    Csv {
        path: String,
        header: bool,
    },
    /// A JSON file: loadlab reads CSV files or inline values.
    Json {
        path: String,
        /// `JSON.parse(open(path)).field`: the array under this key.
        field: Option<String>,
    },
    Inline(serde_json::Value),
    /// Values holding credentials, left for the user to write to a CSV file.
    Withheld(super::withheld::Withheld),
}

/// The data set `value` defines, when it is one (`new SharedArray(...)`, `JSON.parse(open())`,
/// `papaparse.parse(open()).data`), named after the variable `name`.
pub fn data_set(scope: &mut Scope, name: &str, value: &Expr, line: usize) -> Option<DataSet> {
    let inner = match value {
        Expr::New { callee, args, .. } if callee.dotted().as_deref() == Some("SharedArray") => {
            let f = args.get(1)?;
            f.returned()?.clone()
        }
        other => other.clone(),
    };
    let source = source(scope, &inner)?;
    Some(DataSet {
        name: name.to_string(),
        source,
        line,
        from_file: None,
    })
}

fn source(scope: &mut Scope, e: &Expr) -> Option<Source> {
    if let Expr::Array(_) = e {
        // `let orders = []`, filled while the script runs, is no data set (an empty one would
        // stop the scenario loading).
        return scope
            .json(e)
            .ok()
            .filter(|v| v.as_array().is_some_and(|rows| !rows.is_empty()))
            .map(Source::Inline);
    }
    // JSON.parse(open(path)).field
    if let Expr::Member { object, property } = e {
        if let Some((name, args, _)) = object.as_call() {
            if name == "JSON.parse" {
                let path = opened(args.first()?)?;
                return Some(Source::Json {
                    path,
                    field: Some(property.clone()),
                });
            }
        }
    }
    // papaparse.parse(open(path), { header: true }).data
    if let Expr::Member { object, property } = e {
        if property != "data" {
            return None;
        }
        let (name, args, _) = object.as_call()?;
        if !name.ends_with(".parse") || name == "JSON.parse" {
            return None;
        }
        let path = opened(args.first()?)?;
        let header = args
            .get(1)
            .and_then(|o| o.prop("header"))
            .is_some_and(|h| *h == Expr::Bool(true));
        return Some(Source::Csv { path, header });
    }
    let (name, args, _) = e.as_call()?;
    if name == "JSON.parse" {
        let path = opened(args.first()?)?;
        return Some(Source::Json { path, field: None });
    }
    None
}

/// `open('./users.csv')` → `users.csv`.
fn opened(e: &Expr) -> Option<String> {
    let (name, args, _) = e.as_call()?;
    if name != "open" {
        return None;
    }
    let p = args.first()?.as_str()?;
    Some(p.strip_prefix("./").unwrap_or(p).to_string())
}

/// Largest JSON file read into the scenario as inline values.
const MAX_INLINE_BYTES: u64 = 256 * 1024;

/// `JSON.parse(open('users.json'))` of a file beside the script (`file`) holding an array:
/// its values inline, so the scenario needs no conversion to CSV. A file that cannot be read
/// (or is large, or not an array) stays a decision for the user.
pub fn inline_json_files(sets: &mut [DataSet], file: &str, report: &mut crate::report::Report) {
    let dir = std::path::Path::new(file)
        .parent()
        .unwrap_or(std::path::Path::new(""));
    for set in sets.iter_mut() {
        let Source::Json { path, field } = &set.source else {
            continue;
        };
        let full = dir.join(path);
        let small = std::fs::metadata(&full).is_ok_and(|m| m.len() <= MAX_INLINE_BYTES);
        let value = small
            .then(|| std::fs::read_to_string(&full).ok())
            .flatten()
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
            .and_then(|v| match field {
                Some(f) => v.get(f.as_str()).cloned(),
                None => Some(v),
            });
        if let Some(v @ serde_json::Value::Array(_)) = value {
            if !super::withheld::holds_credentials(&set.name, &v) {
                report.did(format!(
                    "line {}: the data set `{}` holds the values of {path} inline",
                    set.line, set.name
                ));
            }
            set.from_file = Some(path.clone());
            set.source = Source::Inline(v);
        }
    }
}

/// A request whose whole URL is a row of an inline set of URLs (`http.get(pages[i])`): a
/// URL's host cannot be a template (connections open before the run), so the set holds the
/// paths (without their `/`) and the request `/{{ pages }}`, on the target or on the one
/// origin the URLs share. URLs on several origins are reported: loadlab cannot send them.
pub fn urls_from_sets(
    sets: &mut [DataSet],
    requests: &mut [Request],
    target: Option<&str>,
    report: &mut Report,
) {
    for set in sets.iter_mut() {
        let whole = format!("{{{{ {} }}}}", set.name);
        let users: Vec<usize> = (0..requests.len())
            .filter(|&i| requests[i].url.starts_with(&whole))
            .collect();
        let (Some(&first), Source::Inline(serde_json::Value::Array(values))) =
            (users.first(), &mut set.source)
        else {
            continue;
        };
        let Some((origin, paths)) = one_origin(values) else {
            report.unsupported(
                Some(requests[first].line),
                format!(
                    "the URLs of `{}` are not on one origin: loadlab opens its connections before the run, so a host cannot come from a data set; split the set by host",
                    set.name
                ),
            );
            continue;
        };
        let prefix = match origin {
            Some(o) if Some(o.as_str()) != target.map(|t| t.trim_end_matches('/')) => o,
            _ => String::new(),
        };
        *values = paths.into_iter().map(serde_json::Value::String).collect();
        for i in users {
            requests[i].url = format!("{prefix}/{}", requests[i].url);
        }
    }
}

/// The origin all `values` share (`None`: all are paths) and each one's path without its
/// leading `/`; `None` when they are not all strings on one origin.
fn one_origin(values: &[serde_json::Value]) -> Option<(Option<String>, Vec<String>)> {
    let mut origin: Option<Option<String>> = None;
    let mut paths = Vec::new();
    for v in values {
        let text = v.as_str()?;
        let (o, path) = match text.split_once("://") {
            Some((scheme, rest)) if scheme == "http" || scheme == "https" => {
                let host_end = rest.find(['/', '?']).unwrap_or(rest.len());
                let o = format!("{scheme}://{}", &rest[..host_end]);
                (Some(o), &rest[host_end..])
            }
            _ => (None, text),
        };
        if *origin.get_or_insert_with(|| o.clone()) != o {
            return None;
        }
        paths.push(path.strip_prefix('/').unwrap_or(path).to_string());
    }
    Some((origin.flatten(), paths))
}

/// The keys of inline rows named like a credential and holding a literal
/// (`{ username: 'u1', password: 'p1' }`), with all the rows' keys; `None` when no row holds
/// one. A data cell is sent as written (no template is read in it), so such rows cannot stay.
fn secret_columns(v: &serde_json::Value) -> Option<(Vec<String>, Vec<String>)> {
    let (mut secrets, mut header) = (Vec::new(), Vec::new());
    for row in v.as_array()?.iter().filter_map(|r| r.as_object()) {
        for (k, cell) in row {
            if !header.contains(k) {
                header.push(k.clone());
            }
            let literal = cell
                .as_str()
                .is_some_and(|c| !c.is_empty() && !c.contains("{{"));
            if literal && crate::credentials::is_credential_name(k) && !secrets.contains(k) {
                secrets.push(k.clone());
            }
        }
    }
    (!secrets.is_empty()).then_some((secrets, header))
}

/// Leaves out an inline array no converted request reads: a module's stage lists
/// (`export const StressStages = [...]`) or a set whose requests were left out would be data
/// for nothing, and one holding credentials a CSV left to fill that stops the scenario
/// loading (see [`secret_columns`]).
pub fn drop_unused_inline(sets: &mut Vec<DataSet>, requests: &[Request], report: &mut Report) {
    sets.retain(|set| {
        let Source::Inline(v) = &set.source else {
            return true;
        };
        if requests.iter().any(|r| reads(r, &set.name)) {
            return true;
        }
        let holds = if secret_columns(v).is_some() {
            " holds credentials and"
        } else {
            ""
        };
        report.did(format!(
            "line {}: the inline array `{}`{holds} no converted request reads it: left out",
            set.line, set.name
        ));
        false
    });
}

/// Whether `r` reads the data set `name` (`{{ name }}`, `{{ name.column }}`).
fn reads(r: &Request, name: &str) -> bool {
    let uses =
        |t: &str| t.contains(&format!("{{{{ {name} }}}}")) || t.contains(&format!("{{{{ {name}."));
    uses(&r.url)
        || r.headers.iter().any(|(_, v)| uses(v))
        || match &r.body {
            Some(Body::Json(v)) => uses(&v.to_string()),
            Some(Body::Text(t)) => uses(t),
            Some(Body::Form(f)) => f.iter().any(|(_, v)| uses(v)),
            None => false,
        }
}

impl DataSet {
    /// The `data:` entry's value, and comments for what a person must do.
    pub fn node(&self, pick: &str) -> (Node, Vec<String>) {
        let mut comments = Vec::new();
        let node = match &self.source {
            Source::Csv { path, header } => {
                if !header {
                    comments.push(format!(
                        "decide: loadlab reads column names from the CSV's first row; the script parsed {path} without `header: true` — add a header row (`value` for one column read whole as `{{{{ {} }}}}`)",
                        self.name
                    ));
                }
                Node::map([("csv", Node::str(path)), ("pick", Node::raw(pick))])
            }
            Source::Json { path, .. } => {
                let csv = match path.strip_suffix(".json") {
                    Some(stem) => format!("{stem}.csv"),
                    None => format!("{path}.csv"),
                };
                comments.push(format!(
                    "decide: loadlab reads CSV files: write {path}'s objects as {csv}, their keys as its header row"
                ));
                Node::map([("csv", Node::str(csv)), ("pick", Node::raw(pick))])
            }
            Source::Inline(v) => Node::map([("values", Node::json(v)), ("pick", Node::raw(pick))]),
            Source::Withheld(w) => {
                comments.push(format!(
                    "decide: the script's values ({}) hold credentials ({}), kept out of the scenario: write them to {}, its header row `{}`",
                    w.origin,
                    w.secrets.join(", "),
                    w.csv,
                    w.header.join(",")
                ));
                Node::map([("csv", Node::str(&w.csv)), ("pick", Node::raw(pick))])
            }
        };
        (node, comments)
    }

    pub fn describe(&self) -> String {
        match &self.source {
            Source::Csv { path, .. } => format!("the CSV file {path}"),
            Source::Json { path, .. } => format!("the JSON file {path}"),
            Source::Inline(_) => "an inline array".into(),
            Source::Withheld(w) => format!("{}, holding credentials", w.origin),
        }
    }
}
