//! `sleep(...)` as a think step: the pause a k6 script writes as a number (`__ENV.X || 3` at
//! its default), a uniform random number (`Math.random()`), or `randomIntBetween`, as
//! loadlab's fixed or ranged pause.

use super::{Step, Walker};
use crate::k6::js::Expr;
use crate::k6::values::{env_read, is_number_call, Binding};

impl Walker<'_> {
    /// `sleep(seconds)`: a think step, or reported when its seconds are not known.
    pub(super) fn sleep(&mut self, args: &[Expr], line: usize, out: &mut Vec<Step>) {
        if let Some(a) = args.first() {
            self.note_env_default(a);
        }
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

    /// A number of seconds: literal, through constants, `__ENV.X || 5` (the default, as the
    /// scenario takes every `__ENV` default), `Number(…)`/`parseInt(…)`, and arithmetic of
    /// numbers (`THINK * 2`).
    fn number(&self, e: &Expr) -> Option<f64> {
        match e {
            Expr::Ident(n) => match self.scope.lookup(n) {
                Some(Binding::Value(v)) => {
                    let v = v.clone();
                    self.number(&v)
                }
                _ => None,
            },
            Expr::Binary { op, left, right } if op == "||" || op == "??" => {
                env_read(left)?;
                self.number(right)
            }
            Expr::Binary { op, left, right } => {
                let (a, b) = (self.number(left)?, self.number(right)?);
                let n = match op.as_str() {
                    "+" => a + b,
                    "-" => a - b,
                    "*" => a * b,
                    "/" if b != 0.0 => a / b,
                    _ => return None,
                };
                n.is_finite().then_some(n)
            }
            Expr::Call { callee, args, .. } if is_number_call(callee) && args.len() == 1 => {
                self.number(&args[0])
            }
            Expr::Str(s) => s.trim().parse().ok(),
            other => other.as_num(),
        }
    }

    /// Records the `__ENV.X || default` a pause reads (through constants), so the report says
    /// the default was taken.
    fn note_env_default(&mut self, e: &Expr) {
        match e {
            Expr::Ident(n) => {
                if let Some(Binding::Value(v)) = self.scope.lookup(n) {
                    let v = v.clone();
                    self.note_env_default(&v);
                }
            }
            Expr::Binary { op, left, right } if op == "||" || op == "??" => {
                if let (Some(var), Some(d)) = (env_read(left), self.number(right)) {
                    if !self.scope.env_defaults.iter().any(|(v, _)| *v == var) {
                        let d = crate::scaffold::fmt_num(d);
                        self.scope.env_defaults.push((var, d));
                    }
                }
            }
            Expr::Binary { left, right, .. } => {
                self.note_env_default(left);
                self.note_env_default(right);
            }
            _ => {}
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
