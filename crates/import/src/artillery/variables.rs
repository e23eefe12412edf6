//! Template variables an Artillery script sets outside its YAML — in a processor's JavaScript
//! function (`function:`, `beforeRequest:`) — are unknown to loadlab: each becomes an
//! environment variable the report asks for, instead of a template that fails validation.

use crate::report::Report;
use crate::yaml::{Entry, Node};

/// Replaces each `{{ name }}` no capture or data set defines with `{{ env.name }}`.
pub fn processor_variables(root: &mut [Entry], report: &mut Report) {
    let mut known: Vec<String> = vec!["vu".into(), "iteration".into()];
    for e in root.iter() {
        collect_known(e, &mut known);
    }
    for e in root.iter_mut() {
        if e.key != "data" {
            rewrite_entry(e, &known, report);
        }
    }
}

fn collect_known(e: &Entry, known: &mut Vec<String>) {
    if e.key == "data" || e.key == "capture" {
        if let Node::Map(entries) = &e.value {
            known.extend(entries.iter().map(|x| x.key.clone()));
        }
    }
    each_child(&e.value, &mut |child| collect_known(child, known));
}

fn each_child(n: &Node, f: &mut dyn FnMut(&Entry)) {
    match n {
        Node::Map(entries) => entries.iter().for_each(&mut *f),
        Node::Seq(items) => items.iter().for_each(|i| each_child(&i.value, f)),
        _ => {}
    }
}

fn rewrite_entry(e: &mut Entry, known: &[String], report: &mut Report) {
    if e.key == "capture" {
        return;
    }
    rewrite_node(&mut e.value, known, report);
}

fn rewrite_node(n: &mut Node, known: &[String], report: &mut Report) {
    match n {
        Node::Str(s) => {
            if let Some(t) = rewrite_text(s, known, report) {
                *s = t;
            }
        }
        Node::Raw(_) => {}
        Node::Map(entries) => entries
            .iter_mut()
            .for_each(|e| rewrite_entry(e, known, report)),
        Node::Seq(items) => items
            .iter_mut()
            .for_each(|i| rewrite_node(&mut i.value, known, report)),
    }
}

/// `text` with unknown bare variables read from the environment; `None` when unchanged.
fn rewrite_text(text: &str, known: &[String], report: &mut Report) -> Option<String> {
    let mut out = String::new();
    let mut rest = text;
    let mut changed = false;
    while let Some(open) = rest.find("{{") {
        let Some(close) = rest[open..].find("}}") else {
            break;
        };
        let expr = rest[open + 2..open + close].trim();
        out.push_str(&rest[..open]);
        let bare = !expr.is_empty()
            && expr.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !expr.starts_with(|c: char| c.is_ascii_digit());
        if bare && !known.iter().any(|k| k == expr) {
            changed = true;
            report.variable(
                expr,
                "set by the Artillery script's processor (JavaScript), which is not converted: give its value",
            );
            out.push_str(&format!("{{{{ env.{expr} }}}}"));
        } else {
            out.push_str(&rest[open..open + close + 2]);
        }
        rest = &rest[open + close + 2..];
    }
    out.push_str(rest);
    changed.then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_variables_come_from_the_environment() {
        let mut root = vec![
            Entry::new(
                "data",
                Node::map([("users", Node::map([("csv", Node::str("u.csv"))]))]),
            ),
            Entry::new(
                "flows",
                Node::seq([Node::map([
                    (
                        "get",
                        Node::str("/a/{{ token }}/{{ users.name }}/{{ sessionKey }}"),
                    ),
                    ("capture", Node::map([("token", Node::str("$.t"))])),
                ])]),
            ),
        ];
        let mut report = Report::default();
        processor_variables(&mut root, &mut report);
        let text = crate::yaml::write_document(&crate::yaml::Document {
            header: vec![],
            root,
        });
        assert!(
            text.contains("/a/{{ token }}/{{ users.name }}/{{ env.sessionKey }}"),
            "{text}"
        );
        let names: Vec<&str> = report.variables.iter().map(|v| v.name.as_str()).collect();
        assert_eq!(names, ["sessionKey"]);
    }
}
