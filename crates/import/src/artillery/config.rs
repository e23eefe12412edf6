//! Artillery's `config:` section: phases become open-model stages, `http.timeout` and default
//! headers become `defaults:`, payload files and variables become data sets, `ensure` becomes
//! thresholds.

use super::seconds;
use crate::lines::Lines;
use crate::names;
use crate::report::Report;
use crate::scaffold::fmt_num;
use crate::yaml::{Entry, Item, Node};
use serde_yaml_ng::Value;

/// What the config section gives the rest of the import.
pub struct Config {
    pub entries: Vec<Entry>,
    /// `(field, data set)` for payload columns.
    pub fields: Vec<(String, String)>,
    /// `(variable, template text)` for variables whose value reads the environment or
    /// calls a function: used in place, not as a data set of literal text.
    pub aliases: Vec<(String, String)>,
}

const KNOWN: &[&str] = &[
    "target",
    "phases",
    "http",
    "timeout",
    "defaults",
    "payload",
    "variables",
    "ensure",
    "plugins",
    "tls",
    // Reported by `environments.rs`.
    "environments",
];

pub fn config(config: Option<&Value>, lines: &Lines, report: &mut Report) -> Config {
    let empty = Value::Mapping(Default::default());
    let config = config.unwrap_or(&empty);
    let mut entries = Vec::new();
    let mut fields = Vec::new();
    report_unknown_keys(config, lines, report);
    match config.get("target").and_then(Value::as_str).map(str::trim) {
        Some(t)
            if (t.starts_with("http://") || t.starts_with("https://")) && !t.contains("{{") =>
        {
            entries.push(Entry::new("target", Node::str(t)))
        }
        // `{{ $env.TARGET }}`, `http://localhost:{{ $processEnvironment.PORT }}`: read when
        // the scenario loads, as Artillery reads it.
        Some(t) if t.starts_with("{{") || t.starts_with("http") && t.contains("{{") => {
            let mut rewriter = super::templates::Rewriter::new(Vec::new());
            let text = rewriter.text(t);
            for e in &rewriter.env {
                report.variable(e, "read by the script from the environment (config.target)");
            }
            entries.push(Entry::new("target", Node::str(text)));
        }
        other => entries.push(
            Entry::new("target", Node::str("http://127.0.0.1:8080")).commented(match other {
                Some(t) if !t.is_empty() => format!(
                    "decide: the script's config.target is `{t}`, not an http(s) URL (Artillery may be given one with --target)"
                ),
                _ => "decide: the script names no config.target (Artillery may be given one with --target)".to_string(),
            }),
        ),
    }
    entries.extend(defaults(config, lines, report));
    entries.extend(tls(config.get("tls"), lines, report));
    let (load, warmup) = load(config.get("phases"), lines, report);
    entries.push(load);
    if let Some(w) = warmup {
        entries.push(w);
    }
    let thresholds = thresholds(config.get("ensure"), lines, report);
    if !thresholds.is_empty() {
        entries.push(Entry::new(
            "thresholds",
            Node::seq(thresholds.into_iter().map(Node::str)),
        ));
    }
    let mut data = Vec::new();
    payloads(config.get("payload"), lines, report, &mut data, &mut fields);
    let aliases = super::config_vars::variables(config.get("variables"), report, &mut data);
    if !data.is_empty() {
        entries.push(Entry::new("data", Node::Map(data)));
    }
    super::environments::note(config, &mut entries, lines, report);
    Config {
        entries,
        fields,
        aliases,
    }
}

fn report_unknown_keys(config: &Value, lines: &Lines, report: &mut Report) {
    if let Some(map) = config.as_mapping() {
        for key in map.keys().filter_map(Value::as_str) {
            if !KNOWN.contains(&key) {
                report.unsupported(
                    lines.find(key, 1),
                    format!("config.{key}: no loadlab equivalent; left out"),
                );
            }
        }
    }
}

/// `defaults:` from `http.timeout` (or `timeout`) and `defaults.headers`; the other `http`
/// settings are reported.
fn defaults(config: &Value, lines: &Lines, report: &mut Report) -> Option<Entry> {
    let mut defaults = Vec::new();
    let timeout = config
        .get("http")
        .and_then(|h| h.get("timeout"))
        .or_else(|| config.get("timeout"));
    match (timeout, timeout.and_then(seconds)) {
        (_, Some(t)) => defaults.push(Entry::new("timeout", Node::raw(t))),
        (Some(t), None) => report.unsupported(
            lines.find("timeout", 1),
            format!(
                "config.http.timeout `{}` is not a number of seconds (a value given at run time has none here); left out: loadlab's default timeout applies",
                t.as_str().map(str::to_string).unwrap_or_else(|| serde_yaml_ng::to_string(t).unwrap_or_default().trim().to_string())
            ),
        ),
        (None, None) => {}
    }
    if let Some(http) = config.get("http").and_then(Value::as_mapping) {
        for key in http.keys().filter_map(Value::as_str) {
            if key != "timeout" && key != "defaults" {
                report.unsupported(
                    lines.find(key, lines.find("http", 1).unwrap_or(1)),
                    format!("config.http.{key}: no loadlab equivalent; left out"),
                );
            }
        }
    }
    // Artillery reads `config.defaults` and, as its docs now advise, `config.http.defaults`
    // (which wins for a header set in both).
    let mut headers: Vec<(String, Node)> = Vec::new();
    for section in default_sections(config) {
        for key in section
            .as_mapping()
            .into_iter()
            .flat_map(|m| m.keys())
            .filter_map(Value::as_str)
            .filter(|k| !["headers", "think"].contains(k))
        {
            report.unsupported(
                lines.find(key, lines.find("defaults", 1).unwrap_or(1)),
                format!("defaults.{key}: no loadlab equivalent; left out"),
            );
        }
        for (k, v) in section
            .get("headers")
            .and_then(Value::as_mapping)
            .into_iter()
            .flatten()
        {
            let (Some(name), Some(value)) = (k.as_str(), scalar_text(v)) else {
                continue;
            };
            headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
            headers.push((name.to_string(), Node::str(value)));
        }
    }
    if !headers.is_empty() {
        defaults.push(Entry::new("headers", Node::map(headers)));
    }
    (!defaults.is_empty()).then(|| Entry::new("defaults", Node::Map(defaults)))
}

/// `config.defaults` then `config.http.defaults`, those present.
pub fn default_sections(config: &Value) -> impl Iterator<Item = &Value> {
    [
        config.get("defaults"),
        config.get("http").and_then(|h| h.get("defaults")),
    ]
    .into_iter()
    .flatten()
}

/// `tls.rejectUnauthorized: false` accepts any certificate: loadlab's `insecure: true`.
fn tls(tls: Option<&Value>, lines: &Lines, report: &mut Report) -> Option<Entry> {
    match tls?.get("rejectUnauthorized").and_then(Value::as_bool) {
        Some(false) => Some(Entry::new("insecure", Node::raw("true")).commented(
            "config.tls.rejectUnauthorized: false — any server certificate is accepted",
        )),
        Some(true) => None,
        None => {
            report.unsupported(
                lines.find("tls", 1),
                "config.tls: only `rejectUnauthorized` converts; left out",
            );
            None
        }
    }
}

fn scalar_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// `phases:` → `load: {model: open, stages: [...]}`; a first phase named "warm…" → `warmup:`.
fn load(phases: Option<&Value>, lines: &Lines, report: &mut Report) -> (Entry, Option<Entry>) {
    let Some(phases) = phases
        .and_then(Value::as_sequence)
        .filter(|p| !p.is_empty())
    else {
        let e = crate::scaffold::one_user_once(
            "decide: the script has no config.phases; choose the load",
        );
        return (e, None);
    };
    let mut stages = Vec::new();
    // `(phase number, its maxVusers)` for phases with arrivals; None: uncapped.
    let mut caps: Vec<(usize, Option<u64>)> = Vec::new();
    let mut cursor = lines.find("phases", 1).unwrap_or(1);
    let mut warmup = None;
    for (i, p) in phases.iter().enumerate() {
        let first = p
            .as_mapping()
            .and_then(|m| m.keys().next())
            .and_then(Value::as_str)
            .unwrap_or("duration");
        let line = lines.find(first, cursor);
        if let Some(l) = line {
            cursor = l + 1;
        }
        let name = p.get("name").and_then(Value::as_str);
        if let Some(pause) = p.get("pause").and_then(seconds) {
            stages.push(
                Item::new(Node::map([
                    ("duration", Node::raw(pause)),
                    ("rate", Node::raw("0/s")),
                ]))
                .commented("a pause: no arrivals"),
            );
            continue;
        }
        let Some(duration) = p.get("duration").and_then(seconds) else {
            let what = match p.get("duration") {
                Some(d) => format!(
                    "phase {}: duration `{}` is not a number of seconds nor a time like `5min`; left out",
                    i + 1,
                    serde_yaml_ng::to_string(d).unwrap_or_default().trim()
                ),
                None => format!("phase {}: no duration; left out", i + 1),
            };
            report.unsupported(line, what);
            continue;
        };
        let mut stage = vec![Entry::new("duration", Node::raw(duration.clone()))];
        let mut comments = Vec::new();
        if let Some(n) = name {
            comments.push(format!("phase \"{n}\""));
        }
        let Some(rate) = phase_rate(p, i, line, report, &mut comments) else {
            continue;
        };
        stage.extend(rate);
        report_unconverted_phase_keys(p, i, line, report);
        caps.push((i + 1, p.get("maxVusers").and_then(Value::as_u64)));
        if i == 0
            && phases.len() > 1
            && name.is_some_and(|n| n.to_ascii_lowercase().contains("warm"))
        {
            warmup = Some(Entry::new("warmup", Node::raw(duration)).commented(
                "the first phase is a warm-up: recorded, left out of statistics and thresholds",
            ));
        }
        stages.push(Item {
            comments,
            value: Node::Map(stage),
        });
    }
    if stages.is_empty() {
        let e = crate::scaffold::one_user_once(
            "decide: no phase of config.phases could be converted (see the report); choose the load",
        );
        return (e, None);
    }
    report.did(format!(
        "{} phase(s) became open-model stages (Artillery's arrivals are loadlab's open model)",
        stages.len()
    ));
    let mut load = vec![
        Entry::new("model", Node::raw("open")),
        Entry::new("stages", Node::Seq(stages)),
    ];
    load.extend(max_in_flight(&caps, lines.find("phases", 1), report));
    (Entry::new("load", Node::Map(load)), warmup)
}

/// `max_in_flight` from the phases' `maxVusers`: Artillery caps each phase, loadlab the
/// whole run, so the largest cap is kept and, when the phases' caps differ, the output and
/// the report say which phases lost theirs.
fn max_in_flight(
    caps: &[(usize, Option<u64>)],
    line: Option<usize>,
    report: &mut Report,
) -> Option<Entry> {
    let max = caps.iter().filter_map(|(_, c)| *c).max()?;
    let entry = Entry::new("max_in_flight", Node::raw(max.to_string()));
    if caps.iter().all(|(_, c)| *c == Some(max)) {
        return Some(entry);
    }
    let each: Vec<String> = caps
        .iter()
        .map(|(i, c)| match c {
            Some(c) => format!("phase {i}: {c}"),
            None => format!("phase {i}: none"),
        })
        .collect();
    let what = format!(
        "maxVusers capped each phase in Artillery ({}); loadlab's max_in_flight caps the whole run: the largest, {max}, applies to every phase",
        each.join(", ")
    );
    report.unsupported(line, what.clone());
    Some(entry.commented(format!("decide: {what}")))
}

/// A phase's arrivals as `rate` (and `ramp_to`) entries: `arrivalRate`, or `arrivalCount`
/// spread evenly over the phase (noted in `comments`); `None`, reported, with neither.
fn phase_rate(
    p: &Value,
    i: usize,
    line: Option<usize>,
    report: &mut Report,
    comments: &mut Vec<String>,
) -> Option<Vec<Entry>> {
    let mut stage = Vec::new();
    let rate = p.get("arrivalRate").and_then(Value::as_f64);
    let ramp_to = p.get("rampTo").and_then(Value::as_f64);
    if rate.is_some() || ramp_to.is_some() {
        // Artillery ramps from 0 when a phase gives only `rampTo`.
        let from = rate.unwrap_or(0.0);
        stage.push(Entry::new(
            "rate",
            Node::raw(format!("{}/s", fmt_num(from))),
        ));
        if let Some(to) = ramp_to {
            stage.push(Entry::new(
                "ramp_to",
                Node::raw(format!("{}/s", fmt_num(to))),
            ));
        }
    } else if let Some(count) = p.get("arrivalCount").and_then(Value::as_f64) {
        // Artillery spreads the count evenly over the phase: count / duration arrivals a second.
        let Some(secs) = p
            .get("duration")
            .and_then(super::duration_secs)
            .filter(|s| *s > 0.0)
        else {
            report.unsupported(
                line,
                format!(
                    "phase {}: arrivalCount with no positive duration; left out",
                    i + 1
                ),
            );
            return None;
        };
        stage.push(Entry::new("rate", Node::raw(rate_text(count / secs))));
        comments.push(format!(
            "arrivalCount {} spread evenly over the phase's {}s",
            fmt_num(count),
            fmt_num(secs)
        ));
    } else {
        let given = ["arrivalRate", "rampTo", "arrivalCount"]
            .into_iter()
            .find_map(|k| Some((k, p.get(k)?)));
        let what = match given {
            Some((key, v)) => format!(
                "phase {}: {key} `{}` is not a number (a value the script reads at run time has none here); left out",
                i + 1,
                v.as_str().map(str::to_string).unwrap_or_else(|| serde_yaml_ng::to_string(v).unwrap_or_default().trim().to_string())
            ),
            None => format!("phase {}: no arrivalRate or arrivalCount; left out", i + 1),
        };
        report.unsupported(line, what);
        return None;
    }
    Some(stage)
}

/// A rate as loadlab reads it, exact: per second when three decimals hold it, else per minute
/// or per hour, else per second at full precision (`300` over 7 s is not 42.857/s).
pub(crate) fn rate_text(per_second: f64) -> String {
    for (unit, per) in [("s", 1.0), ("m", 60.0), ("h", 3600.0)] {
        let n = per_second * per;
        let text = fmt_num(n);
        if text
            .parse::<f64>()
            .is_ok_and(|back| (back - n).abs() <= 1e-9 * n.abs().max(1.0))
        {
            return format!("{text}/{unit}");
        }
    }
    format!("{per_second}/s")
}

/// Reports the keys of a phase that have no loadlab equivalent.
fn report_unconverted_phase_keys(p: &Value, i: usize, line: Option<usize>, report: &mut Report) {
    for key in p.as_mapping().into_iter().flat_map(|m| m.keys()) {
        let key = key.as_str().unwrap_or("");
        if ![
            "duration",
            "arrivalRate",
            "rampTo",
            "arrivalCount",
            "name",
            "maxVusers",
        ]
        .contains(&key)
        {
            report.unsupported(
                line,
                format!(
                    "phase {}: `{key}` has no loadlab equivalent; left out",
                    i + 1
                ),
            );
        }
    }
}

/// `ensure: {p95: 200, maxErrorRate: 1}` and Artillery 2's `thresholds:` list.
fn thresholds(ensure: Option<&Value>, lines: &Lines, report: &mut Report) -> Vec<String> {
    let Some(map) = ensure.and_then(Value::as_mapping) else {
        return Vec::new();
    };
    let line = lines.find("ensure", 1);
    let mut out = Vec::new();
    let stat = |key: &str| -> Option<&'static str> {
        Some(match key {
            "p50" | "median" => "p50",
            "p75" => "p75",
            "p90" => "p90",
            "p95" => "p95",
            "p99" => "p99",
            "p999" => "p999",
            "max" => "max",
            "min" => "min",
            "mean" => "mean",
            _ => return None,
        })
    };
    for (k, v) in map {
        let key = k.as_str().unwrap_or("");
        match key {
            "maxErrorRate" => {
                if let Some(n) = v.as_f64() {
                    out.push(format!("http.errors < {}%", fmt_num(n)));
                }
            }
            "thresholds" => {
                for t in v.as_sequence().into_iter().flatten() {
                    for (m, limit) in t.as_mapping().into_iter().flatten() {
                        let metric = m.as_str().unwrap_or("");
                        let s = metric.strip_prefix("http.response_time.").and_then(stat);
                        match (s, limit.as_f64()) {
                            (Some(s), Some(ms)) => {
                                out.push(format!("latency.{s} < {}ms", fmt_num(ms)))
                            }
                            _ => report.unsupported(
                                line,
                                format!("ensure threshold on `{metric}`: no loadlab equivalent"),
                            ),
                        }
                    }
                }
            }
            other => match (stat(other), v.as_f64()) {
                (Some(s), Some(ms)) => out.push(format!("latency.{s} < {}ms", fmt_num(ms))),
                _ => report.unsupported(
                    line,
                    format!("ensure.{other}: no loadlab equivalent; left out"),
                ),
            },
        }
    }
    out
}

/// `payload: {path, fields, order, skipHeader}` (or a list of them) → `data:` sets.
fn payloads(
    payload: Option<&Value>,
    lines: &Lines,
    report: &mut Report,
    data: &mut Vec<Entry>,
    fields: &mut Vec<(String, String)>,
) {
    let list = match payload {
        Some(Value::Sequence(s)) => s.clone(),
        Some(p @ Value::Mapping(_)) => vec![p.clone()],
        _ => return,
    };
    let line = lines.find("payload", 1);
    for p in &list {
        // Without `path`, Artillery is given the CSV at run time (`--payload FILE`): its
        // columns are still the payload's, so the set stays, its file to be named.
        let (path, templated) = match p.get("path").and_then(Value::as_str) {
            Some(path) => (path, templated_path(path, line, report)),
            None => {
                let what = "a payload without `path` (Artillery is given the CSV with --payload): written as `payload.csv`, name the file";
                report.unsupported(line, what);
                ("payload.csv", Some(format!("decide: {what}")))
            }
        };
        let cols: Vec<String> = p
            .get("fields")
            .and_then(Value::as_sequence)
            .into_iter()
            .flatten()
            .filter_map(|f| f.as_str().map(str::to_string))
            .collect();
        let stem = std::path::Path::new(path)
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "payload".into());
        let set = names::snake_case(p.get("name").and_then(Value::as_str).unwrap_or(&stem));
        for c in &cols {
            fields.push((c.clone(), set.clone()));
        }
        let pick = match p.get("order").and_then(Value::as_str) {
            Some("sequence") => "sequential",
            _ => "random",
        };
        let mut entry = Entry::new(
            set.clone(),
            Node::map([("csv", Node::str(path)), ("pick", Node::raw(pick))]),
        );
        if let Some(why) = templated {
            entry = entry.commented(why);
        }
        let has_header = p
            .get("skipHeader")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        if !has_header {
            entry = entry.commented(format!(
                "decide: loadlab reads column names from the CSV's first row; add the row `{}` to {path}",
                cols.join(",")
            ));
            report.unsupported(
                line,
                format!(
                    "payload {path}: has no header row (skipHeader is not set); add `{}` as its first line",
                    cols.join(",")
                ),
            );
        }
        for key in p.as_mapping().into_iter().flat_map(|m| m.keys()) {
            let key = key.as_str().unwrap_or("");
            if !["path", "fields", "order", "skipHeader", "name"].contains(&key) {
                report.unsupported(line, format!("payload {path}: `{key}` is not converted"));
            }
        }
        report.did(format!(
            "payload {path} became the data set `{set}` (columns {}, pick {pick})",
            cols.join(", ")
        ));
        data.push(entry);
    }
}

/// A `decide:` comment (and a report line) for a payload path holding a template
/// (`names-{{ $environment }}.csv`): Artillery fills it at run time, loadlab reads `csv:` as
/// a file name.
fn templated_path(path: &str, line: Option<usize>, report: &mut Report) -> Option<String> {
    if !path.contains("{{") {
        return None;
    }
    let what = format!(
        "payload path `{path}` holds a template Artillery fills at run time (`$environment` is its --environment); loadlab reads a file name: write the CSV's path"
    );
    report.unsupported(line, what.clone());
    Some(format!("decide: {what}"))
}
