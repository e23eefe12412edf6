//! `export const options`: `stages` (k6's default ramping-vus), `vus`/`duration`/`iterations`,
//! and `scenarios` with their executors (`executors.rs`), as a loadlab `load:`; `thresholds`;
//! the few other options with an equivalent (`insecureSkipTLSVerify`, `noConnectionReuse`,
//! `userAgent`).

use std::cell::RefCell;

use super::duration::K6Duration;
use super::executors::{prop_line, ramping_vus, scenarios_load};
use super::js::{Expr, Prop};
use super::values::{env_read, is_number_call, Binding, Scope};
use crate::report::Report;
use crate::scaffold::fmt_num;
use crate::yaml::{Entry, Node};

/// What `options` gives the scenario.
pub struct Options {
    pub load: Entry,
    pub thresholds: Vec<String>,
    pub threshold_comments: Vec<String>,
    /// `insecure:`, `connections:`.
    pub extra: Vec<Entry>,
    pub user_agent: Option<String>,
    /// The function the chosen scenario runs (`exec`), when not the default one.
    pub exec: Option<String>,
    /// The name of the chosen scenario (`options.scenarios`).
    pub scenario: Option<String>,
}

/// The options as a load and thresholds; `Err` (its line, what k6 refuses and the fix) for
/// a setting k6 itself would refuse to start with, such as a duration of `'1 m'`.
pub fn convert(
    options: Option<(&Expr, usize)>,
    scope: &mut Scope,
    report: &mut Report,
) -> Result<Options, String> {
    let mut out = Options {
        load: default_load(),
        thresholds: Vec::new(),
        threshold_comments: Vec::new(),
        extra: Vec::new(),
        user_agent: None,
        exec: None,
        scenario: None,
    };
    let Some((options, line)) = options else {
        return Ok(out);
    };
    let Expr::Object(props) = options else {
        report.unsupported(
            Some(line),
            "options: not an object literal; the load is yours to decide",
        );
        return Ok(out);
    };
    let r = Reader {
        scope: &*scope,
        refusal: RefCell::new(None),
    };
    let props = scope.spread(props);
    let mut load_keys: Vec<&Prop> = Vec::new();
    for p in &props {
        match p.key.as_str() {
            "stages" | "vus" | "duration" | "iterations" | "scenarios" => load_keys.push(p),
            "thresholds" => {
                let (t, c) = super::thresholds::convert(&r.resolve(&p.value), p.line, report);
                out.thresholds = t;
                out.threshold_comments = c;
            }
            "insecureSkipTLSVerify" if p.value == Expr::Bool(true) => {
                out.extra.push(Entry::new("insecure", Node::raw("true")))
            }
            "noConnectionReuse" if p.value == Expr::Bool(true) => {
                out.extra.push(Entry::new("connections", Node::raw("none")))
            }
            "userAgent" => out.user_agent = r.scope_text(&p.value),
            other => report.unsupported(
                Some(p.line),
                format!("options.{other}: no loadlab equivalent; left out"),
            ),
        }
    }
    let get = |k: &str| load_keys.iter().find(|p| p.key == k).copied();
    if let Some(scenarios) = get("scenarios") {
        let value = r.resolve(&scenarios.value);
        out.load = scenarios_load(&r, &value, scenarios.line, report, &mut out.exec);
        if let Expr::Object(list) = &value {
            out.scenario = list.first().map(|p| p.key.clone());
        }
    } else if load_keys.is_empty() {
        report.did(
            "options set no load: k6 runs 1 VU once, and so does the scenario (decide: the load)",
        );
    } else {
        out.load = shortcut_load(&r, &Expr::Object(props.clone()), line, report);
    }
    if let Some((line, what)) = r.refusal.into_inner() {
        return Err(format!("{line}: {what}"));
    }
    for c in &out.load.comments {
        if let Some(what) = c.strip_prefix("decide: ") {
            report.did(format!("decide: {what}"));
        }
    }
    Ok(out)
}

/// k6's shortcuts, as its `DeriveScenariosFromShortcuts` reads them: `iterations` (with
/// `duration` as their time limit) is shared-iterations, else `duration` is constant-vus,
/// else `stages` is ramping-vus from `vus`; `vus` alone is ignored (1 VU once).
fn shortcut_load(r: &Reader, options: &Expr, line: usize, report: &mut Report) -> Entry {
    let mut comments = Vec::new();
    let has = |k: &str| options.prop(k).is_some();
    let vus = r.num_or(options, "vus", 1.0, &mut comments);
    let mut m = vec![
        Entry::new("model", Node::raw("closed")),
        Entry::new("vus", Node::raw(fmt_num(vus))),
    ];
    if let Some(stages) = options.prop("stages") {
        let start = if has("vus") { vus } else { 1.0 };
        let mut load = ramping_vus(r, start, stages, report, line).commented(
            "k6 stages (ramping-vus): each stage moves linearly from the previous target",
        );
        load.comments.extend(comments);
        return load;
    }
    if has("iterations") {
        let n = r.num_or(options, "iterations", 1.0, &mut comments);
        m.push(Entry::new("shared_iterations", Node::raw(fmt_num(n))));
        let max = r.duration_or(options, "duration", "10m", &mut comments);
        m.push(Entry::new("max_duration", Node::raw(max)));
        if has("duration") {
            comments.push(
                "k6 `iterations` with `duration`: the iterations shared by the VUs, the duration their time limit (k6's shared-iterations maxDuration)".into(),
            );
        }
    } else if has("duration") {
        let d = r.duration_or(options, "duration", "1m", &mut comments);
        if d == "0s" {
            r.refuse(
                prop_line(options, "duration", line),
                "`duration` must be above zero (k6 refuses 0; for no time limit k6 has the externally-controlled executor)".into(),
            );
        }
        m.push(Entry::new("duration", Node::raw(d)));
    } else {
        report.did(format!(
            "options set only `vus: {}`: k6 ignores it without `iterations`, `duration` or `stages` and runs 1 VU once; so does the scenario (decide: the load)",
            fmt_num(vus)
        ));
        return default_load();
    }
    let mut load = Entry::new("load", Node::Map(m));
    load.comments.extend(comments);
    load
}

pub(super) fn default_load() -> Entry {
    crate::scaffold::one_user_once("decide: the script's options set no load (k6 runs 1 VU once); docs/scenario.md, \"Load models\"")
}

/// Reads option values through the script's constants; the first value k6 itself would
/// refuse is kept in `refusal`, so that the import stops with it.
pub(super) struct Reader<'a> {
    scope: &'a Scope,
    refusal: RefCell<Option<(usize, String)>>,
}

impl Reader<'_> {
    /// `e`, or the constant it names (`scenarios: SCENARIOS`, `{ thresholds }`).
    pub fn resolve(&self, e: &Expr) -> Expr {
        match e {
            Expr::Ident(n) => match self.scope.lookup(n) {
                Some(Binding::Value(v)) => self.resolve(&v.clone()),
                _ => e.clone(),
            },
            // `{ ...Workload, gracefulStop: '5s' }`: the spread object's fields in place.
            Expr::Object(props) => Expr::Object(self.scope.spread(props)),
            other => other.clone(),
        }
    }

    /// Keeps the first refusal: the one nearest the top of the options.
    pub fn refuse(&self, line: usize, what: String) {
        self.refusal.borrow_mut().get_or_insert((line, what));
    }

    /// A number, through constants and `__ENV.X || default` (`parseInt(__ENV.X) || 50`
    /// too).
    pub fn num(&self, e: &Expr) -> Option<f64> {
        match e {
            Expr::Ident(n) => match self.scope.lookup(n) {
                Some(Binding::Value(v)) => self.num(&v.clone()),
                _ => None,
            },
            Expr::Binary { op, left, right } if op == "||" || op == "??" => {
                env_read(left)?;
                self.num(right)
            }
            Expr::Call { callee, args, .. } if is_number_call(callee) => {
                args.first().and_then(|a| self.num(a))
            }
            Expr::Str(s) => s.trim().parse().ok(),
            Expr::Member { object, property } => self.num(&self.member(object, property)?),
            other => other.as_num(),
        }
    }

    /// `SmokeOptions.vus` where `SmokeOptions` is a constant object (often a module's:
    /// `export const SmokeOptions = { vus: 1, duration: '10s' }`).
    fn member(&self, object: &Expr, property: &str) -> Option<Expr> {
        match object {
            Expr::Ident(n) => match self.scope.lookup(n) {
                Some(Binding::Value(v)) => v.clone().prop(property).cloned(),
                _ => None,
            },
            other => other.prop(property).cloned(),
        }
    }

    pub fn scope_text(&self, e: &Expr) -> Option<String> {
        match e {
            Expr::Ident(n) => match self.scope.lookup(n) {
                Some(Binding::Value(v)) => self.scope_text(&v.clone()),
                _ => None,
            },
            Expr::Binary { op, left, right } if op == "||" || op == "??" => {
                env_read(left)?;
                self.scope_text(right)
            }
            Expr::Member { object, property } => self.scope_text(&self.member(object, property)?),
            other => other.as_str().map(str::to_string),
        }
    }

    /// `key` of `s` as a number, else `default`. A key the script sets to what this import
    /// cannot read (`rate: __ENV.RPS` without a default) is said in a `decide:` comment,
    /// never replaced silently.
    pub fn num_or(&self, s: &Expr, key: &str, default: f64, comments: &mut Vec<String>) -> f64 {
        let Some(v) = s.prop(key) else {
            return default;
        };
        self.num(v).unwrap_or_else(|| {
            comments.push(unread(key, v, &fmt_num(default)));
            default
        })
    }

    /// `key` of `s` as a duration, else `default`, as [`Self::num_or`].
    pub fn duration_or(
        &self,
        s: &Expr,
        key: &str,
        default: &str,
        comments: &mut Vec<String>,
    ) -> String {
        let Some(v) = s.prop(key) else {
            return default.to_string();
        };
        self.duration(v, prop_line(s, key, 0)).unwrap_or_else(|| {
            comments.push(unread(key, v, default));
            default.to_string()
        })
    }

    /// A k6 duration (`'1m30s'`, `'1d'`, or a number of milliseconds) as loadlab writes it;
    /// `None` for what this import cannot evaluate, and for what k6 refuses (kept, with
    /// `line`, in the refusal).
    pub fn duration(&self, e: &Expr, line: usize) -> Option<String> {
        self.k6_duration(e, line).map(|d| d.loadlab())
    }

    fn k6_duration(&self, e: &Expr, line: usize) -> Option<K6Duration> {
        let read = match self.scope_text(e) {
            Some(text) => K6Duration::parse(&text),
            None => K6Duration::from_millis(self.num(e)?),
        };
        read.map_err(|what| self.refuse(line, what)).ok()
    }

    /// A scenario's `timeUnit` (1s when unset, as in k6); one k6 refuses, zero included,
    /// stops the import.
    pub fn time_unit(&self, s: &Expr, line: usize, comments: &mut Vec<String>) -> K6Duration {
        let one_second = K6Duration::second();
        let Some(v) = s.prop("timeUnit") else {
            return one_second;
        };
        let line = prop_line(s, "timeUnit", line);
        match self.k6_duration(v, line) {
            Some(d) if d.is_zero() => {
                self.refuse(line, "`timeUnit` must be above zero (k6 refuses 0)".into());
                one_second
            }
            Some(d) => d,
            None => {
                comments.push(unread("timeUnit", v, "1s"));
                one_second
            }
        }
    }
}

/// The `decide:` comment for a load setting whose value this import cannot read.
fn unread(key: &str, value: &Expr, written: &str) -> String {
    let env = |e: &Expr| super::values::env_name(e).map(|n| format!("__ENV.{n}"));
    let what = match value {
        Expr::Template { exprs, .. } => exprs.iter().find_map(env),
        other => env(other),
    }
    .map(|from| format!("read from {from} with no default"))
    .unwrap_or_else(|| "an expression this import cannot evaluate".to_string());
    format!("decide: the script's `{key}` is {what}: written as {written}; set it here")
}
