//! `loadlab import k6`: a k6 script (JavaScript) becomes a scenario. The script is parsed with
//! a real JavaScript parser (`parse.rs`), lowered to a small tree (`js.rs`), and walked: its
//! `options` give the load and thresholds, its default function the flow. Every construct
//! outside the common subset is a `not converted` comment in the output and a report entry
//! with its line.

mod checks;
mod data;
mod flow;
mod js;
mod options;
mod parse;
mod request;
mod thresholds;
mod values;

use crate::error::ImportError;
use crate::report::{Correlation, Report};
use crate::yaml::{Document, Entry, Item, Node};
use flow::{Step, Walker};
use js::{Expr, Stmt};
use request::{Body, Request};
use values::{Binding, Scope};

/// Modules whose imports the importer understands (their functions are converted or reported
/// where they are used).
const KNOWN_MODULES: &[&str] = &["k6", "k6/http", "k6/data", "k6/metrics", "k6/execution"];

pub fn import(source: &str, file: &str, name: &str) -> Result<(Document, Report), ImportError> {
    if let Ok(v) = serde_json::from_str::<serde_json::Value>(source.trim_start_matches('\u{feff}'))
    {
        let fix = if v.get("log").is_some() {
            "it is a HAR recording: use `loadlab import har`"
        } else if v.get("openapi").is_some() || v.get("swagger").is_some() {
            "it is an OpenAPI spec: use `loadlab import openapi`"
        } else {
            "give a k6 script (JavaScript)"
        };
        return Err(ImportError::WrongKind {
            file: file.into(),
            expected: "a k6 script",
            why: "it is JSON".into(),
            fix: fix.into(),
        });
    }
    let allocator = parse::Allocator::default();
    let program = parse::parse(&allocator, source, file)?;
    let mut report = Report::default();
    let mut scope = Scope::default();
    let mut options_expr: Option<(Expr, usize)> = None;
    let mut functions: Vec<(String, Vec<Stmt>, usize)> = Vec::new();
    let mut default_fn: Option<(String, Vec<Stmt>, usize)> = None;
    let mut http = "http".to_string();
    let mut base_env: Option<String> = None;
    let has_k6 = program
        .iter()
        .any(|s| matches!(s, Stmt::Import { source, .. } if source.starts_with("k6")));
    if !has_k6
        && !program
            .iter()
            .any(|s| matches!(s, Stmt::Function { default: true, .. }))
    {
        return Err(ImportError::WrongKind {
            file: file.into(),
            expected: "a k6 script",
            why: "it imports nothing from k6 and has no `export default function`".into(),
            fix: "give a k6 script: JavaScript with `import http from 'k6/http'` and `export default function () { ... }`".into(),
        });
    }
    for s in &program {
        if let Stmt::Import { names, source, .. } = s {
            if source == "k6/http" {
                if let Some((local, _)) = names.iter().find(|(_, i)| i == "default" || i == "*") {
                    http = local.clone();
                }
            }
            if source == "k6/execution" {
                scope.execution = names.first().map(|(l, _)| l.clone());
            }
        }
    }
    let mut top_steps = Vec::new();
    let mut walker = Walker::new(&mut scope, &mut report, http);
    for s in &program {
        match s {
            Stmt::Import { source, line, .. } => {
                let jslib = source.starts_with("https://jslib.k6.io/k6-utils/")
                    || source.starts_with("https://jslib.k6.io/papaparse/");
                if !KNOWN_MODULES.contains(&source.as_str()) && !jslib {
                    walker.unsupported(
                        *line,
                        format!("module `{source}`: not converted{}", module_hint(source)),
                    );
                }
            }
            Stmt::Var {
                name,
                exported,
                value,
                line,
            } => match value {
                Some(v) if *exported && name == "options" => {
                    options_expr = Some((v.clone(), *line))
                }
                Some(v) => {
                    if let Some(env) = base_url(walker.scope, name, v, &mut base_env) {
                        walker.report.did(env);
                    } else {
                        walker.assign(name, v, *line, None, &mut top_steps);
                    }
                }
                None => walker.declared.push(name.clone()),
            },
            Stmt::Function {
                name,
                params,
                body,
                default,
                exported,
                line,
            } => {
                if *default {
                    default_fn = Some((name.clone(), body.clone(), *line));
                } else if *exported
                    && ["setup", "teardown", "handleSummary"].contains(&name.as_str())
                {
                    let why = match name.as_str() {
                        "setup" => "runs once before the test; loadlab has no such stage (a `once:` step runs once per VU)",
                        "teardown" => "runs once after the test; loadlab has no such stage",
                        _ => "loadlab writes its own summary and reports",
                    };
                    walker.unsupported(*line, format!("`{name}()`: {why}; left out"));
                } else {
                    walker.function(name, params, body, *line);
                    functions.push((name.clone(), body.clone(), *line));
                }
            }
            other => walker.unsupported(
                other.line(),
                "a statement outside the default function: not converted".to_string(),
            ),
        }
    }
    if !top_steps.is_empty() {
        walker.unsupported(
            0,
            "requests outside the default function (k6 refuses them in the init context)"
                .to_string(),
        );
    }
    let top_comments = walker.leftover();
    let opts = options::convert(
        options_expr.as_ref().map(|(e, l)| (e, *l)),
        walker.scope,
        walker.report,
    );
    let chosen = match &opts.exec {
        Some(f) => functions.iter().find(|(n, _, _)| n == f).cloned(),
        None => default_fn.clone(),
    };
    let Some((fname, body, _)) = chosen.or(default_fn) else {
        return Err(ImportError::invalid(
            file,
            "the script has no `export default function` (nor a scenario's `exec` function) to convert",
        ));
    };
    let steps = walker.steps(&body, None);
    let leftover = walker.leftover();
    let mut requests = std::mem::take(&mut walker.requests);
    let data_sets = std::mem::take(&mut walker.data);
    drop(walker);
    for (step, var, path) in std::mem::take(&mut scope.captures) {
        if let Some(r) = requests.get_mut(step) {
            if !r.captures.iter().any(|(v, _)| *v == var) {
                r.captures.push((var, path));
            }
        }
    }
    if requests.is_empty() {
        return Err(ImportError::invalid(
            file,
            format!(
                "no request of the script could be converted{}",
                if report.unsupported.is_empty() {
                    String::new()
                } else {
                    format!(":\n{report}")
                }
            ),
        ));
    }

    // The document.
    let mut root = vec![Entry::new("name", Node::str(name))];
    let target = match (&scope.target, &base_env) {
        (Some(t), _) => Some(Entry::new("target", Node::str(t.clone()))),
        (None, Some(env)) => Some(
            Entry::new("target", Node::str("http://127.0.0.1:8080"))
                .commented(format!("decide: the script reads its base URL from __ENV.{env}; write it here (or run with --target)")),
        ),
        (None, None) => common_origin(&mut requests).map(|t| Entry::new("target", Node::str(t))),
    };
    root.extend(target);
    let defaults = defaults(&mut requests, opts.user_agent.clone());
    if !defaults.is_empty() {
        root.push(Entry::new("defaults", Node::Map(defaults)));
    }
    root.push(opts.load);
    root.extend(opts.extra);
    if !data_sets.is_empty() {
        let mut entries = Vec::new();
        for d in &data_sets {
            let note = scope.picks.iter().find(|p| p.set == d.name);
            let pick = note.map(|p| p.pick).unwrap_or("sequential");
            let (node, mut comments) = d.node(pick);
            if let Some(n) = note.and_then(|p| p.note.clone()) {
                comments.push(n);
            }
            report.did(format!(
                "the SharedArray `{}` ({}) became the data set `{}` (pick {pick})",
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
        root.push(Entry::new("data", Node::Map(entries)));
    }
    if !opts.thresholds.is_empty() || !opts.threshold_comments.is_empty() {
        let mut e = Entry::new(
            "thresholds",
            Node::seq(opts.thresholds.iter().map(Node::str)),
        );
        e.comments = opts.threshold_comments.clone();
        root.push(e);
    }
    correlations(&requests, &mut report);
    // An anonymous default function is named after the scenario it ran in, else the file.
    let flow_name = match (fname.as_str(), &opts.scenario) {
        ("default", Some(s)) => s.clone(),
        ("default", None) => name.to_string(),
        (f, _) => words(f),
    };
    let counts = count(&steps);
    let mut flow_comments = leftover;
    flow_comments.splice(0..0, top_comments.clone());
    let step_items: Vec<Item> = steps.iter().map(|s| step_node(s, &requests)).collect();
    let flow = Item {
        comments: Vec::new(),
        value: Node::map([
            ("name", Node::str(flow_name.clone())),
            ("steps", Node::Seq(step_items)),
        ]),
    };
    let mut flows = Entry::new("flows", Node::Seq(vec![flow]));
    flows.comments = flow_comments;
    root.push(flows);
    report.did(format!(
        "the {} function became the flow `{flow_name}`: {} request step(s), {} think step(s)",
        if fname == "default" {
            "default".to_string()
        } else {
            format!("`{fname}`")
        },
        counts.0,
        counts.1
    ));
    for v in &scope.env {
        report.variable(v, format!("read by the script as __ENV.{v}"));
    }
    for (v, d) in &scope.env_defaults {
        report.did(format!(
            "__ENV.{v} has the default `{d}` in the script: the scenario uses the default"
        ));
    }
    report.unsupported.sort_by_key(|u| u.line);
    let header = vec![format!(
        "Imported from {} by `loadlab import k6`.",
        std::path::Path::new(file)
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_else(|| file.to_string())
    )];
    Ok((Document { header, root }, report))
}

fn module_hint(source: &str) -> &'static str {
    if source.contains("ws") || source.contains("websockets") {
        " (websockets: loadlab speaks HTTP)"
    } else if source.contains("browser") {
        " (a browser test: loadlab sends HTTP requests)"
    } else if source.contains("grpc") {
        " (gRPC: loadlab speaks HTTP)"
    } else {
        ""
    }
}

/// `const BASE_URL = __ENV.BASE_URL || 'http://…'` (or a literal URL): the target. The first
/// such constant is bound to the target; a report line says so.
fn base_url(
    scope: &mut Scope,
    name: &str,
    v: &Expr,
    base_env: &mut Option<String>,
) -> Option<String> {
    if scope.target.is_some() || base_env.is_some() {
        return None;
    }
    let is_url = |s: &str| s.starts_with("http://") || s.starts_with("https://");
    let (env, url) = match v {
        Expr::Binary { op, left, right } if op == "||" || op == "??" => {
            let env = values::env_name(left)?;
            let url = right.as_str().filter(|u| is_url(u))?;
            (Some(env), Some(url.to_string()))
        }
        other => match values::env_name(other) {
            Some(env)
                if name.to_ascii_uppercase().contains("URL")
                    || name.to_ascii_uppercase().contains("HOST") =>
            {
                (Some(env), None)
            }
            Some(_) => return None,
            None => (
                None,
                Some(other.as_str().filter(|u| is_url(u))?.to_string()),
            ),
        },
    };
    let url = url.map(|u| u.trim_end_matches('/').to_string());
    scope.bind(name, Binding::Target);
    match (env, url) {
        (Some(env), Some(url)) => {
            scope.target = Some(url.clone());
            Some(format!("`{name}` (__ENV.{env}, default {url}) became `target:` (change it there or with `loadlab run --target`)"))
        }
        (None, Some(url)) => {
            scope.target = Some(url.clone());
            Some(format!("`{name}` ({url}) became `target:`"))
        }
        (Some(env), None) => {
            *base_env = Some(env.clone());
            Some(format!(
                "`{name}` is read from __ENV.{env}: decide `target:`"
            ))
        }
        (None, None) => None,
    }
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
fn defaults(requests: &mut [Request], user_agent: Option<String>) -> Vec<Entry> {
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
fn correlations(requests: &[Request], report: &mut Report) {
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

fn step_name(r: &Request) -> String {
    r.name
        .clone()
        .unwrap_or_else(|| crate::names::step_name(r.method, &r.url))
}

fn count(steps: &[Step]) -> (usize, usize) {
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

/// `patientLookup` → `patient lookup`; `default` stays.
fn words(name: &str) -> String {
    crate::names::snake_case(name).replace('_', " ")
}

/// The variable a response value read in place is captured into: its last key.
pub(crate) fn capture_name(path: &str) -> String {
    let last = path
        .rsplit(['.', '['])
        .find(|p| !p.is_empty() && !p.ends_with(']') && *p != "$")
        .unwrap_or("value");
    crate::names::snake_case(last)
}

/// A number as people write it: `3`, `2.5`, `0.125`.
pub(crate) fn fmt_num(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{}", x as i64)
    } else {
        let s = format!("{x:.3}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}
