//! Writes a lowered k6 script as the scenario document: `target:` (a base-URL constant, or
//! the origin every request shares), `defaults:` (what every request sends alike), `data:`,
//! `thresholds:` and the one flow's steps, and the report lines that describe them.
//! The walk that produces the requests and steps is `flow/`; the options are `options.rs`.

use super::data::DataSet;
use super::flow::Step;
use super::request::{Body, Request};
use super::values::Scope;
use crate::report::{Correlation, Report};
use crate::yaml::{Entry, Item, Node};

/// `target:`: the script's base URL constant, a placeholder to decide when the script reads it
/// from the environment, else the origin every request shares (taken off their URLs).
pub(super) fn target(
    scope: &Scope,
    base_env: Option<&str>,
    requests: &mut [Request],
) -> Option<Entry> {
    match (&scope.target, base_env) {
        (Some(t), _) => Some(Entry::new("target", Node::str(t.clone()))),
        (None, Some(env)) => Some(
            Entry::new("target", Node::str("http://127.0.0.1:8080"))
                .commented(format!("decide: the script reads its base URL from __ENV.{env}; write it here (or run with --target)")),
        ),
        (None, None) => common_origin(requests).map(|t| Entry::new("target", Node::str(t))),
    }
}

/// `data:`: each SharedArray as a data set, picked as the script indexes it.
pub(super) fn data(data_sets: &[DataSet], scope: &Scope, report: &mut Report) -> Option<Entry> {
    if data_sets.is_empty() {
        return None;
    }
    let mut entries = Vec::new();
    for d in data_sets {
        let note = scope.picks.iter().find(|p| p.set == d.name);
        let pick = note.map(|p| p.pick).unwrap_or("sequential");
        let (node, mut comments) = d.node(pick);
        if let Some(n) = note.and_then(|p| p.note.clone()) {
            comments.push(n);
        }
        report.did(format!(
            "`{}` ({}) became the data set `{}` (pick {pick})",
            d.name,
            d.describe(),
            d.name
        ));
        entries.push(Entry {
            comments,
            key: d.name.clone(),
            value: node,
        });
    }
    Some(Entry::new("data", Node::Map(entries)))
}

/// `thresholds:`, with comments on those that could not be converted.
pub(super) fn thresholds(thresholds: &[String], comments: &[String]) -> Option<Entry> {
    if thresholds.is_empty() && comments.is_empty() {
        return None;
    }
    let mut e = Entry::new("thresholds", Node::seq(thresholds.iter().map(Node::str)));
    e.comments = comments.to_vec();
    Some(e)
}

/// `flows:`: the one flow, named `flow_name`, its steps written in order.
pub(super) fn flows(
    flow_name: &str,
    steps: &[Step],
    requests: &[Request],
    comments: Vec<String>,
) -> Entry {
    let step_items: Vec<Item> = steps.iter().map(|s| step_node(s, requests)).collect();
    let flow = Item {
        comments: Vec::new(),
        value: Node::map([
            ("name", Node::str(flow_name.to_string())),
            ("steps", Node::Seq(step_items)),
        ]),
    };
    let mut flows = Entry::new("flows", Node::Seq(vec![flow]));
    flows.comments = comments;
    flows
}

/// With no base URL constant: the origin every absolute URL shares becomes the target.
fn common_origin(requests: &mut [Request]) -> Option<String> {
    let origin = |u: &str| -> Option<String> {
        let rest = u
            .strip_prefix("http://")
            .or_else(|| u.strip_prefix("https://"))?;
        let host = rest.split('/').next()?;
        if host.contains("{{") {
            return None;
        }
        Some(u[..u.len() - rest.len() + host.len()].to_string())
    };
    let first = origin(&requests.first()?.url)?;
    if !requests
        .iter()
        .all(|r| origin(&r.url).as_deref() == Some(&first))
    {
        return None;
    }
    for r in requests.iter_mut() {
        let rest = r.url[first.len()..].to_string();
        r.url = if rest.is_empty() { "/".into() } else { rest };
    }
    Some(first)
}

/// Headers every request sends with the same value, and a timeout all share, become
/// `defaults:` (taken off the steps).
pub(super) fn defaults(requests: &mut [Request], user_agent: Option<String>) -> Vec<Entry> {
    let mut out = Vec::new();
    if requests.len() >= 2 {
        if let Some(t) = requests[0].timeout.clone() {
            if requests.iter().all(|r| r.timeout.as_deref() == Some(&t)) {
                out.push(Entry::new("timeout", Node::raw(t)));
                for r in requests.iter_mut() {
                    r.timeout = None;
                }
            }
        }
    }
    let mut common: Vec<(String, String)> = Vec::new();
    if requests.len() >= 2 {
        for (k, v) in requests[0].headers.clone() {
            if requests.iter().all(|r| {
                r.headers
                    .iter()
                    .any(|(k2, v2)| k2.eq_ignore_ascii_case(&k) && *v2 == v)
            }) {
                common.push((k, v));
            }
        }
        for r in requests.iter_mut() {
            r.headers
                .retain(|(k, _)| !common.iter().any(|(c, _)| c.eq_ignore_ascii_case(k)));
        }
    }
    if let Some(ua) = user_agent {
        common.push(("User-Agent".into(), ua));
    }
    if !common.is_empty() {
        out.push(Entry::new(
            "headers",
            Node::map(common.into_iter().map(|(k, v)| (k, Node::str(v)))),
        ));
    }
    out
}

/// The report's correlations: each capture and the later steps that send it.
pub(super) fn correlations(requests: &[Request], report: &mut Report) {
    for (i, r) in requests.iter().enumerate() {
        for (var, path) in &r.captures {
            let needle = format!("{{{{ {var} }}}}");
            let mut uses = Vec::new();
            for later in &requests[i + 1..] {
                let step = step_name(later);
                if later.url.contains(&needle) {
                    uses.push(format!("`{step}` URL"));
                }
                for (k, v) in &later.headers {
                    if v.contains(&needle) {
                        uses.push(format!("`{step}` header {k}"));
                    }
                }
                let in_body = match &later.body {
                    Some(Body::Json(j)) => j.to_string().contains(&needle),
                    Some(Body::Text(t)) => t.contains(&needle),
                    Some(Body::Form(f)) => f.iter().any(|(_, v)| v.contains(&needle)),
                    None => false,
                };
                if in_body {
                    uses.push(format!("`{step}` body"));
                }
            }
            if uses.is_empty() {
                uses.push("no later request (the script reads it)".into());
            }
            report.correlations.push(Correlation {
                variable: var.clone(),
                step: step_name(r),
                capture: path.clone(),
                uses,
            });
        }
    }
}

/// Unnamed requests by their full URL (before `target` takes the origin off), for
/// [`thresholds_on_urls`].
pub(super) fn unnamed_urls(requests: &[Request]) -> Vec<(usize, String)> {
    requests
        .iter()
        .enumerate()
        .filter(|(_, r)| r.name.is_none())
        .map(|(i, r)| (i, r.url.clone()))
        .collect()
}

/// k6 tags a request's `name` with its URL unless the script names it, so a threshold on
/// `{name:http://host/post}` is on the step that requests that URL, which the scenario names
/// by method and path (`step.POST /post.…`).
pub(super) fn thresholds_on_urls(
    thresholds: &[String],
    urls: &[(usize, String)],
    requests: &[Request],
) -> Vec<String> {
    thresholds
        .iter()
        .map(|t| {
            let Some(rest) = t.strip_prefix("step.") else {
                return t.clone();
            };
            urls.iter()
                .find(|(_, u)| {
                    rest.strip_prefix(u.as_str())
                        .is_some_and(|r| r.starts_with('.'))
                })
                .map(|(i, u)| format!("step.{}{}", step_name(&requests[*i]), &rest[u.len()..]))
                .unwrap_or_else(|| t.clone())
        })
        .collect()
}

fn step_name(r: &Request) -> String {
    r.name
        .clone()
        .unwrap_or_else(|| crate::names::step_name(r.method, &r.url))
}

pub(super) fn count(steps: &[Step]) -> (usize, usize) {
    steps.iter().fold((0, 0), |(r, t), s| match s {
        Step::Request(_) => (r + 1, t),
        Step::Think { .. } => (r, t + 1),
        Step::Once { steps, .. } | Step::Loop { steps, .. } => {
            let (a, b) = count(steps);
            (r + a, t + b)
        }
    })
}

fn step_node(s: &Step, requests: &[Request]) -> Item {
    match s {
        Step::Request(i) => request_node(&requests[*i]),
        Step::Think { value, comments } => Item {
            comments: comments.clone(),
            value: Node::map([("think", Node::raw(value.clone()))]),
        },
        Step::Loop {
            count,
            steps,
            comments,
        } => Item {
            comments: comments.clone(),
            value: Node::map([(
                "loop",
                Node::map([
                    ("count", Node::raw(count.to_string())),
                    (
                        "steps",
                        Node::Seq(steps.iter().map(|s| step_node(s, requests)).collect()),
                    ),
                ]),
            )]),
        },
        Step::Once { steps, comments } => Item {
            comments: comments.clone(),
            value: Node::map([(
                "once",
                Node::Seq(steps.iter().map(|s| step_node(s, requests)).collect()),
            )]),
        },
    }
}

fn request_node(r: &Request) -> Item {
    let mut m = vec![Entry::new("name", Node::str(step_name(r)))];
    if let Some(g) = &r.group {
        m.push(Entry::new("group", Node::str(g.clone())));
    }
    m.push(Entry::new(r.method, Node::str(r.url.clone())));
    if !r.headers.is_empty() {
        m.push(Entry::new(
            "headers",
            Node::map(
                r.headers
                    .iter()
                    .map(|(k, v)| (k.clone(), Node::str(v.clone()))),
            ),
        ));
    }
    match &r.body {
        Some(Body::Json(j)) => m.push(Entry::new("json", Node::json(j))),
        Some(Body::Text(t)) => m.push(Entry::new("body", Node::str(t.clone()))),
        Some(Body::Form(f)) => m.push(Entry::new(
            "form",
            Node::map(f.iter().map(|(k, v)| (k.clone(), Node::str(v.clone())))),
        )),
        None => {}
    }
    if let Some(t) = &r.timeout {
        m.push(Entry::new("timeout", Node::raw(t.clone())));
    }
    let c = &r.checks;
    let mut check = Vec::new();
    match c.status.as_slice() {
        [] => {}
        [one] => check.push(Entry::new("status", Node::raw(one.to_string()))),
        many => check.push(Entry::new(
            "status",
            Node::seq(many.iter().map(|s| Node::raw(s.to_string()))),
        )),
    }
    if !c.json.is_empty() {
        check.push(Entry::new(
            "json",
            Node::map(c.json.iter().map(|(p, v)| (p.clone(), Node::json(v)))),
        ));
    }
    if let Some(b) = &c.body_contains {
        check.push(Entry::new("body_contains", Node::str(b.clone())));
    }
    if !c.header.is_empty() {
        check.push(Entry::new(
            "header",
            Node::map(
                c.header
                    .iter()
                    .map(|(k, v)| (k.clone(), Node::str(v.clone()))),
            ),
        ));
    }
    if let Some(l) = &c.max_latency {
        check.push(Entry::new("max_latency", Node::raw(l.clone())));
    }
    if !check.is_empty() {
        m.push(Entry::new("check", Node::Map(check)));
    }
    if !r.captures.is_empty() {
        m.push(Entry::new(
            "capture",
            Node::map(
                r.captures
                    .iter()
                    .map(|(v, p)| (v.clone(), Node::str(p.clone()))),
            ),
        ));
    }
    Item {
        comments: r.comments.clone(),
        value: Node::Map(m),
    }
}
