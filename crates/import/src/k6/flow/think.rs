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
        if let Some(r) = self.range(e).filter(|r| r.random && r.lo <= r.hi) {
            let note = r.step.map(|step| {
                format!(
                    "k6 slept one of {} s; loadlab's pause is uniform between the two",
                    r.values(step)
                )
            });
            return Ok((format!("{}..{}", secs(r.lo), secs(r.hi)), note));
        }
        Err(format!(
            "`{}` is not a number of seconds or a uniform random one: the pause is left out, write its `think:` by hand",
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

    /// The values a pause built of one random draw (`Math.random()`, `randomIntBetween(a, b)`)
    /// and constants can take: `Math.random() * (max - min) + min`,
    /// `Math.floor(Math.random() * 3) + 1`, `randomIntBetween(1, 5) / 10`.
    fn range(&self, e: &Expr) -> Option<Range> {
        if let Some(n) = self.number(e) {
            return Some(Range::fixed(n));
        }
        match e {
            Expr::Ident(n) => match self.scope.lookup(n) {
                Some(Binding::Value(v)) => {
                    let v = v.clone();
                    self.range(&v)
                }
                _ => None,
            },
            Expr::Binary { op, left, right } => {
                let (a, b) = (self.range(left)?, self.range(right)?);
                a.combine(op, &b)
            }
            _ => {
                let (name, args, _) = e.as_call()?;
                match (name.as_str(), args) {
                    ("Math.random", []) => Some(Range {
                        lo: 0.0,
                        hi: 1.0,
                        hi_open: true,
                        step: None,
                        random: true,
                    }),
                    ("randomIntBetween", [a, b]) => {
                        let (a, b) = (self.number(a)?, self.number(b)?);
                        Some(Range {
                            lo: a.ceil(),
                            hi: b.floor(),
                            hi_open: false,
                            step: Some(1.0),
                            random: true,
                        })
                    }
                    ("Math.floor" | "Math.round" | "Math.ceil", [x]) => self.range(x)?.whole(&name),
                    _ => None,
                }
            }
        }
    }
}

/// The values of a pause: from `lo` to `hi` (`hi` itself excluded when `hi_open`), every
/// `step` when they are spaced so, drawn at random or fixed.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Range {
    lo: f64,
    hi: f64,
    hi_open: bool,
    step: Option<f64>,
    random: bool,
}

impl Range {
    fn fixed(n: f64) -> Self {
        Range {
            lo: n,
            hi: n,
            hi_open: false,
            step: None,
            random: false,
        }
    }

    /// `self op other`, where one side at most is random (two draws added are no longer
    /// uniform) and a product or quotient is by a positive constant.
    fn combine(&self, op: &str, other: &Range) -> Option<Range> {
        if self.random && other.random {
            return None;
        }
        let (r, k) = if self.random {
            (self, other)
        } else {
            (other, self)
        };
        let k = k.lo;
        let scale = |f: f64| Range {
            lo: r.lo * f,
            hi: r.hi * f,
            hi_open: r.hi_open,
            step: r.step.map(|s| s * f),
            random: r.random,
        };
        let out = match op {
            "+" => Range {
                lo: r.lo + k,
                hi: r.hi + k,
                ..*r
            },
            "-" if self.random => Range {
                lo: r.lo - k,
                hi: r.hi - k,
                ..*r
            },
            "*" if k > 0.0 => scale(k),
            "/" if self.random && k > 0.0 => scale(1.0 / k),
            _ => return None,
        };
        (out.lo.is_finite() && out.hi.is_finite()).then_some(out)
    }

    /// `1, 2, 3` or `0.1, 0.2, … 0.9`: the values every `step` from `lo` to `hi`.
    fn values(&self, step: f64) -> String {
        let n = crate::scaffold::fmt_num;
        if step > 0.0 && (self.hi - self.lo) / step < 4.5 {
            let count = ((self.hi - self.lo) / step).round() as usize;
            let all: Vec<String> = (0..=count).map(|i| n(self.lo + step * i as f64)).collect();
            return all.join(", ");
        }
        format!("{}, {}, … {}", n(self.lo), n(self.lo + step), n(self.hi))
    }

    /// `Math.floor`/`round`/`ceil` of a random value: the whole numbers it gives.
    fn whole(self, how: &str) -> Option<Range> {
        if !self.random {
            return None;
        }
        let (lo, hi) = match how {
            "Math.floor" if self.hi_open && self.hi.fract() == 0.0 => {
                (self.lo.floor(), self.hi - 1.0)
            }
            "Math.floor" => (self.lo.floor(), self.hi.floor()),
            "Math.ceil" => (self.lo.ceil(), self.hi.ceil()),
            _ => (self.lo.round(), self.hi.round()),
        };
        Some(Range {
            lo,
            hi,
            hi_open: false,
            step: Some(1.0),
            random: true,
        })
    }
}
