//! `loadlab import k6`: a k6 script (JavaScript) becomes a scenario. The script is parsed with
//! a real JavaScript parser (`parse.rs`), lowered to a small tree (`js.rs`), and walked: its
//! top level here, its `options` into the load and thresholds (`options.rs`), its default
//! function into the flow (`flow/`); `document.rs` writes the result. Every construct
//! outside the common subset is a `not converted` comment in the output and a report entry
//! with its line.

mod captures;
mod checks;
mod data;
mod document;
mod duration;
mod executors;
mod flow;
mod js;
mod modules;
mod nesting;
mod options;
mod parse;
mod request;
mod rows;
mod thresholds;
mod values;
mod withheld;

use crate::error::ImportError;
use crate::report::Report;
use crate::yaml::{Document, Entry, Node};
use data::DataSet;
use flow::{Step, Walker};
use js::{Expr, Stmt};
use request::Request;
use values::{Binding, Scope};

/// Modules whose imports the importer understands (their functions are converted or reported
/// where they are used).
const KNOWN_MODULES: &[&str] = &["k6", "k6/http", "k6/data", "k6/metrics", "k6/execution"];

/// The stack the parser and the walk run on: recursion depth is bounded by [`nesting`], and
/// this leaves room for the deepest script it lets through whatever thread calls the import.
const STACK_BYTES: usize = 64 * 1024 * 1024;

pub fn import(source: &str, file: &str, name: &str) -> Result<(Document, Report), ImportError> {
    refuse_json(source, file)?;
    if let Err((line, what)) = nesting::check(source) {
        return Err(ImportError::invalid(
            file,
            format!("{line}: {what}; the importer reads scripts as people write them: flatten the nesting or import the part that matters"),
        ));
    }
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name("k6-import".into())
            .stack_size(STACK_BYTES)
            .spawn_scoped(scope, || import_checked(source, file, name))
            .map_err(|e| ImportError::invalid(file, format!("cannot start the import: {e}")))?
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })
}

fn import_checked(source: &str, file: &str, name: &str) -> Result<(Document, Report), ImportError> {
    let allocator = parse::Allocator::default();
    let program = parse::parse(&allocator, source, file)?;
    refuse_without_k6(&program, file)?;
    let mut report = Report::default();
    let program = modules::with_local_modules(program, file, &allocator, &mut report)?;
    let mut scope = Scope::default();
    let mut walked = walk(&program, &mut scope, &mut report, file)?;
    for (set, field) in &scope.set_fields {
        for d in walked.data_sets.iter_mut().filter(|d| d.name == *set) {
            if let data::Source::Json {
                field: f @ None, ..
            } = &mut d.source
            {
                *f = Some(field.clone());
            }
        }
    }
    add_inline_captures(&mut scope, &mut walked.requests);
    refuse_without_requests(&walked.requests, &report, file)?;
    let root = scenario_root(walked, &scope, name, file, &mut report);
    for v in &scope.env {
        report.variable(v, format!("read by the script as __ENV.{v}"));
    }
    for (v, d) in &scope.env_defaults {
        report.did(format!(
            "__ENV.{v} has the default `{d}` in the script: the scenario uses the default"
        ));
    }
    report.unsupported.sort_by_key(|u| u.line);
    // A helper called from several places (a module's `checkStatus`) is walked at each call:
    // what it cannot convert is said once.
    report
        .unsupported
        .dedup_by(|a, b| a.line == b.line && a.what == b.what);
    let header = vec![crate::scaffold::imported_from(file, "k6", "")];
    Ok((Document { header, root }, report))
}

/// What the walk of the script gave, kept apart from the scope and report it borrowed.
struct Walked {
    /// The environment variable the base URL is read from, when it has no default.
    base_env: Option<String>,
    opts: options::Options,
    /// The name of the function that became the flow.
    fname: String,
    steps: Vec<Step>,
    /// The top level's comments, then those left after the flow's last step.
    comments: Vec<String>,
    requests: Vec<Request>,
    data_sets: Vec<DataSet>,
}

/// Walks the top level, the options, then the function the chosen scenario runs (else the
/// default one) into steps.
fn walk(
    program: &[Stmt],
    scope: &mut Scope,
    report: &mut Report,
    file: &str,
) -> Result<Walked, ImportError> {
    let http = k6_imports(program, scope);
    let mut walker = Walker::new(scope, report, http);
    let top = top_level(program, &mut walker);
    let top_comments = walker.leftover();
    let opts = options::convert(
        top.options.as_ref().map(|(e, l)| (e, *l)),
        walker.scope,
        walker.report,
    )
    .map_err(|what| ImportError::invalid(file, what))?;
    let chosen = match &opts.exec {
        Some(f) => top.functions.iter().find(|(n, _, _)| n == f).cloned(),
        None => top.default_fn.clone(),
    };
    let Some((fname, body, _)) = chosen.or(top.default_fn) else {
        return Err(ImportError::invalid(
            file,
            "the script has no `export default function` (nor a scenario's `exec` function) to convert",
        ));
    };
    let steps = walker.steps(&body, None);
    let mut comments = top_comments;
    comments.extend(walker.leftover());
    Ok(Walked {
        base_env: top.base_env,
        opts,
        fname,
        steps,
        comments,
        requests: std::mem::take(&mut walker.requests),
        data_sets: std::mem::take(&mut walker.data),
    })
}

/// Response values used in place (not assigned to a name) are captured by the requests that
/// gave them.
fn add_inline_captures(scope: &mut Scope, requests: &mut [Request]) {
    for (step, var, path) in std::mem::take(&mut scope.captures) {
        if let Some(r) = requests.get_mut(step) {
            if !r.captures.iter().any(|(v, _)| *v == var) {
                r.captures.push((var, path));
            }
        }
    }
}

/// A script none of whose requests converts is refused, with what was not converted.
fn refuse_without_requests(
    requests: &[Request],
    report: &Report,
    file: &str,
) -> Result<(), ImportError> {
    if !requests.is_empty() {
        return Ok(());
    }
    Err(ImportError::invalid(
        file,
        format!(
            "no request of the script could be converted{}",
            if report.unsupported.is_empty() {
                String::new()
            } else {
                format!(":\n{report}")
            }
        ),
    ))
}

/// The scenario's entries, from the target to the one flow.
fn scenario_root(
    walked: Walked,
    scope: &Scope,
    name: &str,
    file: &str,
    report: &mut Report,
) -> Vec<Entry> {
    let Walked {
        base_env,
        opts,
        fname,
        steps,
        comments,
        mut requests,
        mut data_sets,
    } = walked;
    let mut root = vec![Entry::new("name", Node::str(name))];
    data::urls_from_sets(
        &mut data_sets,
        &mut requests,
        scope.target.as_deref(),
        report,
    );
    data::drop_unused_inline(&mut data_sets, &requests, report);
    data::inline_json_files(&mut data_sets, file, report);
    // Before the defaults: a header every request sends may read a set of credentials.
    withheld::withhold(&mut data_sets, &mut requests, report);
    let urls = document::unnamed_urls(&requests);
    root.extend(document::target(scope, base_env.as_deref(), &mut requests));
    let thresholds = document::thresholds_on_urls(&opts.thresholds, &urls, &requests);
    let defaults = document::defaults(&mut requests, opts.user_agent.clone());
    if !defaults.is_empty() {
        root.push(Entry::new("defaults", Node::Map(defaults)));
    }
    root.push(opts.load);
    root.extend(opts.extra);
    root.extend(document::data(&data_sets, scope, report));
    root.extend(document::thresholds(&thresholds, &opts.threshold_comments));
    document::correlations(&requests, report);
    let flow_name = flow_name(&fname, opts.scenario.as_deref(), name);
    let counts = document::count(&steps);
    root.push(document::flows(&flow_name, &steps, &requests, comments));
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
    root
}

/// An anonymous default function is named after the scenario it ran in, else the file.
fn flow_name(fname: &str, scenario: Option<&str>, name: &str) -> String {
    match (fname, scenario) {
        ("default", Some(s)) => s.to_string(),
        ("default", None) => name.to_string(),
        (f, _) => words(f),
    }
}

/// A JSON file given as a k6 script: refused, naming the importer it is for.
fn refuse_json(source: &str, file: &str) -> Result<(), ImportError> {
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
    Ok(())
}

/// A script that imports nothing from k6 and has no default function is not a k6 script.
fn refuse_without_k6(program: &[Stmt], file: &str) -> Result<(), ImportError> {
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
    Ok(())
}

/// The local name of k6/http's default import (`http` unless renamed); k6/execution's is
/// recorded in `scope`.
fn k6_imports(program: &[Stmt], scope: &mut Scope) -> String {
    let mut http = "http".to_string();
    for s in program {
        if let Stmt::Import { names, source, .. } = s {
            if source == "k6/http" {
                if let Some((local, _)) = names.iter().find(|(_, i)| i == "default" || i == "*") {
                    http = local.clone();
                }
            }
            if source == "k6/execution" {
                for (local, imported) in names {
                    if imported == "default" || imported == "*" {
                        scope.execution = Some(local.clone());
                    } else {
                        scope
                            .execution_names
                            .push((local.clone(), imported.clone()));
                    }
                }
            }
        }
    }
    http
}

/// What the script's top level declares for the conversion to use.
struct TopLevel {
    /// `export const options = {...}` and its line.
    options: Option<(Expr, usize)>,
    /// Named functions, any of which a scenario's `exec` may run: `(name, body, line)`.
    functions: Vec<(String, Vec<Stmt>, usize)>,
    default_fn: Option<(String, Vec<Stmt>, usize)>,
    /// The environment variable the base URL is read from, when it has no default.
    base_env: Option<String>,
}

/// Walks the top level: imports of modules not converted, constants (a base URL becomes the
/// target), functions, and the options; any other statement is reported.
fn top_level(program: &[Stmt], walker: &mut Walker) -> TopLevel {
    let mut top = TopLevel {
        options: None,
        functions: Vec::new(),
        default_fn: None,
        base_env: None,
    };
    let mut top_steps = Vec::new();
    for s in program {
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
                Some(v) if *exported && name == "options" => top.options = Some((v.clone(), *line)),
                Some(v) => {
                    if let Some(env) = base_url(walker.scope, name, v, &mut top.base_env) {
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
                    top.default_fn = Some((name.clone(), body.clone(), *line));
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
                    top.functions.push((name.clone(), body.clone(), *line));
                }
            }
            // `globalThis.pauseMin = 5` (or `x = 5` of an earlier `let x`): a global value.
            Stmt::Assign { name, value, line } => {
                walker.assign(name, value, *line, None, &mut top_steps)
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
    top
}

fn module_hint(source: &str) -> &'static str {
    if source.ends_with("/ws") || source.contains("websockets") {
        " (WebSocket scripts: write loadlab's WebSocket steps by hand, docs/scenario.md)"
    } else if source.contains("browser") {
        " (a browser test: loadlab sends HTTP requests)"
    } else if source.contains("grpc") {
        " (gRPC calls: write loadlab's gRPC steps by hand, docs/scenario.md)"
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
