//! `sleep(...)` as a think step: the pause a k6 script writes as a number, a uniform random
//! number (`Math.random()`), or `randomIntBetween`, as loadlab's fixed or ranged pause.

use super::{Step, Walker};
use crate::k6::js::Expr;
use crate::k6::values::Binding;

impl Walker<'_> {
    /// `sleep(seconds)`: a think step, or reported when its seconds are not known.
    pub(super) fn sleep(&mut self, args: &[Expr], line: usize, out: &mut Vec<Step>) {
        match args.first().map(|a| self.think(a)) {
            Some(Ok((value, note))) => {
                let comments = note.into_iter().collect();
                self.push(out, Step::Think { value, comments });
            }
            Some(Err(why)) => self.unsupported(line, format!("sleep: {why}")),
            None => {}
        }
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
