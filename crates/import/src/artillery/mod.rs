//! `loadlab import artillery`: an Artillery script (config, phases, payloads, scenarios with
//! weights and flows) becomes a scenario; what has no loadlab equivalent is a comment in the
//! output and a report entry with its line.

mod auth;
mod config;
mod config_vars;
mod environments;
mod expect;
mod flow;
mod guards;
mod share;

mod templates;
mod variables;

use crate::error::{parse_yaml, ImportError};
use crate::lines::Lines;
use crate::report::Report;
use crate::yaml::{Document, Entry, Item, Node};
use serde_yaml_ng::Value;

const FIX: &str = "give an Artillery script: YAML with `config:` and `scenarios:`";

pub fn import(source: &str, file: &str, name: &str) -> Result<(Document, Report), ImportError> {
    let doc = parse_yaml(source, file, FIX)?;
    let scenarios = doc.get("scenarios").and_then(Value::as_sequence);
    let Some(scenarios) = scenarios.filter(|s| !s.is_empty()) else {
        return Err(not_a_script(&doc, file));
    };
    let lines = Lines::new(source);
    let mut report = Report::default();
    report_other_top_level_keys(&doc, &lines, &mut report);
    let mut config = config::config(doc.get("config"), &lines, &mut report);
    let config_reasons = report.unsupported.len();
    let mut walker = new_walker(&doc, &config, &lines);
    let mut flows = Vec::new();
    let mut used_names: Vec<String> = Vec::new();
    let (mut kept_weight, mut total_weight) = (0, 0);
    for (i, s) in scenarios.iter().enumerate() {
        let weight = weight(s);
        total_weight += weight;
        if let Some(flow) = scenario_flow(&mut walker, i, s, &mut used_names, &mut report) {
            kept_weight += weight;
            flows.push(flow);
        }
    }
    share::scale_load(&mut config.entries, kept_weight, total_weight, &mut report);
    rewrite_default_headers(&mut config.entries, &mut walker.rewriter);
    report_templates(&walker.rewriter, &lines, &mut report);
    report.did(format!(
        "{} scenario(s) became flows with {} request step(s)",
        flows.len(),
        walker.requests
    ));
    if flows.is_empty() {
        return Err(nothing_converted(&report, config_reasons, file));
    }
    let mut root = vec![Entry::new("name", Node::str(name))];
    root.extend(config.entries);
    root.push(Entry::new("flows", Node::Seq(flows)));
    variables::processor_variables(&mut root, &mut report);
    let header = vec![crate::scaffold::imported_from(file, "artillery", "")];
    Ok((Document { header, root }, report))
}

/// A file with no `scenarios:` list: named for what it looks like when it is another kind.
fn not_a_script(doc: &Value, file: &str) -> ImportError {
    let fix = if doc.get("openapi").is_some() || doc.get("swagger").is_some() {
        "it is an OpenAPI spec: use `loadlab import openapi`".to_string()
    } else if doc.get("log").is_some() {
        "it is a HAR recording: use `loadlab import har`".to_string()
    } else {
        FIX.to_string()
    };
    ImportError::WrongKind {
        file: file.into(),
        expected: "an Artillery script",
        why: "it has no `scenarios:` list".into(),
        fix,
    }
}

/// Top-level keys beside `config` and `scenarios` (`before:`, `after:`…) are not converted.
fn report_other_top_level_keys(doc: &Value, lines: &Lines, report: &mut Report) {
    for key in doc
        .as_mapping()
        .into_iter()
        .flat_map(|m| m.keys())
        .filter_map(Value::as_str)
    {
        if !["config", "scenarios"].contains(&key) {
            report.unsupported(lines.find(key, 1), format!("`{key}`: not converted"));
        }
    }
}

fn new_walker<'a>(doc: &Value, config: &config::Config, lines: &'a Lines<'a>) -> flow::Walker<'a> {
    flow::Walker {
        lines,
        cursor: lines.find("scenarios", 1).unwrap_or(1),
        rewriter: templates::Rewriter {
            aliases: config.aliases.clone(),
            ..templates::Rewriter::new(config.fields.clone())
        },
        requests: 0,
        think_jitter: doc.get("config").and_then(|c| {
            config::default_sections(c)
                .filter_map(|d| d.get("think")?.get("jitter"))
                .last()
                .cloned()
        }),
        auth: Default::default(),
        scenario_values: data_names(&config.entries),
    }
}

/// Templates with no loadlab equivalent, and the environment variables the script reads.
fn report_templates(rewriter: &templates::Rewriter, lines: &Lines, report: &mut Report) {
    for u in &rewriter.unknown {
        report.unsupported(
            lines.find_text(u),
            format!(
                "template `{{{{ {u} }}}}`: no loadlab equivalent (see docs/scenario.md, Templates)"
            ),
        );
    }
    for e in &rewriter.env {
        report.variable(e, "read by the script from the environment");
    }
}

/// The report is not printed when the import fails: its reasons go in the error, those about
/// the scenarios (why none converted) before those about `config`.
fn nothing_converted(report: &Report, config_reasons: usize, file: &str) -> ImportError {
    let (about_config, about_flows) = report.unsupported.split_at(config_reasons);
    let mut reasons: Vec<String> = about_flows
        .iter()
        .chain(about_config)
        .take(8)
        .map(|u| match u.line {
            Some(l) => format!("line {l}: {}", u.what),
            None => u.what.clone(),
        })
        .collect();
    if report.unsupported.len() > reasons.len() {
        reasons.push(format!(
            "({} more not converted)",
            report.unsupported.len() - reasons.len()
        ));
    }
    ImportError::invalid(
        file,
        format!(
            "no scenario could be converted:\n  {}",
            reasons.join("\n  ")
        ),
    )
}

/// `config.defaults.headers` values are templates like any other (`{{ $processEnvironment.X }}`).
fn rewrite_default_headers(entries: &mut [Entry], rewriter: &mut templates::Rewriter) {
    for e in entries.iter_mut().filter(|e| e.key == "defaults") {
        let Node::Map(defaults) = &mut e.value else {
            continue;
        };
        for h in defaults.iter_mut().filter(|d| d.key == "headers") {
            if let Node::Map(headers) = &mut h.value {
                for header in headers.iter_mut() {
                    if let Node::Str(v) = &mut header.value {
                        *v = rewriter.text(v);
                    }
                }
            }
        }
    }
}

/// One of `scenarios:` as a flow, named uniquely; `None` (reported) for a scenario of another
/// engine or one with no step converted. Keys that do not convert are noted on the flow.
fn scenario_flow(
    walker: &mut flow::Walker,
    i: usize,
    s: &Value,
    used_names: &mut Vec<String>,
    report: &mut Report,
) -> Option<Item> {
    let lines = walker.lines;
    let line = lines.find("flow", walker.cursor);
    let mut comments = Vec::new();
    if let Some(engine) = s
        .get("engine")
        .and_then(Value::as_str)
        .filter(|e| *e != "http")
    {
        report.unsupported(
            line,
            format!(
                "scenario {}: engine `{engine}` (only HTTP converts); left out",
                i + 1
            ),
        );
        return None;
    }
    for key in s
        .as_mapping()
        .into_iter()
        .flat_map(|m| m.keys())
        .filter_map(Value::as_str)
    {
        if !["name", "weight", "flow", "engine"].contains(&key) {
            let at = lines.find(key, walker.cursor.saturating_sub(3).max(1));
            report.unsupported(at, format!("scenario {}: `{key}` not converted", i + 1));
            comments.push(format!("not converted{}: `{key}`", flow::paren(at)));
        }
    }
    let mut fname = s
        .get("name")
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(|| format!("scenario {}", i + 1));
    if used_names.contains(&fname) {
        fname = format!("{fname} ({})", i + 1);
    }
    used_names.push(fname.clone());
    let weight = weight(s);
    let requests_before = walker.requests;
    let steps = match s.get("flow").and_then(Value::as_sequence) {
        Some(f) => walker.steps(f, report),
        None => Vec::new(),
    };
    if steps.is_empty() || walker.requests == requests_before {
        report.unsupported(
            line,
            format!("scenario `{fname}`: no request step converted (a loadlab flow needs one); left out"),
        );
        return None;
    }
    Some(Item {
        comments,
        value: Node::map([
            ("name", Node::str(fname)),
            ("weight", Node::raw(weight.to_string())),
            ("steps", Node::Seq(steps)),
        ]),
    })
}

/// The names of the `data:` sets written from `config`.
fn data_names(entries: &[Entry]) -> Vec<String> {
    entries
        .iter()
        .filter(|e| e.key == "data")
        .flat_map(|e| match &e.value {
            Node::Map(sets) => sets.iter().map(|s| s.key.clone()).collect(),
            _ => Vec::new(),
        })
        .collect()
}

/// A scenario's weight as Artillery reads it: 1 when not given.
fn weight(s: &Value) -> u64 {
    s.get("weight").and_then(Value::as_u64).unwrap_or(1)
}

/// A duration as loadlab writes it, in seconds (`300s`), from Artillery's number of seconds
/// or time string; `None` when it is neither.
fn seconds(v: &Value) -> Option<String> {
    duration_secs(v).map(|s| format!("{}s", crate::scaffold::fmt_num(s)))
}

/// Seconds in an Artillery duration: a number of seconds (`300`, `"300"`) or a number with a
/// unit (`300s`, `2m`, `5min`, `1.5 hours`, `500ms`); `None` for anything else or a negative.
pub(crate) fn duration_secs(v: &Value) -> Option<f64> {
    let secs = match v {
        Value::Number(n) => n.as_f64()?,
        Value::String(s) => {
            let s = s.trim();
            let split = s
                .find(|c: char| !(c.is_ascii_digit() || c == '.'))
                .unwrap_or(s.len());
            let (number, unit) = s.split_at(split);
            let n: f64 = number.parse().ok()?;
            let per = match unit.trim().to_ascii_lowercase().as_str() {
                "" | "s" | "sec" | "secs" | "second" | "seconds" => 1.0,
                "ms" | "msec" | "msecs" | "millisecond" | "milliseconds" => 0.001,
                "m" | "min" | "mins" | "minute" | "minutes" => 60.0,
                "h" | "hr" | "hrs" | "hour" | "hours" => 3600.0,
                "d" | "day" | "days" => 86_400.0,
                _ => return None,
            };
            n * per
        }
        _ => return None,
    };
    (secs.is_finite() && secs >= 0.0).then_some(secs)
}
