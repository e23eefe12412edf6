//! The statements of k6's default function as steps: `http.*` calls become requests,
//! `check(res, ...)` their checks, `res.json(...)` read into a variable a capture, `sleep` a
//! think step, `group(name, fn)` the steps' group, `if (__ITER === 0) {...}` a `once:` block,
//! `for (let i = 0; i < N; i++) {...}` a `loop:` of N.
//! Any other statement is reported with its line and left as a comment before the next step.
//!
//! Here the walk itself (its state, and which statement goes where); each family of
//! statements is converted in a module of its own.

mod assign;
mod calls;
mod control;
mod http;
mod procedures;
mod think;

use super::data::DataSet;
use super::js::{Expr, Stmt};
use super::request::Request;
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
            } => self.reassign(name, v, *line, group, out),
            Stmt::Var { value: None, .. } => {}
            Stmt::Expr { expr, line } => self.expression(expr, *line, group, out),
            Stmt::If {
                test,
                then,
                otherwise,
                line,
            } => self.condition(test, then, otherwise, *line, group, out),
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
            } => self.counted_loop(*count, var, body, *line, group, out),
            Stmt::ForOf {
                var,
                iterable,
                body,
                text,
                line,
            } => match self.batch_responses(iterable) {
                Some(steps) => self.each_response(var, &steps, body, group, out),
                None => self.unsupported(*line, format!("`{text}`: not converted")),
            },
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

    /// An assignment binds like a declaration, and is also remembered: its binding outlives
    /// the block that made it (see [`Walker::block`]).
    fn reassign(
        &mut self,
        name: &str,
        v: &Expr,
        line: usize,
        group: Option<&str>,
        out: &mut Vec<Step>,
    ) {
        self.assign(name, v, line, group, out);
        if let Some(b) = self.scope.lookup(name).cloned() {
            self.assigned.push((name.to_string(), b));
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
}
