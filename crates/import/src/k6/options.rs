//! `export const options`: `stages` (k6's default ramping-vus), `vus`/`duration`/`iterations`,
//! and `scenarios` with their executors, as a loadlab `load:`; `thresholds`; the few other
//! options with an equivalent (`insecureSkipTLSVerify`, `noConnectionReuse`, `userAgent`).

use super::js::{Expr, Prop};
use super::values::{Binding, Scope};
use crate::report::Report;
use crate::scaffold::fmt_num;
use crate::yaml::{Entry, Item, Node};

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

pub fn convert(options: Option<(&Expr, usize)>, scope: &mut Scope, report: &mut Report) -> Options {
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
        return out;
    };
    let Expr::Object(props) = options else {
        report.unsupported(
            Some(line),
            "options: not an object literal; the load is yours to decide",
        );
        return out;
    };
    let r = Reader { scope: &*scope };
    let mut load_keys: Vec<&Prop> = Vec::new();
    for p in props {
        match p.key.as_str() {
            "stages" | "vus" | "duration" | "iterations" | "scenarios" => load_keys.push(p),
            "thresholds" => {
                let (t, c) = super::thresholds::convert(&p.value, report);
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
    let get = |k: &str| load_keys.iter().find(|p| p.key == k).map(|p| &p.value);
    if let Some(scenarios) = get("scenarios") {
        out.load = scenarios_load(&r, scenarios, report, &mut out.exec);
        if let Expr::Object(list) = scenarios {
            out.scenario = list.first().map(|p| p.key.clone());
        }
    } else if let Some(stages) = get("stages") {
        out.load = ramping_vus(&r, None, stages, report, line).commented(
            "k6 stages (ramping-vus): each stage moves linearly from the previous target",
        );
    } else if load_keys.is_empty() {
        report.did(
            "options set no load: k6 runs 1 VU once, and so does the scenario (decide: the load)",
        );
    } else {
        let mut comments = Vec::new();
        let vus = r.num_or(options, "vus", 1.0, &mut comments);
        let mut m = vec![
            Entry::new("model", Node::raw("closed")),
            Entry::new("vus", Node::raw(fmt_num(vus))),
        ];
        if get("duration").is_some() {
            let d = r.duration_or(options, "duration", "1m", &mut comments);
            m.push(Entry::new("duration", Node::raw(d)));
        } else {
            let n = r.num_or(options, "iterations", 1.0, &mut comments);
            m.push(Entry::new("shared_iterations", Node::raw(fmt_num(n))));
        }
        out.load = Entry::new("load", Node::Map(m));
        out.load.comments.extend(comments);
    }
    for c in &out.load.comments {
        if let Some(what) = c.strip_prefix("decide: ") {
            report.did(format!("decide: {what}"));
        }
    }
    out
}

fn default_load() -> Entry {
    crate::scaffold::one_user_once("decide: the script's options set no load (k6 runs 1 VU once); docs/scenario.md, \"Load models\"")
}

struct Reader<'a> {
    scope: &'a Scope,
}

impl Reader<'_> {
    /// A number, through constants and `__ENV.X || default`.
    fn num(&self, e: &Expr) -> Option<f64> {
        match e {
            Expr::Ident(n) => match self.scope.lookup(n) {
                Some(Binding::Value(v)) => self.num(&v.clone()),
                _ => None,
            },
            Expr::Binary { op, left, right } if op == "||" || op == "??" => {
                super::values::env_name(left)?;
                self.num(right)
            }
            Expr::Call { callee, args, .. }
                if matches!(
                    callee.dotted().as_deref(),
                    Some("parseInt" | "Number" | "parseFloat")
                ) =>
            {
                args.first().and_then(|a| self.num(a))
            }
            Expr::Str(s) => s.trim().parse().ok(),
            other => other.as_num(),
        }
    }

    fn scope_text(&self, e: &Expr) -> Option<String> {
        match e {
            Expr::Ident(n) => match self.scope.lookup(n) {
                Some(Binding::Value(v)) => self.scope_text(&v.clone()),
                _ => None,
            },
            Expr::Binary { op, left, right } if op == "||" || op == "??" => {
                super::values::env_name(left)?;
                self.scope_text(right)
            }
            other => other.as_str().map(str::to_string),
        }
    }

    /// `key` of `s` as a number, else `default`. A key the script sets to what this import
    /// cannot read (`rate: __ENV.RPS` without a default) is said in a `decide:` comment,
    /// never replaced silently.
    fn num_or(&self, s: &Expr, key: &str, default: f64, comments: &mut Vec<String>) -> f64 {
        let Some(v) = s.prop(key) else {
            return default;
        };
        self.num(v).unwrap_or_else(|| {
            comments.push(unread(key, v, &fmt_num(default)));
            default
        })
    }

    /// `key` of `s` as a duration, else `default`, as [`Self::num_or`].
    fn duration_or(
        &self,
        s: &Expr,
        key: &str,
        default: &str,
        comments: &mut Vec<String>,
    ) -> String {
        let Some(v) = s.prop(key) else {
            return default.to_string();
        };
        self.duration(v).unwrap_or_else(|| {
            comments.push(unread(key, v, default));
            default.to_string()
        })
    }

    /// A k6 duration (`'1m30s'`, or a number of milliseconds) as loadlab writes it.
    fn duration(&self, e: &Expr) -> Option<String> {
        if let Some(t) = self.scope_text(e) {
            return Some(t.trim().to_string());
        }
        self.num(e).map(|ms| format!("{}ms", fmt_num(ms)))
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

/// Seconds in a k6 duration text (`1m30s`, `500ms`, `2h`).
fn seconds(text: &str) -> Option<f64> {
    let mut total = 0.0;
    let mut rest = text.trim();
    if rest.is_empty() {
        return None;
    }
    while !rest.is_empty() {
        let n_end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let n: f64 = rest[..n_end].parse().ok()?;
        rest = &rest[n_end..];
        let u_end = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let unit = &rest[..u_end];
        rest = &rest[u_end..];
        total += n * match unit {
            "h" => 3600.0,
            "m" => 60.0,
            "s" | "" => 1.0,
            "ms" => 0.001,
            "us" | "µs" => 1e-6,
            _ => return None,
        };
    }
    Some(total)
}

/// A rate of `n` per `time_unit` as loadlab writes it: `20/s`, `300/m`, or per second.
fn rate(n: f64, time_unit: &str) -> String {
    match time_unit.trim() {
        "1s" | "s" => format!("{}/s", fmt_num(n)),
        "1m" | "m" => format!("{}/m", fmt_num(n)),
        "1h" | "h" => format!("{}/h", fmt_num(n)),
        other => match seconds(other) {
            Some(s) if s > 0.0 => format!("{}/s", fmt_num(n / s)),
            _ => format!("{}/s", fmt_num(n)),
        },
    }
}

/// `stages: [{duration, target}]` of VUs → a closed load.
fn ramping_vus(
    r: &Reader,
    start: Option<f64>,
    stages: &Expr,
    report: &mut Report,
    line: usize,
) -> Entry {
    let mut items = Vec::new();
    for st in array(stages) {
        let d = st.prop("duration").and_then(|d| r.duration(d));
        let t = st.prop("target").and_then(|t| r.num(t));
        match (d, t) {
            (Some(d), Some(t)) => items.push(Item::new(Node::map([
                ("duration", Node::raw(d)),
                ("vus", Node::raw(fmt_num(t))),
            ]))),
            _ => report.unsupported(
                Some(line),
                format!(
                    "stage `{}`: no literal duration and target; left out",
                    st.sketch()
                ),
            ),
        }
    }
    let mut m = vec![Entry::new("model", Node::raw("closed"))];
    if let Some(s) = start.filter(|s| *s > 0.0) {
        m.push(Entry::new("start_vus", Node::raw(fmt_num(s))));
    }
    m.push(Entry::new("stages", Node::Seq(items)));
    report.did(format!(
        "{} k6 stage(s) became closed-model stages (VUs ramp linearly, as k6's ramping-vus)",
        array(stages).len()
    ));
    Entry::new("load", Node::Map(m))
}

fn array(e: &Expr) -> Vec<&Expr> {
    match e {
        Expr::Array(a) => a.iter().collect(),
        _ => Vec::new(),
    }
}

/// Keys each executor reads (others are reported).
fn known(executor: &str) -> &'static [&'static str] {
    match executor {
        "ramping-vus" => &["startVUs", "stages"],
        "constant-vus" => &["vus", "duration"],
        "per-vu-iterations" | "shared-iterations" => &["vus", "iterations", "maxDuration"],
        "constant-arrival-rate" => &["rate", "timeUnit", "duration", "preAllocatedVUs", "maxVUs"],
        "ramping-arrival-rate" => &[
            "startRate",
            "timeUnit",
            "stages",
            "preAllocatedVUs",
            "maxVUs",
        ],
        _ => &[],
    }
}

/// `scenarios: {name: {executor, ...}}`: the first one is the load; the others are reported.
fn scenarios_load(
    r: &Reader,
    scenarios: &Expr,
    report: &mut Report,
    exec: &mut Option<String>,
) -> Entry {
    let Expr::Object(list) = scenarios else {
        report.unsupported(None, "options.scenarios: not an object literal");
        return default_load();
    };
    let Some(first) = list.first() else {
        return default_load();
    };
    let mut comments = Vec::new();
    let s = &first.value;
    let executor = s
        .prop("executor")
        .and_then(|e| r.scope_text(e))
        .unwrap_or_default();
    let line = first.line;
    let Some(mut load) = executor_load(r, s, &executor, line, report, &mut comments) else {
        report.unsupported(
            Some(line),
            format!(
                "scenario `{}`: executor `{executor}` has no loadlab load",
                first.key
            ),
        );
        return default_load();
    };
    let Expr::Object(props) = s else {
        return load;
    };
    for p in props {
        match p.key.as_str() {
            "executor" => {}
            "exec" => *exec = r.scope_text(&p.value),
            k if known(&executor).contains(&k) => {}
            k => {
                report.unsupported(
                    Some(p.line),
                    format!("scenario `{}`: `{k}` not converted", first.key),
                );
                comments.push(format!("not converted (line {}): `{k}`", p.line));
            }
        }
    }
    load.comments.insert(
        0,
        format!("k6 scenario `{}` (executor {executor})", first.key),
    );
    for other in &list[1..] {
        let ex = other
            .value
            .prop("executor")
            .and_then(|e| r.scope_text(e))
            .unwrap_or_default();
        let what = format!(
            "scenario `{}` ({ex}): loadlab runs one load; the first scenario, `{}`, was taken",
            other.key, first.key
        );
        comments.push(format!("not converted (line {}): {what}", other.line));
        report.unsupported(Some(other.line), what);
    }
    load.comments.extend(comments);
    load
}

/// The load one scenario's executor settings give; `None` for an executor loadlab has no
/// load for. Notes on the load are added to `comments`.
fn executor_load(
    r: &Reader,
    s: &Expr,
    executor: &str,
    line: usize,
    report: &mut Report,
    comments: &mut Vec<String>,
) -> Option<Entry> {
    Some(match executor {
        "ramping-vus" => {
            let start = s.prop("startVUs").and_then(|v| r.num(v));
            let stages = s.prop("stages").cloned().unwrap_or(Expr::Array(Vec::new()));
            ramping_vus(r, start, &stages, report, line)
        }
        "constant-vus" => {
            let vus = r.num_or(s, "vus", 1.0, comments);
            let d = r.duration_or(s, "duration", "1m", comments);
            Entry::new(
                "load",
                Node::map([
                    ("model", Node::raw("closed")),
                    ("vus", Node::raw(fmt_num(vus))),
                    ("duration", Node::raw(d)),
                ]),
            )
        }
        "per-vu-iterations" | "shared-iterations" => {
            let vus = r.num_or(s, "vus", 1.0, comments);
            let n = r.num_or(s, "iterations", 1.0, comments);
            let key = if executor == "per-vu-iterations" {
                "iterations"
            } else {
                "shared_iterations"
            };
            let max = r.duration_or(s, "maxDuration", "10m", comments);
            Entry::new(
                "load",
                Node::map([
                    ("model", Node::raw("closed")),
                    ("vus", Node::raw(fmt_num(vus))),
                    (key, Node::raw(fmt_num(n))),
                    ("max_duration", Node::raw(max)),
                ]),
            )
        }
        "constant-arrival-rate" => {
            let unit = s
                .prop("timeUnit")
                .and_then(|u| r.scope_text(u))
                .unwrap_or_else(|| "1s".into());
            let n = r.num_or(s, "rate", 1.0, comments);
            let d = r.duration_or(s, "duration", "1m", comments);
            let mut m = vec![
                Entry::new("model", Node::raw("open")),
                Entry::new("rate", Node::raw(rate(n, &unit))),
                Entry::new("duration", Node::raw(d)),
            ];
            m.extend(max_in_flight(r, s, comments));
            Entry::new("load", Node::Map(m))
        }
        "ramping-arrival-rate" => ramping_arrival_rate(r, s, line, report, comments),
        _ => return None,
    })
}

/// `ramping-arrival-rate`: open-model stages, each ramping from the previous target to its
/// own; a stage without a literal duration and target is left out and reported.
fn ramping_arrival_rate(
    r: &Reader,
    s: &Expr,
    line: usize,
    report: &mut Report,
    comments: &mut Vec<String>,
) -> Entry {
    let unit = s
        .prop("timeUnit")
        .and_then(|u| r.scope_text(u))
        .unwrap_or_else(|| "1s".into());
    let mut prev = s.prop("startRate").and_then(|v| r.num(v)).unwrap_or(0.0);
    let mut items = Vec::new();
    for st in s.prop("stages").map(array).unwrap_or_default() {
        let d = st.prop("duration").and_then(|d| r.duration(d));
        let t = st.prop("target").and_then(|t| r.num(t));
        let (Some(d), Some(t)) = (d, t) else {
            report.unsupported(
                Some(line),
                format!(
                    "stage `{}`: no literal duration and target; left out",
                    st.sketch()
                ),
            );
            continue;
        };
        let mut stage = vec![
            Entry::new("duration", Node::raw(d)),
            Entry::new("rate", Node::raw(rate(prev, &unit))),
        ];
        if t != prev {
            stage.push(Entry::new("ramp_to", Node::raw(rate(t, &unit))));
        }
        items.push(Item::new(Node::Map(stage)));
        prev = t;
    }
    report.did(format!(
        "{} ramping-arrival-rate stage(s) became open-model stages",
        items.len()
    ));
    let mut m = vec![
        Entry::new("model", Node::raw("open")),
        Entry::new("stages", Node::Seq(items)),
    ];
    m.extend(max_in_flight(r, s, comments));
    Entry::new("load", Node::Map(m))
}

/// `maxVUs` (else `preAllocatedVUs`): the most iterations k6 runs at once → `max_in_flight`.
fn max_in_flight(r: &Reader, s: &Expr, comments: &mut Vec<String>) -> Option<Entry> {
    let n = s
        .prop("maxVUs")
        .or_else(|| s.prop("preAllocatedVUs"))
        .and_then(|v| r.num(v))?;
    comments.push(
        "max_in_flight: k6's maxVUs (or preAllocatedVUs), the most iterations at once".into(),
    );
    Some(Entry::new("max_in_flight", Node::raw(fmt_num(n))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn k6_durations_and_rates() {
        assert_eq!(seconds("1m30s"), Some(90.0));
        assert_eq!(seconds("500ms"), Some(0.5));
        assert_eq!(seconds("2h"), Some(7200.0));
        assert_eq!(seconds("x"), None);
        assert_eq!(rate(20.0, "1s"), "20/s");
        assert_eq!(rate(300.0, "1m"), "300/m");
        assert_eq!(rate(10.0, "2s"), "5/s");
    }
}
