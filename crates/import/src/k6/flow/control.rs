//! Statements that shape the flow rather than send anything: an `if` (a `once:` block when it
//! tests for the first iteration), a counted `for` (a `loop:`), and `for … of` over a batch's
//! responses (its body once per response).

use super::{Step, Walker};
use crate::k6::js::{Expr, Stmt};
use crate::k6::values::Binding;

impl Walker<'_> {
    /// `if (first iteration) {...}` without `else` is a `once:` block; any other condition is
    /// reported, since loadlab steps have none.
    pub(super) fn condition(
        &mut self,
        test: &Expr,
        then: &[Stmt],
        otherwise: &[Stmt],
        line: usize,
        group: Option<&str>,
        out: &mut Vec<Step>,
    ) {
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
                line,
                format!(
                    "`if ({})`: loadlab steps have no conditions; its statements left out",
                    test.sketch()
                ),
            );
        }
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

    /// `for (let i = 0; i < N; i++) {...}`: a `loop:` of N, its counter bound to no value.
    pub(super) fn counted_loop(
        &mut self,
        count: u64,
        var: &str,
        body: &[Stmt],
        line: usize,
        group: Option<&str>,
        out: &mut Vec<Step>,
    ) {
        let mark = self.scope.mark();
        self.scope.bind(
            var,
            Binding::Opaque(format!(
                "the loop counter `{var}` (line {line}) has no loadlab value (a `loop:` has no index): to send each value, drop the loop and list them in a data set read once per iteration (`{var}s: {{ values: [1, 2, …] }}`, `{{{{ {var}s }}}}`); for any value of the range, `{{{{ random_int(first, last) }}}}`"
            )),
        );
        let steps = self.block(body, group);
        self.scope.reset(mark);
        self.push(
            out,
            Step::Loop {
                count,
                steps,
                comments: Vec::new(),
            },
        );
    }

    /// The requests of the batch `iterable` names, when it names one (the only `for … of`
    /// converted).
    pub(super) fn batch_responses(&self, iterable: &Expr) -> Option<Vec<(Option<String>, usize)>> {
        match iterable {
            Expr::Ident(n) => match self.scope.lookup(n) {
                Some(Binding::Batch(steps)) => Some(steps.clone()),
                _ => None,
            },
            _ => None,
        }
    }

    /// Over a batch's responses: the body once per response, bound to it.
    pub(super) fn each_response(
        &mut self,
        var: &str,
        steps: &[(Option<String>, usize)],
        body: &[Stmt],
        group: Option<&str>,
        out: &mut Vec<Step>,
    ) {
        for (_, step) in steps {
            let mark = self.scope.mark();
            self.scope.bind(var, Binding::Response(*step));
            for s in body {
                self.statement(s, group, out);
            }
            self.scope.reset(mark);
        }
    }
}
