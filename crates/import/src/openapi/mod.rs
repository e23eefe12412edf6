//! `loadlab import openapi`: an OpenAPI 3.0/3.1 spec becomes one flow per tag (or per
//! operation), each operation a request with an example body, its documented 2xx statuses as
//! checks, its security as headers from environment variables, and path parameters captured
//! from an earlier response where the spec links them (else variables to decide).

mod schema;
mod security;
mod spec;

use crate::error::{parse_yaml, ImportError};
use crate::lines::Lines;
use crate::names;
use crate::report::Report;
use crate::yaml::{Document, Entry, Item, Node};
use crate::Options;
use serde_json::Value;
use spec::{
    capture_for, json_str, links, operations, param_example, request_body, scalar_text, server,
    success_statuses, to_json, METHODS,
};

const FIX: &str = "give an OpenAPI 3 spec (YAML or JSON) with `openapi: 3.x` and `paths:`";

pub fn import(
    source: &str,
    file: &str,
    name: &str,
    options: &Options,
) -> Result<(Document, Report), ImportError> {
    let spec = to_json(&parse_yaml(source, file, FIX)?);
    let version = spec.get("openapi").and_then(Value::as_str).unwrap_or("");
    if !version.starts_with("3.") {
        let (why, fix) = if spec.get("swagger").is_some() {
            (
                "it is Swagger 2.0".to_string(),
                "convert it to OpenAPI 3 first (e.g. `npx swagger2openapi`)".to_string(),
            )
        } else if spec.get("scenarios").is_some() {
            (
                "it has no `openapi: 3.x` field".into(),
                "it is an Artillery script: use `loadlab import artillery`".into(),
            )
        } else {
            ("it has no `openapi: 3.x` field".into(), FIX.to_string())
        };
        return Err(ImportError::WrongKind {
            file: file.into(),
            expected: "an OpenAPI 3 spec",
            why,
            fix,
        });
    }
    let lines = Lines::new(source);
    let mut report = Report::default();
    let (target, base, target_comment) = server(&spec);
    let ops = operations(&spec);
    if ops.is_empty() {
        return Err(ImportError::invalid(
            file,
            "the spec has no operations under `paths:`",
        ));
    }

    // Flows: one per tag, in the order the tags are declared (then first use), or one per
    // operation.
    let mut groups: Vec<(String, Vec<usize>)> = Vec::new();
    if options.per_operation {
        for (i, o) in ops.iter().enumerate() {
            let fname =
                o.id.clone()
                    .unwrap_or_else(|| format!("{} {}", o.method.to_ascii_uppercase(), o.path));
            groups.push((fname, vec![i]));
        }
    } else {
        for t in spec
            .get("tags")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(n) = t.get("name").and_then(Value::as_str) {
                groups.push((n.to_string(), Vec::new()));
            }
        }
        for (i, o) in ops.iter().enumerate() {
            let tag =
                o.op.get("tags")
                    .and_then(Value::as_array)
                    .and_then(|t| t.first())
                    .and_then(Value::as_str)
                    .unwrap_or("default")
                    .to_string();
            match groups.iter_mut().find(|(n, _)| *n == tag) {
                Some((_, v)) => v.push(i),
                None => groups.push((tag, vec![i])),
            }
        }
        groups.retain(|(_, v)| !v.is_empty());
        // Creations first, reads, updates, deletions last; operations on a collection before
        // those on one of its members.
        for (_, v) in &mut groups {
            v.sort_by_key(|&i| {
                let o = &ops[i];
                (
                    o.path.contains('{'),
                    METHODS.iter().position(|m| *m == o.method),
                )
            });
        }
    }

    let mut data: Vec<(String, Value)> = Vec::new();
    let mut flows = Vec::new();
    let mut links_used = 0;
    for (fname, members) in &groups {
        let mut steps: Vec<Item> = Vec::new();
        let mut captures: Vec<Vec<(String, Node)>> = Vec::new();
        // (operationId, parameter, variable) offered by earlier steps' links.
        let mut offered: Vec<(String, String, String)> = Vec::new();
        // Security remarks are made once per flow, at the first step they concern.
        let mut remarked: Vec<String> = Vec::new();
        for &i in members {
            let o = &ops[i];
            let line = lines.find(&o.path, 1);
            let mut comments = Vec::new();
            if let Some(s) = o.op.get("summary").and_then(Value::as_str) {
                comments.push(match &o.id {
                    Some(id) => format!("{id}: {s}"),
                    None => s.to_string(),
                });
            }
            let mut url = format!("{base}{}", o.path);
            for p in o
                .params
                .iter()
                .filter(|p| p.get("in") == Some(&json_str("path")))
            {
                let pname = p.get("name").and_then(Value::as_str).unwrap_or("");
                let linked = o.id.as_ref().and_then(|id| {
                    offered
                        .iter()
                        .find(|(oid, param, _)| oid == id && param == pname)
                        .map(|(_, _, var)| var.clone())
                });
                let var = match linked {
                    Some(var) => {
                        links_used += 1;
                        var
                    }
                    None => {
                        let var = names::snake_case(pname);
                        if !data.iter().any(|(n, _)| *n == var) {
                            data.push((var.clone(), param_example(&spec, p)));
                        }
                        comments.push(format!(
                            "decide: path parameter `{pname}` is the variable `{var}` (data:); no earlier response links it"
                        ));
                        var
                    }
                };
                url = url.replace(&format!("{{{pname}}}"), &format!("{{{{ {var} }}}}"));
            }
            let mut m = vec![
                Entry::new(
                    "name",
                    Node::str(format!("{} {}", o.method.to_ascii_uppercase(), o.path)),
                ),
                Entry::new(o.method, Node::str(url)),
            ];
            let auth = security::auth_for(&spec, o.op);
            let mut query: Vec<(String, String)> = Vec::new();
            let mut headers: Vec<(String, String)> = auth.headers.clone();
            for p in &o.params {
                let place = p.get("in").and_then(Value::as_str).unwrap_or("");
                let pname = p
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string();
                let required = p.get("required") == Some(&Value::Bool(true));
                let has_example = p.get("example").is_some()
                    || p.get("schema").is_some_and(|s| s.get("example").is_some());
                if !(required || has_example) || place == "path" {
                    continue;
                }
                let value = scalar_text(&param_example(&spec, p));
                match place {
                    "query" => query.push((pname, value)),
                    "header" => headers.push((pname, value)),
                    "cookie" => headers.push(("Cookie".into(), format!("{pname}={value}"))),
                    _ => {}
                }
            }
            query.extend(auth.query.clone());
            for (var, why) in &auth.variables {
                report.variable(var, why.clone());
            }
            for c in &auth.comments {
                if !remarked.contains(c) {
                    remarked.push(c.clone());
                    comments.push(c.clone());
                }
            }
            if !query.is_empty() {
                m.push(Entry::new(
                    "query",
                    Node::map(query.into_iter().map(|(k, v)| (k, Node::str(v)))),
                ));
            }
            if !headers.is_empty() {
                m.push(Entry::new(
                    "headers",
                    Node::map(headers.into_iter().map(|(k, v)| (k, Node::str(v)))),
                ));
            }
            if let Some(body) = o.op.get("requestBody") {
                match request_body(&spec, schema::resolve(&spec, body)) {
                    Ok(Some(entry)) => m.push(entry),
                    Ok(None) => {}
                    Err(what) => {
                        let what = format!("{} {}: {what}", o.method.to_ascii_uppercase(), o.path);
                        comments.push(format!("not converted: {what}"));
                        report.unsupported(line, what);
                    }
                }
            }
            let statuses = success_statuses(o.op);
            match statuses.len() {
                0 => {}
                1 => m.push(Entry::new(
                    "check",
                    Node::map([("status", Node::raw(statuses[0].to_string()))]),
                )),
                _ => m.push(Entry::new(
                    "check",
                    Node::map([(
                        "status",
                        Node::seq(statuses.iter().map(|s| Node::raw(s.to_string()))),
                    )]),
                )),
            }
            // Links from this operation's responses: captured here, used by later steps.
            let mut step_captures = Vec::new();
            for (target_id, param, expr) in links(&spec, o.op) {
                let var = names::snake_case(&param);
                match capture_for(&expr) {
                    Some(capture) => {
                        if !step_captures
                            .iter()
                            .any(|(n, _): &(String, Node)| *n == var)
                        {
                            step_captures.push((var.clone(), capture));
                        }
                        offered.push((target_id, param, var));
                    }
                    None => report.unsupported(
                        line,
                        format!("link to `{target_id}`: the expression `{expr}` is not converted"),
                    ),
                }
            }
            captures.push(step_captures);
            for h in m.iter() {
                collect_env(&h.value, &mut report);
            }
            steps.push(Item {
                comments,
                value: Node::Map(m),
            });
        }
        // Captures only for the links a later step used.
        for (item, caps) in steps.iter_mut().zip(captures) {
            let used: Vec<(String, Node)> = caps
                .into_iter()
                .filter(|(v, _)| offered.iter().any(|(_, _, var)| var == v))
                .collect();
            if !used.is_empty() {
                if let Node::Map(m) = &mut item.value {
                    m.push(Entry::new("capture", Node::map(used)));
                }
            }
        }
        flows.push(Item::new(Node::map([
            ("name", Node::str(fname.clone())),
            ("steps", Node::Seq(steps)),
        ])));
    }
    report.did(format!(
        "{} operation(s) became request steps in {} flow(s) ({})",
        ops.len(),
        flows.len(),
        if options.per_operation {
            "one per operation"
        } else {
            "one per tag"
        }
    ));
    if links_used > 0 {
        report.did(format!(
            "{links_used} path parameter(s) captured from an earlier response (the spec's links)"
        ));
    }
    if !data.is_empty() {
        report.did(format!(
            "{} path parameter(s) without a link became data variables: {}",
            data.len(),
            data.iter()
                .map(|(n, _)| n.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }

    let title = spec
        .pointer("/info/title")
        .and_then(Value::as_str)
        .unwrap_or(name);
    let mut root = vec![Entry::new("name", Node::str(title))];
    let mut target_entry = Entry::new("target", Node::str(target));
    if let Some(c) = target_comment {
        target_entry = target_entry.commented(c);
    }
    root.push(target_entry);
    root.push(
        Entry::new(
            "load",
            Node::map([
                ("model", Node::raw("closed")),
                ("vus", Node::raw("1")),
                ("iterations", Node::raw("1")),
            ]),
        )
        .commented(
            "decide: a spec says nothing of load; choose it (docs/scenario.md, \"Load models\")",
        ),
    );
    if !data.is_empty() {
        root.push(
            Entry::new(
                "data",
                Node::map(data.iter().map(|(n, v)| {
                    (
                        n.clone(),
                        Node::map([("values", Node::json(&Value::Array(vec![v.clone()])))]),
                    )
                })),
            )
            .commented("decide: ids of existing records for the path parameters (one value each; add more)"),
        );
    }
    root.push(Entry::new("flows", Node::Seq(flows)));
    let header = vec![
        format!(
            "Imported from {} by `loadlab import openapi` ({} operations).",
            std::path::Path::new(file)
                .file_name()
                .map(|f| f.to_string_lossy().into_owned())
                .unwrap_or_else(|| file.to_string()),
            ops.len()
        ),
        "Comments starting with \"decide:\" need a person's choice.".to_string(),
    ];
    Ok((Document { header, root }, report))
}

/// Registers the `{{ env.NAME }}` a generated value reads (a `format: password` field).
fn collect_env(node: &Node, report: &mut Report) {
    match node {
        Node::Str(s) => {
            let mut rest = s.as_str();
            while let Some(i) = rest.find("{{ env.") {
                let tail = &rest[i + 7..];
                let end = tail.find(' ').unwrap_or(tail.len());
                let var = &tail[..end];
                if !report.variables.iter().any(|v| v.name == var) {
                    report.variable(var, "a generated field (format: password)");
                }
                rest = &tail[end..];
            }
        }
        Node::Raw(_) => {}
        Node::Map(m) => m.iter().for_each(|e| collect_env(&e.value, report)),
        Node::Seq(s) => s.iter().for_each(|i| collect_env(&i.value, report)),
    }
}
