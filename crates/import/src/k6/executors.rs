//! `options.scenarios` and k6's executors, each as the loadlab `load:` that runs the same
//! load; kept apart from `options.rs`, which reads the options object and its shortcuts.

use super::duration::{rates, K6Duration};
use super::js::Expr;
use super::options::{default_load, Reader};
use crate::report::Report;
use crate::scaffold::fmt_num;
use crate::yaml::{Entry, Item, Node};

/// `stages: [{duration, target}]` of VUs → a closed load starting at `start` VUs (k6's
/// `startVUs`, or `vus` beside the `stages` shortcut: 1 when unset, as in k6).
pub(super) fn ramping_vus(
    r: &Reader,
    start: f64,
    stages: &Expr,
    report: &mut Report,
    line: usize,
) -> Entry {
    let mut items = Vec::new();
    for st in array(stages) {
        let d = st
            .prop("duration")
            .and_then(|d| r.duration(d, prop_line(st, "duration", line)));
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
    if start > 0.0 {
        m.push(Entry::new("start_vus", Node::raw(fmt_num(start))));
    }
    m.push(Entry::new("stages", Node::Seq(items)));
    report.did(format!(
        "{} k6 stage(s) became closed-model stages (VUs ramp linearly from {}, as k6's ramping-vus)",
        array(stages).len(),
        fmt_num(start)
    ));
    Entry::new("load", Node::Map(m))
}

/// The line of `key` in the object `e`, else `fallback`.
pub(super) fn prop_line(e: &Expr, key: &str, fallback: usize) -> usize {
    match e {
        Expr::Object(props) => props
            .iter()
            .rev()
            .find(|p| p.key == key)
            .map_or(fallback, |p| p.line),
        _ => fallback,
    }
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
pub(super) fn scenarios_load(
    r: &Reader,
    scenarios: &Expr,
    line: usize,
    report: &mut Report,
    exec: &mut Option<String>,
) -> Entry {
    let Expr::Object(list) = scenarios else {
        let what = "options.scenarios: not an object literal (a value computed or imported); the scenario runs 1 VU once";
        report.unsupported(Some(line), what);
        return crate::scaffold::one_user_once(&format!("decide: the load ({what})"));
    };
    let Some(first) = list.first() else {
        return default_load();
    };
    let mut comments = Vec::new();
    let resolved = r.resolve(&first.value);
    let s = &resolved;
    let executor = s
        .prop("executor")
        .and_then(|e| r.scope_text(e))
        .unwrap_or_default();
    let line = first.line;
    let Some(mut load) = executor_load(r, s, &executor, line, report, &mut comments) else {
        let what = if executor.is_empty() {
            format!(
                "scenario `{}`: its executor could not be read (`{}`: a value computed or imported); the scenario runs 1 VU once",
                first.key,
                first.value.sketch()
            )
        } else {
            format!(
                "scenario `{}`: executor `{executor}` has no loadlab load; the scenario runs 1 VU once",
                first.key
            )
        };
        report.unsupported(Some(line), what.clone());
        return crate::scaffold::one_user_once(&format!("decide: the load ({what})"));
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
            let start = s.prop("startVUs").and_then(|v| r.num(v)).unwrap_or(1.0);
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
            let unit = r.time_unit(s, line, comments);
            let n = r.num_or(s, "rate", 1.0, comments);
            let d = r.duration_or(s, "duration", "1m", comments);
            let rate = rates(&[n], &unit).remove(0);
            let mut m = vec![
                Entry::new("model", Node::raw("open")),
                Entry::new("rate", Node::raw(rate)),
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
    let unit: K6Duration = r.time_unit(s, line, comments);
    let start = s.prop("startRate").and_then(|v| r.num(v)).unwrap_or(0.0);
    let mut stages = Vec::new();
    for st in s.prop("stages").map(array).unwrap_or_default() {
        let d = st
            .prop("duration")
            .and_then(|d| r.duration(d, prop_line(st, "duration", line)));
        match (d, st.prop("target").and_then(|t| r.num(t))) {
            (Some(d), Some(t)) => stages.push((d, t)),
            _ => report.unsupported(
                Some(line),
                format!(
                    "stage `{}`: no literal duration and target; left out",
                    st.sketch()
                ),
            ),
        }
    }
    // One unit for every rate of the ramp, so that its stages read alike.
    let levels: Vec<f64> = std::iter::once(start)
        .chain(stages.iter().map(|(_, t)| *t))
        .collect();
    let texts = rates(&levels, &unit);
    let mut items = Vec::new();
    for (i, (d, t)) in stages.iter().enumerate() {
        let mut stage = vec![
            Entry::new("duration", Node::raw(d.clone())),
            Entry::new("rate", Node::raw(texts[i].clone())),
        ];
        if *t != levels[i] {
            stage.push(Entry::new("ramp_to", Node::raw(texts[i + 1].clone())));
        }
        items.push(Item::new(Node::Map(stage)));
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
