//! The `expect` plugin's checks of an Artillery request (statusCode, contentType,
//! hasProperty, equals) gathered into loadlab's one `check:` per step; kept apart from the
//! flow walk, which only hands each expectation over.

use crate::report::Report;
use crate::yaml::{Entry, Node};
use serde_yaml_ng::Value;

use super::flow::paren;

/// What a request's `expect` list asks, gathered into the one check loadlab writes.
#[derive(Default)]
pub struct Expected {
    status: Vec<u64>,
    json: Vec<(String, Node)>,
    header: Vec<(String, Node)>,
    body_contains: Option<String>,
}

impl Expected {
    /// One expectation, `key: v` at line `at`; one that does not convert is reported and noted
    /// in `comments`.
    pub fn add(
        &mut self,
        key: &str,
        v: &Value,
        at: Option<usize>,
        captures: &[(String, Node)],
        report: &mut Report,
        comments: &mut Vec<String>,
    ) {
        match key {
            "statusCode" => match v {
                Value::Sequence(s) => self.status.extend(s.iter().filter_map(Value::as_u64)),
                other => self.status.extend(other.as_u64()),
            },
            "contentType" => self.content_type(v, comments),
            "hasProperty" => self.has_property(v, at, report, comments),
            "equals" => match equals(v, captures) {
                Some((path, expected)) => self.json.push((path, expected)),
                None => {
                    report.unsupported(
                        at,
                        "expect equals: converts only `[\"{{ captured }}\", value]` with a JSON capture of this request",
                    );
                    comments.push(format!("not converted{}: expect equals", paren(at)));
                }
            },
            other => {
                report.unsupported(at, format!("expect {other}: no loadlab check"));
                comments.push(format!("not converted{}: expect {other}", paren(at)));
            }
        }
    }

    /// Artillery's `contentType` matched loosely (`json`: any such type); loadlab's header
    /// check wants one whole type, so a comment says the check became stricter.
    fn content_type(&mut self, v: &Value, comments: &mut Vec<String>) {
        let t = v.as_str().unwrap_or("");
        let full = if t.contains('/') {
            t.to_string()
        } else {
            format!("application/{t}")
        };
        comments.push(format!(
            "Artillery's contentType `{t}` matched any such type; this check wants exactly `{full}`"
        ));
        self.header.push(("Content-Type".into(), Node::str(full)));
    }

    /// A property is approximated by its key appearing in the body, and loadlab's check has one
    /// `body_contains`: the first property converts, the others are reported.
    fn has_property(
        &mut self,
        v: &Value,
        at: Option<usize>,
        report: &mut Report,
        comments: &mut Vec<String>,
    ) {
        let p = v.as_str().unwrap_or("");
        let key = p.rsplit('.').next().unwrap_or(p);
        if self.body_contains.is_none() {
            self.body_contains = Some(format!("\"{key}\""));
            comments.push(format!(
                "hasProperty `{p}` approximated: the body contains the key \"{key}\""
            ));
        } else {
            report.unsupported(
                at,
                format!("expect hasProperty `{p}`: only one per request converts"),
            );
        }
    }

    /// The check's entries, in the order loadlab writes them.
    pub fn entries(self) -> Vec<Entry> {
        let mut out = Vec::new();
        match self.status.len() {
            0 => {}
            1 => out.push(Entry::new("status", Node::raw(self.status[0].to_string()))),
            _ => out.push(Entry::new(
                "status",
                Node::seq(self.status.iter().map(|s| Node::raw(s.to_string()))),
            )),
        }
        if !self.json.is_empty() {
            out.push(Entry::new("json", Node::map(self.json)));
        }
        if let Some(b) = self.body_contains {
            out.push(Entry::new("body_contains", Node::str(b)));
        }
        if !self.header.is_empty() {
            out.push(Entry::new("header", Node::map(self.header)));
        }
        out
    }
}

/// `equals: ["{{ id }}", 42]` where `id` is a JSON capture of this request → (`$.id`, 42).
fn equals(v: &Value, captures: &[(String, Node)]) -> Option<(String, Node)> {
    let pair = v.as_sequence()?;
    if pair.len() != 2 {
        return None;
    }
    let var_of = |x: &Value| {
        let s = x.as_str()?.trim();
        let inner = s.strip_prefix("{{")?.strip_suffix("}}")?.trim().to_string();
        Some(inner)
    };
    let (var, other) = match (var_of(&pair[0]), var_of(&pair[1])) {
        (Some(v), None) => (v, &pair[1]),
        (None, Some(v)) => (v, &pair[0]),
        _ => return None,
    };
    let path = captures.iter().find_map(|(name, src)| match src {
        Node::Str(p) if *name == var => Some(p.clone()),
        _ => None,
    })?;
    let expected = serde_json::to_value(other).ok()?;
    Some((path, Node::json(&expected)))
}
