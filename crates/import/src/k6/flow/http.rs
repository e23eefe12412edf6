//! Calls of k6/http as request steps: one request (`http.get(...)`, `http.request(...)`), or
//! the requests of an `http.batch`, each a step of its own.

use super::{Step, Walker};
use crate::k6::js::{Expr, SPREAD};
use crate::k6::request;

impl Walker<'_> {
    /// The http call `e` is, when it is one: `(function after "http.", args, line)`.
    pub(super) fn http_call<'e>(&self, e: &'e Expr) -> Option<(String, &'e [Expr], usize)> {
        let (name, args, line) = e.as_call()?;
        let func = name.strip_prefix(&format!("{}.", self.http))?;
        Some((func.to_string(), args, line))
    }

    /// A request step from an http call; `None` (reported) when it cannot be converted.
    pub(super) fn request(
        &mut self,
        e: &Expr,
        group: Option<&str>,
        out: &mut Vec<Step>,
    ) -> Option<usize> {
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
    pub(super) fn batch(
        &mut self,
        e: &Expr,
        group: Option<&str>,
        out: &mut Vec<Step>,
    ) -> Option<Vec<(Option<String>, usize)>> {
        let (func, args, line) = self.http_call(e)?;
        if func != "batch" {
            return None;
        }
        let Some(items) = batch_items(args.first()) else {
            self.unsupported(
                line,
                "http.batch: not a literal array or object of requests",
            );
            return Some(Vec::new());
        };
        let mut steps = Vec::new();
        for (name, item) in items {
            let call = Expr::Call {
                callee: Box::new(Expr::Member {
                    object: Box::new(Expr::Ident(self.http.clone())),
                    property: "request".into(),
                }),
                args: request_args(item),
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
}

/// The requests of a batch, named when it is an object; `None` when the batch is no literal.
fn batch_items(arg: Option<&Expr>) -> Option<Vec<(Option<String>, &Expr)>> {
    match arg {
        Some(Expr::Array(items)) => Some(items.iter().map(|i| (None, i)).collect()),
        Some(Expr::Object(props)) => Some(
            props
                .iter()
                .filter(|p| p.key != SPREAD)
                .map(|p| (Some(p.key.clone()), &p.value))
                .collect(),
        ),
        _ => None,
    }
}

/// A batch item in each of its forms as `http.request(method, url, body, params)` takes it.
fn request_args(item: &Expr) -> Vec<Expr> {
    match item {
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
    }
}
