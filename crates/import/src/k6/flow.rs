//! The statements of k6's default function as steps: `http.*` calls become requests,
//! `check(res, ...)` their checks, `res.json(...)` read into a variable a capture, `sleep` a
//! think step, `group(name, fn)` the steps' group, `if (__ITER === 0) {...}` a `once:` block,
//! `for (let i = 0; i < N; i++) {...}` a `loop:` of N.
//! Any other statement is reported with its line and left as a comment before the next step.

use super::checks;
use super::data::DataSet;
use super::js::{Expr, Stmt};
use super::request::{self, Request};
use super::values::{Binding, Scope};
use crate::report::Report;

/// A step of the flow; requests are kept apart (`Walker::requests`) so that later statements
/// can add checks and captures to them.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    Request(usize),
    Think {
        value: String,
        comments: Vec<String>,
    },
    Once {
        steps: Vec<Step>,
        comments: Vec<String>,
    },
    Loop {
        count: u64,
        steps: Vec<Step>,
        comments: Vec<String>,
    },
}

pub struct Walker<'a> {
    pub scope: &'a mut Scope,
    pub report: &'a mut Report,
    pub requests: Vec<Request>,
    pub data: Vec<DataSet>,
    /// The local name of k6/http's default import.
    pub http: String,
    /// Names declared at the top without a value (`let token;`): `if (!token)` runs once.
    pub declared: Vec<String>,
    /// Comments waiting for the next step.
    pending: Vec<String>,
    /// Bindings made by assignments (`token = res.json('token')`): they outlive the block
    /// (a group's function, an `if`) that made them.
    assigned: Vec<(String, Binding)>,
    /// Helper functions of several statements: `(name, params, body)`, walked where they are
    /// called as a statement or given to `group` by name.
    procedures: Vec<(String, Vec<String>, Vec<Stmt>)>,
    /// The helpers being walked (a helper calling itself is not followed).
    calling: Vec<String>,
}

/// Deepest chain of helpers calling helpers that is followed.
const MAX_CALL_DEPTH: usize = 16;

impl<'a> Walker<'a> {
    pub fn new(scope: &'a mut Scope, report: &'a mut Report, http: String) -> Self {
        Walker {
            scope,
            report,
            requests: Vec::new(),
            data: Vec::new(),
            http,
            declared: Vec::new(),
            pending: Vec::new(),
            assigned: Vec::new(),
            procedures: Vec::new(),
            calling: Vec::new(),
        }
    }

    /// Comments left when the flow ended with no step after them.
    pub fn leftover(&mut self) -> Vec<String> {
        std::mem::take(&mut self.pending)
    }

    pub fn unsupported(&mut self, line: usize, what: impl Into<String>) {
        let what = what.into();
        self.pending
            .push(format!("not converted (line {line}): {what}"));
        self.report.unsupported(Some(line), what);
    }

    fn push(&mut self, out: &mut Vec<Step>, mut step: Step) {
        let pending = std::mem::take(&mut self.pending);
        match &mut step {
            Step::Request(i) => {
                let c = &mut self.requests[*i].comments;
                let mine = std::mem::take(c);
                c.extend(pending);
                c.extend(mine);
            }
            Step::Think { comments, .. }
            | Step::Once { comments, .. }
            | Step::Loop { comments, .. } => {
                let mine = std::mem::take(comments);
                comments.extend(pending);
                comments.extend(mine);
            }
        }
        out.push(step);
    }

    /// The steps of a function body.
    pub fn steps(&mut self, body: &[Stmt], group: Option<&str>) -> Vec<Step> {
        let mut out = Vec::new();
        for s in body {
            self.statement(s, group, &mut out);
        }
        out
    }

    fn statement(&mut self, s: &Stmt, group: Option<&str>, out: &mut Vec<Step>) {
        match s {
            Stmt::Var {
                name,
                value: Some(v),
                line,
                ..
            } => self.assign(name, v, *line, group, out),
            Stmt::Assign {
                name,
                value: v,
                line,
            } => {
                self.assign(name, v, *line, group, out);
                if let Some(b) = self.scope.lookup(name).cloned() {
                    self.assigned.push((name.clone(), b));
                }
            }
            Stmt::Var { value: None, .. } => {}
            Stmt::Expr { expr, line } => self.expression(expr, *line, group, out),
            Stmt::If {
                test,
                then,
                otherwise,
                line,
            } => {
                if otherwise.is_empty() && self.first_iteration(test) {
                    let steps = self.block(then, group);
                    self.push(
                        out,
                        Step::Once {
                            steps,
                            comments: vec![format!(
                                "`if ({})`: on the VU's first iteration only",
                                test.sketch()
                            )],
                        },
                    );
                } else {
                    self.unsupported(
                        *line,
                        format!(
                            "`if ({})`: loadlab steps have no conditions; its statements left out",
                            test.sketch()
                        ),
                    );
                }
            }
            Stmt::Function {
                name,
                params,
                body,
                line,
                ..
            } => self.function(name, params, body, *line),
            Stmt::Loop {
                count,
                var,
                body,
                line,
            } => {
                let mark = self.scope.mark();
                self.scope.bind(
                    var,
                    Binding::Opaque(format!(
                        "the loop counter (line {line}) has no loadlab value"
                    )),
                );
                let steps = self.block(body, group);
                self.scope.reset(mark);
                self.push(
                    out,
                    Step::Loop {
                        count: *count,
                        steps,
                        comments: Vec::new(),
                    },
                );
            }
            Stmt::ForOf {
                var,
                iterable,
                body,
                text,
                line,
            } => {
                let batch = match iterable {
                    Expr::Ident(n) => match self.scope.lookup(n) {
                        Some(Binding::Batch(steps)) => Some(steps.clone()),
                        _ => None,
                    },
                    _ => None,
                };
                let Some(steps) = batch else {
                    self.unsupported(*line, format!("`{text}`: not converted"));
                    return;
                };
                // Over a batch's responses: the body once per response, bound to it.
                for (_, step) in steps {
                    let mark = self.scope.mark();
                    self.scope.bind(var, Binding::Response(step));
                    for s in body {
                        self.statement(s, group, out);
                    }
                    self.scope.reset(mark);
                }
            }
            Stmt::Return { value: None, .. } => {}
            Stmt::Return { line, .. } => {
                self.unsupported(*line, "`return` of a value: not converted")
            }
            Stmt::Import { line, .. } => self.unsupported(*line, "an import inside a function"),
            Stmt::Other { text, line } => {
                self.unsupported(*line, format!("`{text}`: not converted"))
            }
        }
    }

    /// The steps of a block: its declarations end with it, its assignments do not.
    fn block(&mut self, body: &[Stmt], group: Option<&str>) -> Vec<Step> {
        let mark = self.scope.mark();
        let from = self.assigned.len();
        let steps = self.steps(body, group);
        self.scope.reset(mark);
        for (name, b) in &self.assigned[from..] {
            self.scope.bind(name, b.clone());
        }
        steps
    }

    /// `__ITER === 0`, `exec.vu.iterationInScenario == 0`, or `!token` for a name declared at the
    /// top without a value.
    fn first_iteration(&self, test: &Expr) -> bool {
        match test {
            Expr::Binary { op, left, right } if op == "===" || op == "==" => {
                let (v, n) = if right.as_num().is_some() {
                    (left, right)
                } else {
                    (right, left)
                };
                let exec = self
                    .scope
                    .execution
                    .clone()
                    .unwrap_or_else(|| "exec".into());
                n.as_num() == Some(0.0)
                    && v.dotted().is_some_and(|d| {
                        d == "__ITER" || d == format!("{exec}.vu.iterationInScenario")
                    })
            }
            Expr::Unary { op, arg } if op == "!" => {
                matches!(arg.as_ref(), Expr::Ident(n) if self.declared.contains(n))
            }
            _ => false,
        }
    }

    pub fn function(&mut self, name: &str, params: &[String], body: &[Stmt], line: usize) {
        match body {
            [Stmt::Return {
                value: Some(ret), ..
            }] => self.scope.bind(
                name,
                Binding::Function {
                    params: params.to_vec(),
                    ret: ret.clone(),
                },
            ),
            _ => {
                self.scope.bind(
                    name,
                    Binding::Opaque(format!(
                        "the helper function `{name}` (line {line}) is more than one `return`: its value cannot be followed"
                    )),
                );
                self.procedures.retain(|(n, ..)| n != name);
                self.procedures
                    .push((name.to_string(), params.to_vec(), body.to_vec()));
            }
        }
    }

    /// The steps of the helper `name` called with `args` (its parameters bound to them), in
    /// `group`; `None` when `name` is no helper of several statements, or recursion.
    fn call_procedure(
        &mut self,
        name: &str,
        args: &[Expr],
        line: usize,
        group: Option<&str>,
    ) -> Option<Vec<Step>> {
        let (_, params, body) = self.procedures.iter().find(|(n, ..)| n == name)?.clone();
        if self.calling.iter().any(|c| c == name) || self.calling.len() >= MAX_CALL_DEPTH {
            self.unsupported(
                line,
                format!("`{name}(…)`: a helper calling itself (or nested over {MAX_CALL_DEPTH} deep) is not followed"),
            );
            return Some(Vec::new());
        }
        self.calling.push(name.to_string());
        let mark = self.scope.mark();
        self.scope.bind_args(&params, args);
        let steps = self.steps(&body, group);
        self.scope.reset(mark);
        for (n, b) in self.assigned.clone() {
            self.scope.bind(&n, b);
        }
        self.calling.pop();
        Some(steps)
    }

    /// The http call `e` is, when it is one: `(function after "http.", args, line)`.
    fn http_call<'e>(&self, e: &'e Expr) -> Option<(String, &'e [Expr], usize)> {
        let (name, args, line) = e.as_call()?;
        let func = name.strip_prefix(&format!("{}.", self.http))?;
        Some((func.to_string(), args, line))
    }

    /// A request step from an http call; `None` (reported) when it cannot be converted.
    fn request(&mut self, e: &Expr, group: Option<&str>, out: &mut Vec<Step>) -> Option<usize> {
        let (func, args, line) = self.http_call(e)?;
        if !request::is_request(&func) {
            self.unsupported(line, format!("http.{func}: not converted"));
            return None;
        }
        match request::request(self.scope, &func, args, line, group, self.report) {
            Ok(r) => {
                self.requests.push(r);
                let i = self.requests.len() - 1;
                self.push(out, Step::Request(i));
                Some(i)
            }
            Err(why) => {
                self.unsupported(line, format!("http.{func}: {why}; the request is left out"));
                None
            }
        }
    }

    /// `http.batch([...])` or `http.batch({ name: ..., })`: each request a step of its own, in
    /// the order written. k6 sends them at once over parallel connections; loadlab sends a VU's
    /// steps one after another, so the report says so. `None` when it is not a batch.
    fn batch(
        &mut self,
        e: &Expr,
        group: Option<&str>,
        out: &mut Vec<Step>,
    ) -> Option<Vec<(Option<String>, usize)>> {
        let (func, args, line) = self.http_call(e)?;
        if func != "batch" {
            return None;
        }
        let items: Vec<(Option<String>, &Expr)> = match args.first() {
            Some(Expr::Array(items)) => items.iter().map(|i| (None, i)).collect(),
            Some(Expr::Object(props)) => props
                .iter()
                .filter(|p| p.key != super::js::SPREAD)
                .map(|p| (Some(p.key.clone()), &p.value))
                .collect(),
            _ => {
                self.unsupported(
                    line,
                    "http.batch: not a literal array or object of requests",
                );
                return Some(Vec::new());
            }
        };
        let mut steps = Vec::new();
        for (name, item) in items {
            // Each form as `http.request(method, url, body, params)` takes it.
            let call_args: Vec<Expr> = match item {
                Expr::Array(parts) => parts.clone(),
                Expr::Object(props) => ["method", "url", "body", "params"]
                    .iter()
                    .map(|k| {
                        props
                            .iter()
                            .find(|p| p.key == *k)
                            .map(|p| p.value.clone())
                            .unwrap_or(match *k {
                                "method" => Expr::Str("GET".into()),
                                _ => Expr::Null,
                            })
                    })
                    .collect(),
                url => vec![Expr::Str("GET".into()), url.clone()],
            };
            let call = Expr::Call {
                callee: Box::new(Expr::Member {
                    object: Box::new(Expr::Ident(self.http.clone())),
                    property: "request".into(),
                }),
                args: call_args,
                line,
            };
            if let Some(i) = self.request(&call, group, out) {
                steps.push((name, i));
            }
        }
        if steps.len() > 1 {
            self.report.did(format!(
                "line {line}: http.batch of {} requests: sent one after another by each VU (k6 sends them at once, over parallel connections)",
                steps.len()
            ));
        }
        Some(steps)
    }

    pub fn assign(
        &mut self,
        name: &str,
        v: &Expr,
        line: usize,
        group: Option<&str>,
        out: &mut Vec<Step>,
    ) {
        if let Some(steps) = self.batch(v, group, out) {
            self.scope.bind(name, Binding::Batch(steps));
            return;
        }
        if self.http_call(v).is_some() {
            if let Some(i) = self.request(v, group, out) {
                self.scope.bind(name, Binding::Response(i));
            } else {
                self.scope.bind(
                    name,
                    Binding::Opaque("a request that was not converted".into()),
                );
            }
            return;
        }
        if let Some((callee, args, l)) = v.as_call() {
            if callee == "check" {
                self.check(args, l, group, out);
                self.scope
                    .bind(name, Binding::Opaque("the result of a check".into()));
                return;
            }
        }
        if let Some((step, path)) = self.scope.response_value(v) {
            // loadlab's variables are snake_case: `appId` is captured as `app_id`.
            let var = crate::names::snake_case(name);
            let req = &mut self.requests[step];
            if !req.captures.iter().any(|(n, _)| *n == var) {
                req.captures.push((var.clone(), path));
            }
            self.scope.bind(name, Binding::Capture(var));
            return;
        }
        if let Some(set) = super::data::data_set(self.scope, name, v, line) {
            self.scope.bind(name, Binding::Data(set.name.clone()));
            self.data.push(set);
            return;
        }
        match self.scope.row_of(v) {
            Ok(Some(set)) => {
                self.scope.bind(name, Binding::Row(set));
                return;
            }
            Ok(None) => {}
            Err(why) => {
                self.unsupported(line, format!("`{name}`: {why}"));
                self.scope.bind(name, Binding::Opaque(why));
                return;
            }
        }
        if let Expr::New { callee, .. } = v {
            let class = callee.dotted().unwrap_or_default();
            let what = if ["Trend", "Counter", "Rate", "Gauge"].contains(&class.as_str()) {
                format!("custom metric `{name}` (new {class}): loadlab keeps its own metrics per step and group; left out")
            } else {
                format!("`{name} = new {class}(…)`: not converted")
            };
            self.unsupported(line, what.clone());
            self.scope.bind(name, Binding::Opaque(what));
            return;
        }
        if let Expr::Function { params, body, .. } = v {
            self.function(name, params, body, line);
            return;
        }
        self.scope.bind(name, Binding::Value(v.clone()));
    }

    fn expression(&mut self, e: &Expr, line: usize, group: Option<&str>, out: &mut Vec<Step>) {
        if self.batch(e, group, out).is_some() {
            return;
        }
        if self.http_call(e).is_some() {
            self.request(e, group, out);
            return;
        }
        let Some((callee, args, l)) = e.as_call() else {
            self.unsupported(line, format!("`{}`: not converted", e.sketch()));
            return;
        };
        match callee.as_str() {
            "check" => self.check(args, l, group, out),
            "sleep" => match args.first().map(|a| self.think(a)) {
                Some(Ok((value, note))) => {
                    let comments = note.into_iter().collect();
                    self.push(out, Step::Think { value, comments });
                }
                Some(Err(why)) => self.unsupported(l, format!("sleep: {why}")),
                None => {}
            },
            "group" => {
                let name = args.first().and_then(|a| self.scope.text(a).ok());
                let full = name.map(|name| match group {
                    Some(g) => format!("{g}::{name}"),
                    None => name,
                });
                let steps = match (full, args.get(1)) {
                    (Some(full), Some(Expr::Function { body, .. })) => {
                        Some(self.block(body, Some(&full)))
                    }
                    // `group('front page', frontPage)`: a function given by name.
                    (Some(full), Some(Expr::Ident(f))) => self
                        .call_procedure(f, &[], l, Some(&full))
                        .or_else(|| match self.scope.lookup(f).cloned() {
                            Some(Binding::Function { .. }) => Some(Vec::new()),
                            _ => None,
                        }),
                    _ => None,
                };
                match steps {
                    Some(steps) => {
                        for s in steps {
                            self.push(out, s);
                        }
                    }
                    None => self.unsupported(
                        l,
                        "group: not a literal name and a function (inline or a function of the script)",
                    ),
                }
            }
            name if !name.contains('.') && self.procedures.iter().any(|(n, ..)| n == name) => {
                if let Some(steps) = self.call_procedure(name, args, l, group) {
                    for s in steps {
                        self.push(out, s);
                    }
                }
            }
            _ => {
                let what = match callee.split('.').next().and_then(|n| self.scope.lookup(n)) {
                    Some(Binding::Opaque(why)) => format!("`{}`: {why}", e.sketch()),
                    _ => format!("`{}`: not converted", e.sketch()),
                };
                self.unsupported(l, what);
            }
        }
    }

    /// `check(res, {...})` or `check(http.get(...), {...})`.
    fn check(&mut self, args: &[Expr], line: usize, group: Option<&str>, out: &mut Vec<Step>) {
        let Some(target) = args.first() else { return };
        let step = match self.scope.response(target) {
            Some(s) => Some(s),
            None if self.http_call(target).is_some() => self.request(target, group, out),
            None => {
                self.unsupported(
                    line,
                    format!("check on `{}`: not a response", target.sketch()),
                );
                return;
            }
        };
        let (Some(step), Some(obj)) = (step, args.get(1)) else {
            return;
        };
        let mut req = self.requests[step].clone();
        checks::add(self.scope, obj, step, &mut req, line, self.report);
        self.requests[step] = req;
    }

    /// `sleep(1)`, `sleep(Math.random() * 2 + 1)`, `sleep(randomIntBetween(1, 3))`.
    fn think(&mut self, e: &Expr) -> Result<(String, Option<String>), String> {
        let secs = |n: f64| format!("{}s", crate::scaffold::fmt_num(n));
        if let Some(n) = self.number(e) {
            return Ok((secs(n), None));
        }
        if let Some((name, args, _)) = e.as_call() {
            if name == "randomIntBetween" && args.len() == 2 {
                if let (Some(a), Some(b)) = (self.number(&args[0]), self.number(&args[1])) {
                    return Ok((
                        format!("{}..{}", secs(a), secs(b)),
                        Some(
                            "k6 slept whole seconds between the two; loadlab's pause is uniform"
                                .into(),
                        ),
                    ));
                }
            }
        }
        if let Some((lo, hi)) = self.uniform(e) {
            return Ok((format!("{}..{}", secs(lo), secs(hi)), None));
        }
        Err(format!(
            "`{}` is not a number of seconds or a uniform random one",
            e.sketch()
        ))
    }

    fn number(&self, e: &Expr) -> Option<f64> {
        match e {
            Expr::Ident(n) => match self.scope.lookup(n) {
                Some(Binding::Value(v)) => {
                    let v = v.clone();
                    self.number(&v)
                }
                _ => None,
            },
            other => other.as_num(),
        }
    }

    /// `Math.random() * a + b` (in any order) → `(b, a + b)`.
    fn uniform(&self, e: &Expr) -> Option<(f64, f64)> {
        let random = |x: &Expr| {
            x.as_call()
                .is_some_and(|(n, a, _)| n == "Math.random" && a.is_empty())
        };
        let scaled = |x: &Expr| -> Option<f64> {
            match x {
                Expr::Binary { op, left, right } if op == "*" => {
                    if random(left) {
                        self.number(right)
                    } else if random(right) {
                        self.number(left)
                    } else {
                        None
                    }
                }
                other if random(other) => Some(1.0),
                _ => None,
            }
        };
        if let Some(a) = scaled(e) {
            return Some((0.0, a));
        }
        let Expr::Binary { op, left, right } = e else {
            return None;
        };
        if op != "+" {
            return None;
        }
        if let (Some(a), Some(b)) = (scaled(left), self.number(right)) {
            return Some((b, a + b));
        }
        if let (Some(b), Some(a)) = (self.number(left), scaled(right)) {
            return Some((b, a + b));
        }
        None
    }
}
