//! `loadlab import har`: a browser recording (HAR 1.2, as Chrome and Firefox devtools save it)
//! becomes one flow of its API calls, with the user's pauses as think steps, response values
//! reused by later requests correlated into captures, and credentials moved out of the file.

mod correlate;
mod filter;
mod model;
mod read;
pub mod request;
mod secrets;
mod select;
mod time;

use crate::error::{parse_json, ImportError};
use crate::report::Report;
use crate::scaffold::{imported_from, one_user_once, DECIDE_NOTE};
use crate::think::think_for_gap;
use crate::yaml::{Document, Entry, Item, Node};
use crate::Options;
use request::{Exchange, ReqBody};
use serde_json::Value;

const FIX: &str =
    "save the recording from the browser's devtools (Network tab → \"Save all as HAR\")";

pub fn import(
    source: &str,
    file: &str,
    name: &str,
    options: &Options,
) -> Result<(Document, Report), ImportError> {
    let har = read_recording(source, file)?;
    let mut report = Report::default();
    let total = har.log.entries.len();
    let mut exchanges = select::api_exchanges(&har, file, options, &mut report)?;
    drop_literal_templates(&mut exchanges, &mut report);
    if exchanges.is_empty() {
        return Err(ImportError::invalid(
            file,
            format!("no request to import: every kept request holds a literal `{{{{`:\n{report}"),
        ));
    }
    let mut taken = Vec::new();
    report.correlations = correlate::correlate(&mut exchanges, &mut taken);
    secrets::replace_credentials(&mut exchanges, &mut report);
    report.dynamic = secrets::find_dynamic(&mut exchanges);

    let target = main_origin(&exchanges);
    let defaults = common_headers(&mut exchanges);
    let flow_name = har
        .log
        .pages
        .first()
        .map(|p| p.title.trim().to_string())
        .filter(|t| !t.is_empty() && !t.contains("://"))
        .unwrap_or_else(|| name.to_string());
    let steps = steps_with_pauses(&exchanges, &target, &mut report);

    let mut root = vec![Entry::new("name", Node::str(name))];
    root.push(Entry::new("target", Node::str(target.clone())));
    if !defaults.is_empty() {
        root.push(Entry::new(
            "defaults",
            Node::map([(
                "headers",
                Node::map(defaults.into_iter().map(|(k, v)| (k, Node::str(v)))),
            )]),
        ));
    }
    root.push(one_user_once(
        "decide: the recording is one user once; choose the load (docs/scenario.md, \"Load models\")",
    ));
    root.push(Entry::new(
        "flows",
        Node::Seq(vec![Item::new(Node::map([
            ("name", Node::str(flow_name)),
            ("steps", Node::Seq(steps)),
        ]))]),
    ));
    let header = vec![
        imported_from(
            file,
            "har",
            &format!(": {} of {total} recorded requests", exchanges.len()),
        ),
        DECIDE_NOTE.to_string(),
    ];
    Ok((Document { header, root }, report))
}

/// The recording, refused with a pointer to the right importer when it is not a HAR file.
fn read_recording(source: &str, file: &str) -> Result<model::Har, ImportError> {
    let mut value: Value = parse_json(source, file, FIX)?;
    let Some(Value::Array(entries)) = value.pointer_mut("/log/entries").map(Value::take) else {
        let hint = if value.get("openapi").is_some() || value.get("swagger").is_some() {
            "it is an OpenAPI spec: use `loadlab import openapi`".to_string()
        } else {
            FIX.to_string()
        };
        return Err(ImportError::WrongKind {
            file: file.into(),
            expected: "a HAR recording",
            why: "it has no `log.entries` list".into(),
            fix: hint,
        });
    };
    let entries = entries
        .into_iter()
        .enumerate()
        .map(|(i, entry)| read_entry(i, entry, file))
        .collect::<Result<_, _>>()?;
    // Pages only name the recording's start URL: a malformed list is read as none.
    let pages = value
        .pointer_mut("/log/pages")
        .map(Value::take)
        .and_then(|p| serde_json::from_value::<Option<Vec<model::Page>>>(p).ok())
        .flatten()
        .unwrap_or_default();
    Ok(model::Har {
        log: model::Log { entries, pages },
    })
}

/// One entry, refused with its index, method and URL when a field it needs has a shape no
/// recorder writes (a `request` that is not an object, a `url` that is a number).
fn read_entry(index: usize, entry: Value, file: &str) -> Result<model::Entry, ImportError> {
    let text = |pointer: &str| {
        entry
            .pointer(pointer)
            .and_then(Value::as_str)
            .unwrap_or("?")
            .to_string()
    };
    let (method, url) = (text("/request/method"), text("/request/url"));
    serde_json::from_value(entry).map_err(|e| {
        ImportError::invalid(
            file,
            format!("not a HAR 1.2 recording: log.entries[{index}] ({method} {url}): {e}; {FIX}"),
        )
    })
}

/// The scenario language has no escape for a literal `{{`: a recorded body that is binary is
/// left out of its step (said so), and a request whose recorded text holds `{{` is left out
/// of the scenario, named in the report, rather than written as a template that fails.
fn drop_literal_templates(exchanges: &mut Vec<Exchange>, report: &mut Report) {
    for x in exchanges.iter_mut() {
        if let Some(ReqBody::Text(t, _)) = &x.body {
            if t.chars()
                .any(|c| c.is_control() && !matches!(c, '\t' | '\r' | '\n'))
            {
                let what = format!(
                    "`{}` body: binary ({} bytes), which a scenario cannot hold; left out of the step",
                    x.name,
                    t.len()
                );
                x.comments.push(format!("decide: {what}"));
                report.unsupported(None, what);
                x.body = None;
            }
        }
    }
    exchanges.retain(|x| {
        let Some(slot) = x.slots().into_iter().find(|s| s.text.contains("{{")) else {
            return true;
        };
        report.unsupported(
            None,
            format!(
                "`{}` {}: the recorded text holds `{{{{`, which loadlab reads as a template (it has no escape); the request is left out",
                x.name,
                x.describe(&slot.place)
            ),
        );
        false
    });
}

/// One request step per exchange, with a think step wherever the user paused long enough
/// between the end of one and the start of the next.
fn steps_with_pauses(exchanges: &[Exchange], target: &str, report: &mut Report) -> Vec<Item> {
    let mut steps = Vec::new();
    let mut thinks = 0;
    for i in 0..exchanges.len() {
        if i > 0 {
            if let (Some(end), Some(start)) = (exchanges[i - 1].ended_ms, exchanges[i].started_ms) {
                if let Some(think) = think_for_gap(start - end) {
                    thinks += 1;
                    steps.push(Item::new(Node::map([("think", Node::raw(think))])));
                }
            }
        }
        steps.push(step_item(&exchanges[i], target));
    }
    if thinks > 0 {
        report.did(format!(
            "{thinks} recorded pause(s) of 100 ms or more became think steps"
        ));
    }

    steps
}

/// The origin most requests go to: the scenario's `target:`.
fn main_origin(exchanges: &[Exchange]) -> String {
    let mut counts: Vec<(&str, usize)> = Vec::new();
    for x in exchanges {
        match counts.iter_mut().find(|(o, _)| *o == x.origin) {
            Some((_, n)) => *n += 1,
            None => counts.push((&x.origin, 1)),
        }
    }
    counts
        .iter()
        .max_by_key(|(_, n)| *n)
        .map(|(o, _)| o.to_string())
        .unwrap_or_default()
}

/// Headers every request sends with the same literal value move to `defaults.headers`.
fn common_headers(exchanges: &mut [Exchange]) -> Vec<(String, String)> {
    if exchanges.len() < 2 {
        return Vec::new();
    }
    let first = exchanges[0].headers.clone();
    let common: Vec<(String, String)> = first
        .into_iter()
        .filter(|(k, v)| {
            !v.contains("{{")
                && exchanges.iter().all(|x| {
                    x.headers
                        .iter()
                        .any(|(k2, v2)| k2.eq_ignore_ascii_case(k) && v2 == v)
                })
        })
        .collect();
    for x in exchanges.iter_mut() {
        x.headers
            .retain(|(k, _)| !common.iter().any(|(c, _)| c.eq_ignore_ascii_case(k)));
    }
    common
}

fn step_item(x: &Exchange, target: &str) -> Item {
    let path = x.path();
    let url = if x.origin == target {
        path
    } else {
        format!("{}{path}", x.origin)
    };
    let mut m = vec![
        Entry::new("name", Node::str(x.name.clone())),
        Entry::new(x.method.to_ascii_lowercase(), Node::str(url)),
    ];
    if !x.query.is_empty() {
        m.push(Entry::new(
            "query",
            Node::map(
                x.query
                    .iter()
                    .map(|(k, v)| (k.clone(), Node::str(v.clone()))),
            ),
        ));
    }
    if !x.headers.is_empty() {
        m.push(Entry::new(
            "headers",
            Node::map(
                x.headers
                    .iter()
                    .map(|(k, v)| (k.clone(), Node::str(v.clone()))),
            ),
        ));
    }
    match &x.body {
        Some(ReqBody::Json(v)) => m.push(Entry::new("json", Node::json(v))),
        Some(ReqBody::Form(f)) => m.push(Entry::new(
            "form",
            Node::map(f.iter().map(|(k, v)| (k.clone(), Node::str(v.clone())))),
        )),
        Some(ReqBody::Text(t, _)) => m.push(Entry::new("body", Node::str(t.clone()))),
        None => {}
    }
    if x.status >= 100 {
        m.push(Entry::new(
            "check",
            Node::map([("status", Node::raw(x.status.to_string()))]),
        ));
    }
    if !x.captures.is_empty() {
        m.push(Entry::new(
            "capture",
            Node::map(x.captures.iter().map(|(k, v)| (k.clone(), v.clone()))),
        ));
    }
    Item {
        comments: x.comments.clone(),
        value: Node::Map(m),
    }
}
