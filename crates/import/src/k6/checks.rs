//! `check(res, { 'name': (r) => ... })` as a step's `check:`: status comparisons (`===`, `||`,
//! `[200, 201].includes(r.status)`), JSON values (`r.json('a.b') === v`), `r.body.includes(x)`,
//! response headers and `r.timings.duration < N`. Anything else is reported with its line.

use super::js::Expr;
use super::request::{Checks, Request};
use super::values::{Binding, Scope};
use crate::report::Report;
use serde_json::Value;

/// Adds the checks of the object `checks` (a `check(res, checks)` call at `line`) to `req`.
pub fn add(
    scope: &mut Scope,
    checks: &Expr,
    step: usize,
    req: &mut Request,
    line: usize,
    report: &mut Report,
) {
    let Expr::Object(props) = checks else {
        report.unsupported(
            Some(line),
            format!(
                "check with `{}`: not an object of functions",
                checks.sketch()
            ),
        );
        req.comments.push(format!(
            "not converted (line {line}): check `{}`",
            checks.sketch()
        ));
        return;
    };
    for p in props {
        let at = p.line;
        let got = match &p.value {
            Expr::Function { params, .. } => match p.value.returned() {
                Some(body) => {
                    let mark = scope.mark();
                    if let Some(r) = params.first() {
                        scope.bind(r, Binding::Response(step));
                    }
                    let out = condition(scope, body, &mut req.checks);
                    scope.reset(mark);
                    out
                }
                None => Err("its function is more than one `return`".to_string()),
            },
            other => Err(format!("`{}` is not a function", other.sketch())),
        };
        match got {
            Ok(Some(note)) => req.comments.push(format!("check '{}': {note}", p.key)),
            Ok(None) => {}
            Err(why) => {
                report.unsupported(Some(at), format!("check '{}': {why}", p.key));
                req.comments
                    .push(format!("not converted (line {at}): check '{}'", p.key));
            }
        }
    }
}

/// Adds what `cond` checks; `Ok(Some(note))` when the check only approximates it.
fn condition(scope: &mut Scope, cond: &Expr, out: &mut Checks) -> Result<Option<String>, String> {
    if let Some(codes) = statuses(scope, cond) {
        for c in codes {
            if !out.status.contains(&c) {
                out.status.push(c);
            }
        }
        return Ok(None);
    }
    match cond {
        Expr::Binary { op, left, right } if op == "&&" => {
            let a = condition(scope, left, out)?;
            let b = condition(scope, right, out)?;
            return Ok(a.or(b));
        }
        Expr::Binary { op, left, right } if is_eq(op) => {
            let (value, lit) = if literal(right).is_some() {
                (left.as_ref(), right.as_ref())
            } else {
                (right.as_ref(), left.as_ref())
            };
            if let (Some((_, path)), Some(v)) = (scope.response_value(value), literal(lit)) {
                out.json.push((path, v));
                return Ok(None);
            }
            if let Some(name) = header_of(scope, value) {
                if let Some(v) = lit.as_str() {
                    out.header.push((name, v.to_string()));
                    return Ok(None);
                }
            }
        }
        _ => {}
    }
    if let Some(text) = body_includes(scope, cond) {
        return contains(out, text, None);
    }
    if let Some(path) = exists(scope, cond) {
        let key = path.rsplit(['.', '[']).next().unwrap_or(&path).to_string();
        let text = format!("\"{key}\"");
        return contains(
            out,
            text,
            Some(format!(
                "{path} exists, approximated: the body contains the key \"{key}\""
            )),
        );
    }
    if let Expr::Binary { op, left, right } = cond {
        if (op == "<" || op == "<=") && is_duration(scope, left) {
            if let Some(ms) = right.as_num() {
                out.max_latency = Some(format!("{}ms", crate::scaffold::fmt_num(ms)));
                return Ok(None);
            }
        }
    }
    Err(format!("`{}` has no loadlab check", cond.sketch()))
}

fn contains(
    out: &mut Checks,
    text: String,
    note: Option<String>,
) -> Result<Option<String>, String> {
    if out.body_contains.as_ref().is_some_and(|b| *b != text) {
        return Err("a second body check on one step (loadlab has one `body_contains`)".into());
    }
    out.body_contains = Some(text);
    Ok(note)
}

fn is_eq(op: &str) -> bool {
    op == "===" || op == "=="
}

/// A literal value a JSON check compares with.
fn literal(e: &Expr) -> Option<Value> {
    Some(match e {
        Expr::Str(s) => Value::String(s.clone()),
        Expr::Template { exprs, .. } if exprs.is_empty() => Value::String(e.as_str()?.into()),
        Expr::Bool(b) => Value::Bool(*b),
        Expr::Null => Value::Null,
        other => {
            let n = other.as_num()?;
            if n.fract() == 0.0 && n.abs() < 9e15 {
                Value::from(n as i64)
            } else {
                serde_json::Number::from_f64(n).map(Value::Number)?
            }
        }
    })
}

/// The statuses a condition accepts: `r.status === 200`, `a || b`, `[200, 201].includes(r.status)`.
fn statuses(scope: &Scope, e: &Expr) -> Option<Vec<u16>> {
    match e {
        Expr::Binary { op, left, right } if is_eq(op) => {
            let (s, n) = if is_status(scope, left) {
                (left, right)
            } else {
                (right, left)
            };
            if !is_status(scope, s) {
                return None;
            }
            let n = n.as_num()?;
            Some(vec![n as u16])
        }
        Expr::Binary { op, left, right } if op == "||" => {
            let mut a = statuses(scope, left)?;
            a.extend(statuses(scope, right)?);
            Some(a)
        }
        Expr::Call { callee, args, .. } => {
            let Expr::Member { object, property } = callee.as_ref() else {
                return None;
            };
            if property != "includes" || !args.first().is_some_and(|a| is_status(scope, a)) {
                return None;
            }
            let Expr::Array(items) = object.as_ref() else {
                return None;
            };
            items.iter().map(|i| i.as_num().map(|n| n as u16)).collect()
        }
        _ => None,
    }
}

fn is_response(scope: &Scope, e: &Expr) -> bool {
    scope.response(e).is_some()
}

fn is_status(scope: &Scope, e: &Expr) -> bool {
    matches!(e, Expr::Member { object, property } if property == "status" && is_response(scope, object))
}

fn is_duration(scope: &Scope, e: &Expr) -> bool {
    matches!(e, Expr::Member { object, property } if property == "duration"
        && matches!(object.as_ref(), Expr::Member { object, property } if property == "timings" && is_response(scope, object)))
}

/// `r.headers['Content-Type']`.
fn header_of(scope: &Scope, e: &Expr) -> Option<String> {
    let Expr::Member { object, property } = e else {
        return None;
    };
    match object.as_ref() {
        Expr::Member {
            object,
            property: h,
        } if h == "headers" && is_response(scope, object) => Some(property.clone()),
        _ => None,
    }
}

/// `r.body.includes('x')`, `r.body.indexOf('x') !== -1` → `x`.
fn body_includes(scope: &Scope, e: &Expr) -> Option<String> {
    let call = match e {
        Expr::Binary { op, left, right }
            if (op == "!==" || op == "!=") && right.as_num() == Some(-1.0) =>
        {
            left.as_ref()
        }
        Expr::Binary { op, left, right } if op == ">=" && right.as_num() == Some(0.0) => {
            left.as_ref()
        }
        other => other,
    };
    let Expr::Call { callee, args, .. } = call else {
        return None;
    };
    let Expr::Member { object, property } = callee.as_ref() else {
        return None;
    };
    if property != "includes" && property != "indexOf" {
        return None;
    }
    match object.as_ref() {
        Expr::Member { object, property } if property == "body" && is_response(scope, object) => {
            args.first()?.as_str().map(str::to_string)
        }
        _ => None,
    }
}

/// `r.json('id') !== undefined`, `!= null`, `!!r.json().id`, or the value alone: its path.
fn exists(scope: &Scope, e: &Expr) -> Option<String> {
    let value = match e {
        Expr::Binary { op, left, right } if op == "!==" || op == "!=" => {
            let none = |x: &Expr| {
                matches!(x, Expr::Null) || matches!(x, Expr::Ident(n) if n == "undefined")
            };
            if none(right) {
                left.as_ref()
            } else if none(left) {
                right.as_ref()
            } else {
                return None;
            }
        }
        Expr::Unary { op, arg } if op == "!" => match arg.as_ref() {
            Expr::Unary { op, arg } if op == "!" => arg.as_ref(),
            _ => return None,
        },
        other => other,
    };
    let (_, path) = scope.response_value(value)?;
    (path != "$").then_some(path)
}
