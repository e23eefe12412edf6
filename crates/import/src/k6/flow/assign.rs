//! `const name = value` and `name = value`: what the value is decides what the name stands for
//! later in the script (a response, a capture, a data set or row, a helper, a plain value),
//! and a value that sends something (a request, a batch, a check) is a step as well.

use super::{Step, Walker};
use crate::k6::data;
use crate::k6::js::Expr;
use crate::k6::values::Binding;

impl Walker<'_> {
    pub fn assign(
        &mut self,
        name: &str,
        v: &Expr,
        line: usize,
        group: Option<&str>,
        out: &mut Vec<Step>,
    ) {
        if self.assign_sent(name, v, group, out) {
            return;
        }
        if let Some((step, path)) = self.scope.response_value(v) {
            self.capture(name, step, path);
            return;
        }
        if let Some(set) = data::data_set(self.scope, name, v, line) {
            self.scope.bind(name, Binding::Data(set.name.clone()));
            self.data.push(set);
            return;
        }
        match self.scope.row_of(v) {
            Ok(Some(set)) => {
                self.scope.bind(name, Binding::Row(set));
                return;
            }
            Ok(None) => {}
            Err(why) => {
                self.unsupported(line, format!("`{name}`: {why}"));
                self.scope.bind(name, Binding::Opaque(why));
                return;
            }
        }
        if let Expr::New { callee, .. } = v {
            self.assign_new(name, callee, line);
            return;
        }
        if let Expr::Function { params, body, .. } = v {
            self.function(name, params, body, line);
            return;
        }
        if reads_clock(v) {
            self.report.did(format!(
                "decide: line {line}: `{name}` holds the time it was set; the scenario reads {{{{ now_ms() }}}} at each use, so two uses can differ"
            ));
        }
        self.scope.bind(name, Binding::Value(v.clone()));
    }

    /// A batch, a request or a check given a name: its steps, and the name bound to what they
    /// give. `false` when the value sends nothing.
    fn assign_sent(
        &mut self,
        name: &str,
        v: &Expr,
        group: Option<&str>,
        out: &mut Vec<Step>,
    ) -> bool {
        if let Some(steps) = self.batch(v, group, out) {
            self.scope.bind(name, Binding::Batch(steps));
            return true;
        }
        if self.http_call(v).is_some() {
            if let Some(i) = self.request(v, group, out) {
                self.scope.bind(name, Binding::Response(i));
            } else {
                let what = match v.as_call() {
                    Some((callee, _, l)) => format!("`{callee}(…)` of line {l}"),
                    None => "a request".to_string(),
                };
                self.scope.bind(
                    name,
                    Binding::Opaque(format!(
                        "the response of {what}, a request left out (see that line)"
                    )),
                );
            }
            return true;
        }
        if let Some((callee, args, l)) = v.as_call() {
            if callee == "check" {
                self.check(args, l, group, out);
                self.scope
                    .bind(name, Binding::Opaque("the result of a check".into()));
                return true;
            }
        }
        false
    }

    /// A value read from the response of request `step` at `path`: a capture of that request.
    fn capture(&mut self, name: &str, step: usize, path: String) {
        // loadlab's variables are snake_case: `appId` is captured as `app_id`.
        let var = crate::names::snake_case(name);
        let req = &mut self.requests[step];
        if !req.captures.iter().any(|(n, _)| *n == var) {
            req.captures.push((var.clone(), path));
        }
        self.scope.bind(name, Binding::Capture(var));
    }

    /// `name = new Class(…)`: reported, a custom metric saying why loadlab needs none.
    fn assign_new(&mut self, name: &str, callee: &Expr, line: usize) {
        let class = callee.dotted().unwrap_or_default();
        let what = if ["Trend", "Counter", "Rate", "Gauge"].contains(&class.as_str()) {
            format!("custom metric `{name}` (new {class}): loadlab keeps its own metrics per step and group; left out")
        } else {
            format!("`{name} = new {class}(…)`: not converted")
        };
        self.unsupported(line, what.clone());
        self.scope.bind(name, Binding::Opaque(what));
    }
}

/// Whether `e` reads the clock (`Date.now()`, `new Date().getTime()`): a value k6 computes once
/// where it is assigned, and loadlab at each use.
fn reads_clock(e: &Expr) -> bool {
    match e {
        Expr::Call { callee, args, .. } => {
            let new_date = matches!(callee.as_ref(), Expr::Member { object, property }
                if property == "getTime" && matches!(object.as_ref(), Expr::New { callee, .. } if callee.dotted().as_deref() == Some("Date")));
            new_date
                || callee.dotted().as_deref() == Some("Date.now")
                || args.iter().any(reads_clock)
        }
        Expr::Binary { left, right, .. } => reads_clock(left) || reads_clock(right),
        Expr::Template { exprs, .. } => exprs.iter().any(reads_clock),
        Expr::Unary { arg, .. } => reads_clock(arg),
        _ => false,
    }
}
