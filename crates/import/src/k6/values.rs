//! What the script's names stand for, and its expressions as loadlab templates: `${BASE_URL}`
//! is the target, `__ENV.X` is `{{ env.X }}`, `__VU`/`__ITER` are `{{ vu }}`/`{{ iteration }}`,
//! a row of a `SharedArray` is `{{ set.column }}`, a value read from a response is a capture,
//! k6-utils' random helpers are loadlab's functions. Constants are inlined where used.
//! Which expressions read a response value is decided in `captures.rs`, which read a data
//! row (and with what pick) in `rows.rs`; this file turns them into text.

use super::js::{Expr, Prop, SPREAD};
use serde_json::Value;

/// What a name of the script is bound to.
#[derive(Debug, Clone)]
pub enum Binding {
    /// A constant inlined where it is used (literals, objects, templates).
    Value(Expr),
    /// The base URL that became `target:`.
    Target,
    /// A `SharedArray` that became the data set of this name.
    Data(String),
    /// One row of a data set.
    Row(String),
    /// The response of a request step (its index).
    Response(usize),
    /// The responses of an `http.batch`: each request step's index, with its name when the
    /// batch was an object (`http.batch({ front: [...] })`).
    Batch(Vec<(Option<String>, usize)>),
    /// A value captured from a response: `{{ name }}`.
    Capture(String),
    /// A helper function whose body is one `return`: inlined at each call.
    Function { params: Vec<String>, ret: Expr },
    /// Something the importer cannot follow (a custom metric, a reassigned `let`): why.
    Opaque(String),
}

/// A data set's row chosen by an index expression: how loadlab should pick it.
#[derive(Debug, Clone, PartialEq)]
pub struct PickNote {
    pub set: String,
    pub pick: &'static str,
    /// Set when loadlab's pick only approximates the script's indexing.
    pub note: Option<String>,
}

/// Marks the target in converted text; stripped from the start of URLs.
const TARGET: &str = "\u{1}target\u{1}";

#[derive(Default)]
pub struct Scope {
    vars: Vec<(String, Binding)>,
    pub target: Option<String>,
    /// Environment variables read without a default (`{{ env.X }}`).
    pub env: Vec<String>,
    /// `(variable, default)` read with a default (`__ENV.X || 'x'`): the default is written.
    pub env_defaults: Vec<(String, String)>,
    /// Captures asked for by an expression (`res.json('id')` used in place):
    /// `(step, variable, JSONPath)`.
    pub captures: Vec<(usize, String, String)>,
    pub picks: Vec<PickNote>,
    /// `(set, key)`: a whole JSON file's set read by its key (`loginData.users[i]`).
    pub set_fields: Vec<(String, String)>,
    /// `(set, index variable)`: the name a set's row was read by (`users[rand]`).
    pub indexed_by: Vec<(String, String)>,
    /// The local name of k6/execution's default import (`exec`).
    pub execution: Option<String>,
    /// k6/execution's named imports, `(local, imported)`: `import { vu } from 'k6/execution'`.
    pub execution_names: Vec<(String, String)>,
    depth: usize,
}

pub type Conv<T> = Result<T, String>;

impl Scope {
    pub fn bind(&mut self, name: &str, b: Binding) {
        self.vars.push((name.to_string(), b));
    }

    pub fn lookup(&self, name: &str) -> Option<&Binding> {
        self.vars
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, b)| b)
    }

    /// `vu.idInTest` of a named import from k6/execution as `exec.vu.idInTest`, the form
    /// read through its default import; other names unchanged.
    pub fn execution_path(&self, dotted: &str) -> String {
        let (first, rest) = dotted.split_once('.').unwrap_or((dotted, ""));
        match self.execution_names.iter().find(|(l, _)| l == first) {
            Some((_, imported)) => {
                let exec = self.execution.as_deref().unwrap_or("exec");
                let rest = if rest.is_empty() {
                    String::new()
                } else {
                    format!(".{rest}")
                };
                format!("{exec}.{imported}{rest}")
            }
            None => dotted.to_string(),
        }
    }

    /// Names bound after `mark` are dropped (leaving a function's body).
    pub fn mark(&self) -> usize {
        self.vars.len()
    }

    pub fn reset(&mut self, mark: usize) {
        self.vars.truncate(mark);
    }

    /// A URL: relative to the target when it starts with it, absolute otherwise.
    pub fn url(&mut self, e: &Expr) -> Conv<String> {
        let t = self.marked_text(e)?;
        if let Some(rest) = t.strip_prefix(TARGET) {
            let rest = rest.replace(TARGET, self.target.as_deref().unwrap_or(""));
            return Ok(if rest.starts_with('/') {
                rest
            } else {
                format!("/{rest}")
            });
        }
        let t = t.replace(TARGET, self.target.as_deref().unwrap_or(""));
        if let Some(target) = &self.target {
            if let Some(rest) = t.strip_prefix(target.trim_end_matches('/')) {
                if rest.starts_with('/') || rest.is_empty() {
                    return Ok(if rest.is_empty() {
                        "/".into()
                    } else {
                        rest.into()
                    });
                }
            }
        }
        Ok(t)
    }

    /// Text with `{{ ... }}` templates, the base URL written as the target's URL (in a body,
    /// a header or a data value k6 sends it whole).
    pub fn text(&mut self, e: &Expr) -> Conv<String> {
        let t = self.marked_text(e)?;
        Ok(t.replace(TARGET, self.target.as_deref().unwrap_or("")))
    }

    /// Text with `{{ ... }}` templates, and the base URL as [`TARGET`], so that [`Self::url`]
    /// can tell a path on the target from an absolute URL.
    fn marked_text(&mut self, e: &Expr) -> Conv<String> {
        self.depth += 1;
        let out = if self.depth > 40 {
            Err("too deeply nested".to_string())
        } else {
            self.text_inner(e)
        };
        self.depth -= 1;
        out
    }

    fn text_inner(&mut self, e: &Expr) -> Conv<String> {
        match e {
            Expr::Str(s) => Ok(s.clone()),
            Expr::Num(n) => Ok(crate::scaffold::fmt_num(*n)),
            Expr::Bool(b) => Ok(b.to_string()),
            Expr::Template { quasis, exprs } => {
                let mut out = String::new();
                for (i, q) in quasis.iter().enumerate() {
                    out.push_str(q);
                    if let Some(x) = exprs.get(i) {
                        out.push_str(&self.marked_text(x)?);
                    }
                }
                Ok(out)
            }
            Expr::Binary { op, left, right } if op == "+" => Ok(format!(
                "{}{}",
                self.marked_text(left)?,
                self.marked_text(right)?
            )),
            Expr::Binary { op, left, right } if op == "||" || op == "??" => {
                if let Some(var) = env_name(left) {
                    let default = self.marked_text(right)?;
                    if !self.env_defaults.iter().any(|(v, _)| *v == var) {
                        self.env_defaults.push((var, default.clone()));
                    }
                    return Ok(default);
                }
                Err(format!("`{}`: a choice at run time", e.sketch()))
            }
            _ => match self.template(e)? {
                Some(t) => Ok(t),
                None => Err(format!("`{}`: no loadlab template for it", e.sketch())),
            },
        }
    }

    /// An expression that stands for one value: a `{{ ... }}` template (or the target marker,
    /// or an inlined constant's text). `None` when it is nothing the importer knows.
    fn template(&mut self, e: &Expr) -> Conv<Option<String>> {
        if let Some(var) = env_name(e) {
            if !self.env.contains(&var) {
                self.env.push(var.clone());
            }
            return Ok(Some(format!("{{{{ env.{var} }}}}")));
        }
        let dotted = e.dotted().map(|d| self.execution_path(&d));
        let exec = self.execution.clone().unwrap_or_else(|| "exec".into());
        match dotted.as_deref() {
            Some("__VU") => return Ok(Some("{{ vu }}".into())),
            Some("__ITER") => return Ok(Some("{{ iteration }}".into())),
            Some(d) if d == format!("{exec}.vu.idInTest") => return Ok(Some("{{ vu }}".into())),
            Some(d) if d == format!("{exec}.vu.iterationInScenario") => {
                return Ok(Some("{{ iteration }}".into()))
            }
            _ => {}
        }
        // A whole row of a set of plain values (`tokens[Math.floor(Math.random() * n)]`).
        if let Expr::Index { .. } = e {
            if let Some(set) = self.row_of(e)? {
                return Ok(Some(format!("{{{{ {set} }}}}")));
            }
        }
        match e {
            Expr::Ident(name) => match self.lookup(name).cloned() {
                Some(Binding::Value(v)) => self.marked_text(&v).map(Some),
                Some(Binding::Target) => Ok(Some(TARGET.into())),
                Some(Binding::Capture(c)) => Ok(Some(format!("{{{{ {c} }}}}"))),
                // `const password = passwordArr[rand]`: a whole row of plain values.
                Some(Binding::Row(set)) => Ok(Some(format!("{{{{ {set} }}}}"))),
                Some(Binding::Opaque(why)) => Err(format!("`{name}`: {why}")),
                _ => Ok(None),
            },
            Expr::Member { object, property } => {
                if let Some(set) = self.row_of(object)? {
                    return Ok(Some(format!("{{{{ {set}.{property} }}}}")));
                }
                if let Some((step, path)) = self.response_value(e) {
                    return Ok(Some(self.inline_capture(step, &path)));
                }
                // A property of an inlined constant object.
                if let Some(props) = self.object(object) {
                    if let Some((_, v)) = props.iter().rev().find(|(k, _)| k == property) {
                        return self.marked_text(v).map(Some);
                    }
                }
                Ok(None)
            }
            Expr::Call { callee, args, .. } => {
                if let Some((step, path)) = self.response_value(e) {
                    return Ok(Some(self.inline_capture(step, &path)));
                }
                let name = callee.dotted().unwrap_or_default();
                let nums: Vec<String> = args
                    .iter()
                    .map(|a| a.as_num().map(crate::scaffold::fmt_num))
                    .collect::<Option<_>>()
                    .unwrap_or_default();
                match (name.as_str(), args.len(), nums.len()) {
                    ("randomIntBetween", 2, 2) => {
                        return Ok(Some(format!(
                            "{{{{ random_int({}, {}) }}}}",
                            nums[0], nums[1]
                        )))
                    }
                    ("uuidv4" | "crypto.randomUUID", 0, _) => {
                        return Ok(Some("{{ uuid() }}".into()))
                    }
                    ("randomString", 1, 1) => {
                        return Ok(Some(format!("{{{{ random_string({}) }}}}", nums[0])))
                    }
                    ("Date.now", 0, _) => return Ok(Some("{{ now_ms() }}".into())),
                    ("String" | "encodeURIComponent" | "encodeURI", 1, _) => {
                        return self.marked_text(&args[0]).map(Some)
                    }
                    _ => {}
                }
                if let Expr::Member { object, property } = callee.as_ref() {
                    // `new Date().getTime()`: the same milliseconds as `Date.now()`.
                    let new_date = matches!(object.as_ref(), Expr::New { callee, args, .. }
                        if args.is_empty() && callee.dotted().as_deref() == Some("Date"));
                    if new_date && property == "getTime" && args.is_empty() {
                        return Ok(Some("{{ now_ms() }}".into()));
                    }
                    if property == "toString" && args.is_empty() {
                        return self.marked_text(object).map(Some);
                    }
                }
                if let Some(Binding::Function { params, ret }) =
                    callee.dotted().and_then(|n| self.lookup(&n)).cloned()
                {
                    let mark = self.mark();
                    self.bind_args(&params, args);
                    let out = self.marked_text(&ret);
                    self.reset(mark);
                    return out.map(Some);
                }
                Ok(None)
            }
            _ => Ok(None),
        }
    }

    /// Binds a helper's parameters to its arguments (a parameter passed under its own name
    /// keeps the caller's binding).
    pub fn bind_args(&mut self, params: &[String], args: &[Expr]) {
        for (p, a) in params.iter().zip(args) {
            if matches!(a, Expr::Ident(n) if n == p) {
                continue;
            }
            let resolved = self.resolve(a);
            self.bind(p, resolved);
        }
    }

    /// The binding an argument brings into a helper: the caller's binding of a name, else
    /// the expression itself.
    fn resolve(&self, a: &Expr) -> Binding {
        if let Expr::Ident(n) = a {
            if let Some(b) = self.lookup(n) {
                return b.clone();
            }
        }
        Binding::Value(a.clone())
    }

    /// A constant object's properties (spreads of other constants expanded).
    /// An object literal's properties with each spread it can read (`...SmokeOptions`, a
    /// module's constant) replaced by that object's properties, at the spread's line; a
    /// later key overrides an earlier one, as in JavaScript.
    pub fn spread(&self, props: &[Prop]) -> Vec<Prop> {
        let mut out: Vec<Prop> = Vec::new();
        for p in props {
            let inner = (p.key == SPREAD).then(|| self.object(&p.value)).flatten();
            let add: Vec<Prop> = match inner {
                Some(kv) => kv
                    .into_iter()
                    .map(|(key, value)| Prop {
                        key,
                        value,
                        line: p.line,
                    })
                    .collect(),
                None => vec![p.clone()],
            };
            for a in add {
                if a.key != SPREAD {
                    out.retain(|x| x.key != a.key);
                }
                out.push(a);
            }
        }
        out
    }

    pub fn object(&self, e: &Expr) -> Option<Vec<(String, Expr)>> {
        match e {
            Expr::Object(props) => {
                let mut out: Vec<(String, Expr)> = Vec::new();
                for Prop { key, value, .. } in props {
                    if key == SPREAD {
                        for (k, v) in self.object(value)? {
                            out.retain(|(x, _)| *x != k);
                            out.push((k, v));
                        }
                    } else {
                        out.retain(|(x, _)| x != key);
                        out.push((key.clone(), value.clone()));
                    }
                }
                Some(out)
            }
            Expr::Ident(n) => match self.lookup(n) {
                Some(Binding::Value(v)) => {
                    let v = v.clone();
                    self.object(&v)
                }
                _ => None,
            },
            Expr::Member { object, property } => {
                let props = self.object(object)?;
                let (_, v) = props.into_iter().rev().find(|(k, _)| k == property)?;
                self.object(&v)
            }
            Expr::Call { callee, args, .. } => {
                let Some(Binding::Function { params, ret }) =
                    callee.dotted().and_then(|n| self.lookup(&n))
                else {
                    return None;
                };
                // Inline a helper returning an object: its parameters become constants.
                let mut inner = Scope {
                    vars: self.vars.clone(),
                    ..Default::default()
                };
                inner.bind_args(params, args);
                let props = inner.object(ret)?;
                Some(
                    props
                        .into_iter()
                        .map(|(k, v)| (k, inner.freeze(&v, params)))
                        .collect(),
                )
            }
            _ => None,
        }
    }

    /// `e` with the helper parameters `params` replaced by what they are bound to, so that it
    /// reads the same outside the helper.
    fn freeze(&self, e: &Expr, params: &[String]) -> Expr {
        match e {
            Expr::Ident(n) if params.contains(n) => match self.lookup(n) {
                Some(Binding::Value(v)) => v.clone(),
                _ => e.clone(),
            },
            Expr::Template { quasis, exprs } => Expr::Template {
                quasis: quasis.clone(),
                exprs: exprs.iter().map(|x| self.freeze(x, params)).collect(),
            },
            Expr::Binary { op, left, right } => Expr::Binary {
                op: op.clone(),
                left: Box::new(self.freeze(left, params)),
                right: Box::new(self.freeze(right, params)),
            },
            Expr::Member { object, property } => Expr::Member {
                object: Box::new(self.freeze(object, params)),
                property: property.clone(),
            },
            Expr::Object(props) => Expr::Object(
                props
                    .iter()
                    .map(|p| Prop {
                        key: p.key.clone(),
                        value: self.freeze(&p.value, params),
                        line: p.line,
                    })
                    .collect(),
            ),
            Expr::Array(items) => {
                Expr::Array(items.iter().map(|x| self.freeze(x, params)).collect())
            }
            Expr::Call { callee, args, line } => Expr::Call {
                callee: callee.clone(),
                args: args.iter().map(|x| self.freeze(x, params)).collect(),
                line: *line,
            },
            other => other.clone(),
        }
    }

    /// A JSON value: objects and arrays as JSON, other values as text with templates (a
    /// value that is one template keeps its type when sent).
    pub fn json(&mut self, e: &Expr) -> Conv<Value> {
        match e {
            Expr::Num(n) => Ok(serde_json::Number::from_f64(*n)
                .map(|x| {
                    if n.fract() == 0.0 && n.abs() < 9e15 {
                        Value::from(*n as i64)
                    } else {
                        Value::Number(x)
                    }
                })
                .unwrap_or(Value::Null)),
            Expr::Unary { op, arg } if op == "-" && arg.as_num().is_some() => {
                self.json(&Expr::Num(-arg.as_num().unwrap_or(0.0)))
            }
            Expr::Bool(b) => Ok(Value::Bool(*b)),
            Expr::Null => Ok(Value::Null),
            Expr::Array(items) => items
                .iter()
                .map(|x| self.json(x))
                .collect::<Conv<Vec<_>>>()
                .map(Value::Array),
            Expr::Object(_) => {
                let props = self
                    .object(e)
                    .ok_or_else(|| "an object spreading an unknown value".to_string())?;
                let mut map = serde_json::Map::new();
                for (k, v) in props {
                    map.insert(k, self.json(&v)?);
                }
                Ok(Value::Object(map))
            }
            Expr::Ident(n) => match self.lookup(n).cloned() {
                Some(Binding::Value(v)) => self.json(&v),
                _ => self.text(e).map(Value::String),
            },
            _ => self.text(e).map(Value::String),
        }
    }
}

/// `__ENV.X` or `__ENV['X']` → `X`.
pub fn env_name(e: &Expr) -> Option<String> {
    match e {
        Expr::Member { object, property } if matches!(object.as_ref(), Expr::Ident(n) if n == "__ENV") => {
            Some(property.clone())
        }
        _ => None,
    }
}

/// The environment variable `e` reads: `__ENV.X`, or `parseInt(__ENV.X)`, `Number(…)`,
/// `parseFloat(…)` of it (`parseInt(__ENV.RATE) || 50` is read at its default).
pub fn env_read(e: &Expr) -> Option<String> {
    match e {
        Expr::Call { callee, args, .. } if is_number_call(callee) => {
            args.first().and_then(env_name)
        }
        other => env_name(other),
    }
}

/// `parseInt`, `Number`, `parseFloat`: a number from text.
pub fn is_number_call(callee: &Expr) -> bool {
    matches!(
        callee.dotted().as_deref(),
        Some("parseInt" | "Number" | "parseFloat")
    )
}
