//! `loadlab import openapi`: an OpenAPI 3.0/3.1 spec becomes one flow per tag (or per
//! operation), each operation a request with an example body, its documented 2xx statuses as
//! checks, its security as headers from environment variables (a bearer token from the
//! spec's sign-in when one answers it), and path parameters captured from an earlier response
//! where the spec links them (else variables to decide).

mod bounds;
mod flow;
mod load;
mod schema;
mod security;
mod spec;
mod style;

use crate::error::ImportError;
use crate::lines::Lines;
use crate::report::Report;
use crate::scaffold::{imported_from, one_user_once, DECIDE_NOTE};
use crate::yaml::{Document, Entry, Item, Node};
use crate::Options;
use serde_json::Value;
use spec::{links, operations, server, to_json, Op, METHODS};

const FIX: &str = "give an OpenAPI 3 spec (YAML or JSON) with `openapi: 3.x` and `paths:`";

pub fn import(
    source: &str,
    file: &str,
    name: &str,
    options: &Options,
) -> Result<(Document, Report), ImportError> {
    let spec = read_spec(source, file)?;
    let lines = Lines::new(source);
    let mut report = Report::default();
    refuse_unresolved_refs(&spec, file, &lines)?;
    report_recursive_schemas(&spec, &mut report);
    let (target, base, target_comment) = server(&spec);
    let ops = operations(&spec);
    report_unreached_path_items(&spec, &lines, &mut report);
    refuse_without_operations(&spec, &ops, file)?;
    let groups = flow_groups(&spec, &ops, options.per_operation);

    // A bearer token from the spec's sign-in, when it has one, else from `{{ env.TOKEN }}`.
    let token = security::token_source(&spec, &ops);
    let sign_in = token.as_ref().map(|t| (&ops[t.op], t.field.as_str()));
    if let Some((op, field)) = sign_in {
        report.did(format!(
            "the bearer token is captured from `{} {}` ($.{field}), the one operation without security whose response has a token; a flow that needs it signs in first",
            op.method.to_ascii_uppercase(),
            op.path
        ));
    }
    let flows = build_flows(
        &spec,
        &ops,
        &groups,
        (&target, &base),
        &lines,
        sign_in,
        &mut report,
    );
    // Found flow by flow; read top to bottom, they follow the spec (those without a line last).
    report
        .unsupported
        .sort_by_key(|u| (u.line.is_none(), u.line));
    if flows.items.is_empty() {
        let why: Vec<String> = report
            .unsupported
            .iter()
            .map(|u| match u.line {
                Some(line) => format!("line {line}: {}", u.what),
                None => u.what.clone(),
            })
            .collect();
        return Err(ImportError::invalid(
            file,
            format!(
                "no operation could be converted ({}); fix the spec's paths or parameters",
                why.join("; ")
            ),
        ));
    }
    report_flows(&flows, ops.len(), options.per_operation, &mut report);
    report_unsafe(&ops, &target, &mut report);

    let title = spec
        .pointer("/info/title")
        .and_then(Value::as_str)
        .unwrap_or(name)
        .replace("{{", "{ {");
    let root = scenario_root(&title, target, target_comment, flows);
    let header = vec![
        imported_from(file, "openapi", &format!(" ({} operations)", ops.len())),
        DECIDE_NOTE.to_string(),
    ];
    Ok((Document { header, root }, report))
}

/// The flows as built, with what they share.
struct Flows {
    items: Vec<Item>,
    /// Data variables for path parameters no link gives.
    data: Vec<(String, Value)>,
    /// Path parameters captured from an earlier response.
    links_used: usize,
    /// Steps sent to their operation's own server.
    own_servers: usize,
    /// Operations that became a step (the others are reported).
    steps: usize,
}

fn report_recursive_schemas(spec: &Value, report: &mut Report) {
    let recursive = schema::recursive_schemas(spec);
    if !recursive.is_empty() {
        report.did(format!(
            "{} schema(s) refer to themselves ({}): their examples stop at the first repetition (an optional self-reference left out, a required one empty)",
            recursive.len(),
            recursive.join(", ")
        ));
    }
}

/// A path item whose `$ref` never reaches one (it refers to itself) has no operations to
/// list: said, rather than the path silently missing.
fn report_unreached_path_items(spec: &Value, lines: &Lines, report: &mut Report) {
    let Some(paths) = spec.get("paths").and_then(Value::as_object) else {
        return;
    };
    for (path, item) in paths {
        if let Some(r) = schema::resolve(spec, item)
            .get("$ref")
            .and_then(Value::as_str)
        {
            report.unsupported(
                lines.find(path, 1),
                format!("path `{path}`: its `$ref: {r}` never reaches a path item (it refers to itself or names nothing); left out"),
            );
        }
    }
}

/// A spec with nothing to call is refused; one with only webhooks says why they do not count.
fn refuse_without_operations(spec: &Value, ops: &[Op], file: &str) -> Result<(), ImportError> {
    if !ops.is_empty() {
        return Ok(());
    }
    let why = if spec.get("webhooks").is_some() {
        "the spec has no operations under `paths:`, only `webhooks:` (requests the API sends, not requests to it): there is nothing to call"
    } else {
        "the spec has no operations under `paths:`"
    };
    Err(ImportError::invalid(file, why))
}

/// One flow per group, its operations as steps in the group's order.
fn build_flows(
    spec: &Value,
    ops: &[Op],
    groups: &[(String, Vec<usize>)],
    server: (&str, &str),
    lines: &Lines,
    sign_in: Option<(&Op, &str)>,
    report: &mut Report,
) -> Flows {
    let mut data: Vec<(String, Value)> = Vec::new();
    let mut items = Vec::new();
    let mut links_used = 0;
    let mut own_servers = 0;
    let mut steps = 0;
    for (fname, members) in groups {
        let mut builder = flow::FlowBuilder::new(spec, server, lines, &mut data, sign_in);
        for &i in members {
            builder.step(&ops[i], report);
        }
        links_used += builder.links_used;
        own_servers += builder.own_servers;
        let built = builder.finish();
        // A flow whose every operation was left out (reported) would not validate.
        if built.is_empty() {
            continue;
        }
        steps += built.len();
        items.push(Item::new(Node::map([
            ("name", Node::str(fname.clone())),
            ("steps", Node::Seq(built)),
        ])));
    }
    Flows {
        items,
        data,
        links_used,
        own_servers,
        steps,
    }
}

fn report_flows(flows: &Flows, operations: usize, per_operation: bool, report: &mut Report) {
    let converted = if flows.steps == operations {
        operations.to_string()
    } else {
        format!("{} of {operations}", flows.steps)
    };
    report.did(format!(
        "{converted} operation(s) became request steps in {} flow(s) ({})",
        flows.items.len(),
        if per_operation {
            "one per operation"
        } else {
            "one per tag"
        }
    ));
    if flows.items.len() > 1 {
        report.did(format!(
            "the load is 1 VU x {n} iterations: each of the {n} flows runs once (flows are picked in turn)",
            n = flows.items.len()
        ));
    }
    let links_used = flows.links_used;
    if links_used > 0 {
        report.did(format!(
            "{links_used} path parameter(s) captured from an earlier response (the spec's links)"
        ));
    }
    if flows.own_servers > 0 {
        report.did(format!(
            "{} step(s) go to the server their operation or path names instead of the document's (an absolute URL where its host is not the target)",
            flows.own_servers
        ));
    }
    if !flows.data.is_empty() {
        report.did(format!(
            "{} path parameter(s) without a link became data variables: {}",
            flows.data.len(),
            flows
                .data
                .iter()
                .map(|(n, _)| n.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
}

/// The scenario's entries: a spec says nothing of load, so the load is one user to decide on.
fn scenario_root(
    title: &str,
    target: String,
    target_comment: Option<String>,
    flows: Flows,
) -> Vec<Entry> {
    let mut root = vec![Entry::new("name", Node::str(title))];
    let mut target_entry = Entry::new("target", Node::str(target));
    if let Some(c) = target_comment {
        target_entry = target_entry.commented(c);
    }
    root.push(target_entry);
    root.push(each_flow_once(flows.items.len()));
    if !flows.data.is_empty() {
        root.push(
            Entry::new(
                "data",
                Node::map(flows.data.iter().map(|(n, v)| {
                    (
                        n.clone(),
                        Node::map([("values", Node::json(&Value::Array(vec![v.clone()])))]),
                    )
                })),
            )
            .commented("decide: ids of existing records for the path parameters (one value each; add more)"),
        );
    }
    root.push(Entry::new("flows", Node::Seq(flows.items)));
    root
}

/// One user running each flow once: a VU picks flows in turn (docs/scenario.md, "Flows and
/// weights"), so one iteration per flow runs them all, where one iteration ran only the
/// first of a spec's many tags.
fn each_flow_once(flows: usize) -> Entry {
    let decide =
        "decide: a spec says nothing of load; choose it (docs/scenario.md, \"Load models\")";
    if flows <= 1 {
        return one_user_once(decide);
    }
    Entry::new(
        "load",
        Node::map([
            ("model", Node::raw("closed")),
            ("vus", Node::raw("1")),
            ("iterations", Node::raw(flows.to_string())),
        ]),
    )
    .commented(format!(
        "{decide}; as written one user runs each of the {flows} flows once"
    ))
}

/// What the default scenario changes on the target: the spec's server is often production.
fn report_unsafe(ops: &[Op], target: &str, report: &mut Report) {
    let count = |m: &[&str]| ops.iter().filter(|o| m.contains(&o.method)).count();
    let deletes = count(&["delete"]);
    let writes = count(&["post", "put", "patch"]);
    if deletes + writes > 0 {
        report.did(format!(
            "the scenario sends {deletes} DELETE and {writes} POST/PUT/PATCH step(s), which change or delete data at {target}: point `target:` at a test system, or remove those steps"
        ));
    }
}

/// A `$ref` that names nothing in the spec (or another file, which is not read) is an error
/// naming it and where it stands.
fn refuse_unresolved_refs(spec: &Value, file: &str, lines: &Lines) -> Result<(), ImportError> {
    let unresolved = schema::unresolved_refs(spec);
    let Some((at, r)) = unresolved.first() else {
        return Ok(());
    };
    let line = lines
        .find_text(r)
        .map(|l| format!("line {l}: "))
        .unwrap_or_default();
    let more = match unresolved.len() {
        1 => String::new(),
        n => format!(" (and {} more)", n - 1),
    };
    let fix = if r.starts_with('#') {
        "define it or correct the reference"
    } else {
        "references to other files are not followed: bundle the spec into one file first (e.g. `redocly bundle` or `swagger-cli bundle`)"
    };
    Err(ImportError::invalid(
        file,
        format!("{line}`$ref: {r}` at {at} names nothing in the spec{more}; {fix}"),
    ))
}

/// The spec as JSON, refused with a pointer to the right importer when it is not OpenAPI 3.
fn read_spec(source: &str, file: &str) -> Result<Value, ImportError> {
    let spec = to_json(&load::parse(source, file, FIX)?);
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
    Ok(spec)
}

/// The operations of each flow, by index into `ops`: one flow per operation, or one per tag,
/// in the order the tags are declared (then first use).
fn flow_groups(spec: &Value, ops: &[Op], per_operation: bool) -> Vec<(String, Vec<usize>)> {
    let mut groups: Vec<(String, Vec<usize>)> = Vec::new();
    if per_operation {
        for (i, o) in ops.iter().enumerate() {
            let fname =
                o.id.clone()
                    .unwrap_or_else(|| format!("{} {}", o.method.to_ascii_uppercase(), o.path));
            groups.push((fname, vec![i]));
        }
        unique_names(&mut groups);
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
            producers_first(spec, ops, v);
        }
    }
    groups
}

/// Flow names made unique (a flow name is a key of the scenario): the second `createItem`
/// becomes `createItem 2`. OpenAPI requires operationIds be unique; real specs repeat them.
fn unique_names(groups: &mut [(String, Vec<usize>)]) {
    let mut seen: std::collections::HashSet<String> = std::collections::HashSet::new();
    for (name, _) in groups.iter_mut() {
        let mut candidate = name.clone();
        let mut n = 1;
        while !seen.insert(candidate.clone()) {
            n += 1;
            candidate = format!("{name} {n}");
        }
        *name = candidate;
    }
}

/// Each operation after those whose response links give it a parameter, the order otherwise
/// kept: a capture is made before the step that uses it (`GET /users/{name}` links its
/// `username` to `GET /repositories/{username}`, which sorts first). In a cycle of links the
/// earliest operation goes first.
fn producers_first(spec: &Value, ops: &[Op], group: &mut Vec<usize>) {
    let targets: Vec<Vec<String>> = group
        .iter()
        .map(|&i| links(spec, ops[i].op).into_iter().map(|l| l.0).collect())
        .collect();
    // Per position in the group, the positions of the operations that link to it.
    let fed_by: Vec<Vec<usize>> = group
        .iter()
        .map(|&i| {
            let id = ops[i].id.as_deref();
            (0..group.len())
                .filter(|&from| {
                    ops[group[from]].id.as_deref() != id
                        && id.is_some_and(|id| targets[from].iter().any(|t| t == id))
                })
                .collect()
        })
        .collect();
    let mut placed = vec![false; group.len()];
    let mut order = Vec::with_capacity(group.len());
    while order.len() < group.len() {
        let ready = |p: usize| !placed[p] && fed_by[p].iter().all(|&f| placed[f]);
        let Some(next) = (0..group.len())
            .find(|&p| ready(p))
            .or_else(|| (0..group.len()).find(|&p| !placed[p]))
        else {
            break;
        };
        placed[next] = true;
        order.push(group[next]);
    }
    *group = order;
}
