//! A call standing as a statement: an http call, `check`, `sleep`, `group`, or a helper of the
//! script; any other call is reported, with why when its name is known not to convert.

use super::{Step, Walker};
use crate::k6::checks;
use crate::k6::js::Expr;
use crate::k6::values::Binding;

impl Walker<'_> {
    pub(super) fn expression(
        &mut self,
        e: &Expr,
        line: usize,
        group: Option<&str>,
        out: &mut Vec<Step>,
    ) {
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
            "sleep" => self.sleep(args, l, out),
            "group" => self.group(args, l, group, out),
            name if !name.contains('.') && self.procedures.iter().any(|(n, ..)| n == name) => {
                if let Some(steps) = self.call_procedure(name, args, l, group) {
                    // Its steps took the comments before them as they were walked; those
                    // still pending came after its last step and wait for the next one.
                    out.extend(steps);
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

    /// `group(name, function () {...})` or `group(name, helper)`: the function's steps, in the
    /// group `name` (within the enclosing one).
    fn group(&mut self, args: &[Expr], line: usize, group: Option<&str>, out: &mut Vec<Step>) {
        let name = args.first().and_then(|a| self.scope.text(a).ok());
        let full = name.map(|name| match group {
            Some(g) => format!("{g}::{name}"),
            None => name,
        });
        let steps = match (full, args.get(1)) {
            (Some(full), Some(Expr::Function { body, .. })) => Some(self.block(body, Some(&full))),
            // `group('front page', frontPage)`: a function given by name.
            (Some(full), Some(Expr::Ident(f))) => self
                .call_procedure(f, &[], line, Some(&full))
                .or_else(|| match self.scope.lookup(f).cloned() {
                    Some(Binding::Function { .. }) => Some(Vec::new()),
                    _ => None,
                }),
            _ => None,
        };
        match steps {
            // As for a helper: what is still pending came after the group's last step.
            Some(steps) => out.extend(steps),
            None => self.unsupported(
                line,
                "group: not a literal name and a function (inline or a function of the script)",
            ),
        }
    }

    /// `check(res, {...})` or `check(http.get(...), {...})`.
    pub(super) fn check(
        &mut self,
        args: &[Expr],
        line: usize,
        group: Option<&str>,
        out: &mut Vec<Step>,
    ) {
        let Some(target) = args.first() else { return };
        let step = match self.scope.response(target) {
            Some(s) => Some(s),
            None if self.http_call(target).is_some() => self.request(target, group, out),
            None => {
                let why = match target {
                    Expr::Ident(n) => match self.scope.lookup(n) {
                        Some(Binding::Opaque(why)) => why.clone(),
                        _ => "not a response".to_string(),
                    },
                    _ => "not a response".to_string(),
                };
                self.unsupported(
                    line,
                    format!(
                        "check on `{}`: {why}; the check is left out",
                        target.sketch()
                    ),
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
}
