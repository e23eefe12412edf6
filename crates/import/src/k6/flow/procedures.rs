//! Helper functions of the script: one that only returns a value is bound as a value; one of
//! several statements is walked in place wherever it is called, its parameters bound to the
//! arguments.

use super::{Step, Walker};
use crate::k6::js::{Expr, Stmt};
use crate::k6::values::Binding;

/// Deepest chain of helpers calling helpers that is followed.
const MAX_CALL_DEPTH: usize = 16;

impl Walker<'_> {
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
    pub(super) fn call_procedure(
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
}
