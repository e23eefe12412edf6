//! Capture detection: which expressions read a value from a request step's response
//! (`res.json('a.b')`, `res.json().a.b`, `JSON.parse(res.body).a`), as a step and a JSONPath,
//! so that the value becomes a capture on that step and a template where it is used.
//! Turning the rest of an expression into a template is `values.rs`.

use super::js::Expr;
use super::values::{Binding, Scope};

impl Scope {
    /// The template of a response value used in place, `{{ var }}`, and the capture that
    /// makes it (once per step and variable).
    pub(super) fn inline_capture(&mut self, step: usize, path: &str) -> String {
        let var = super::capture_name(path);
        if !self
            .captures
            .iter()
            .any(|(s, v, _)| *s == step && *v == var)
        {
            self.captures.push((step, var.clone(), path.to_string()));
        }
        format!("{{{{ {var} }}}}")
    }

    /// `res.json('a.b')`, `res.json().a.b`, `JSON.parse(res.body).a` of a request step's
    /// response: `(step, "$.a.b")`.
    pub fn response_value(&self, e: &Expr) -> Option<(usize, String)> {
        let (step, path) = self.response_path(e)?;
        Some((step, format!("${path}")))
    }

    fn response_path(&self, e: &Expr) -> Option<(usize, String)> {
        match e {
            Expr::Call { callee, args, .. } => {
                let name = callee.dotted();
                if name.as_deref() == Some("JSON.parse") {
                    let body = args.first()?;
                    let Expr::Member { object, property } = body else {
                        return None;
                    };
                    if property != "body" {
                        return None;
                    }
                    return Some((self.response(object)?, String::new()));
                }
                let Expr::Member { object, property } = callee.as_ref() else {
                    return None;
                };
                if property != "json" {
                    return None;
                }
                let step = self.response(object)?;
                match args.first() {
                    None => Some((step, String::new())),
                    Some(a) => Some((step, gjson_path(a.as_str()?)?)),
                }
            }
            Expr::Member { object, property } => {
                let (step, path) = self.response_path(object)?;
                Some((step, format!("{path}.{property}")))
            }
            Expr::Index { object, index } => {
                let (step, path) = self.response_path(object)?;
                let i = index.as_num()?;
                Some((step, format!("{path}[{}]", crate::scaffold::fmt_num(i))))
            }
            _ => None,
        }
    }

    /// The step whose response a name holds (or one of a batch's: `responses[0]`,
    /// `responses.front`).
    pub fn response(&self, e: &Expr) -> Option<usize> {
        let batch = |object: &Expr| match object {
            Expr::Ident(n) => match self.lookup(n) {
                Some(Binding::Batch(steps)) => Some(steps),
                _ => None,
            },
            _ => None,
        };
        match e {
            Expr::Ident(n) => match self.lookup(n) {
                Some(Binding::Response(s)) => Some(*s),
                _ => None,
            },
            Expr::Index { object, index } => {
                let i = index.as_num().filter(|i| *i >= 0.0 && i.fract() == 0.0)?;
                batch(object)?.get(i as usize).map(|(_, s)| *s)
            }
            Expr::Member { object, property } => batch(object)?
                .iter()
                .find(|(name, _)| name.as_deref() == Some(property.as_str()))
                .map(|(_, s)| *s),
            _ => None,
        }
    }
}

/// k6's `res.json('a.b.0')` selector (gjson) as a JSONPath tail: `.a.b[0]`.
fn gjson_path(selector: &str) -> Option<String> {
    let mut out = String::new();
    for part in selector.split('.') {
        if part.is_empty() || part.contains(['*', '?', '#', '|', '@']) {
            return None;
        }
        if part.chars().all(|c| c.is_ascii_digit()) {
            out.push_str(&format!("[{part}]"));
        } else {
            out.push('.');
            out.push_str(part);
        }
    }
    Some(out)
}
