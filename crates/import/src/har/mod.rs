//! `loadlab import har`: a browser recording (HAR 1.2, as Chrome and Firefox devtools save it)
//! becomes one flow of its API calls, with the user's pauses as think steps, response values
//! reused by later requests correlated into captures, and credentials moved out of the file.

mod correlate;
mod filter;
mod model;
mod read;
pub mod request;
mod secrets;
mod time;

use crate::error::{parse_json, ImportError};
use crate::report::Report;
use crate::scaffold::{imported_from, one_user_once, DECIDE_NOTE};
use crate::think::think_for_gap;
use crate::yaml::{Document, Entry, Item, Node};
use crate::Options;
use filter::Dropped;
use request::{Exchange, ReqBody};
use serde_json::Value;
use std::cmp::Ordering;

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
    let mut exchanges = api_exchanges(&har, file, options, &mut report)?;
    flag_literal_templates(&mut exchanges, &mut report);
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
    let value: Value = parse_json(source, file, FIX)?;
    if value.pointer("/log/entries").is_none_or(|e| !e.is_array()) {
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
    }
    serde_json::from_value(value)
        .map_err(|e| ImportError::invalid(file, format!("not a HAR 1.2 recording: {e}; {FIX}")))
}

/// The recorded API calls, in the order they started: entries the filters drop (or that are
/// not URLs) are counted in the report; none left is an error that says why.
fn api_exchanges(
    har: &model::Har,
    file: &str,
    options: &Options,
    report: &mut Report,
) -> Result<Vec<Exchange>, ImportError> {
    let total = har.log.entries.len();
    let mut dropped: Vec<(Dropped, usize)> = Vec::new();
    let mut exchanges = Vec::new();
    let base = base_url(har, options, file)?;
    let mut not_urls = 0;
    let mut telemetry: Vec<&str> = Vec::new();
    // Where the last kept request's redirect leads: that page is part of the flow.
    let mut redirect: Option<url::Url> = None;
    for entry in &har.log.entries {
        let parsed = match &base {
            Some(b) => b.join(&entry.request.url),
            None => url::Url::parse(&entry.request.url),
        };
        let Ok(url) = parsed else {
            not_urls += 1;
            report.unsupported(
                None,
                format!("a request to `{}`: not a URL", entry.request.url),
            );
            continue;
        };
        let redirected_to = redirect.as_ref().is_some_and(|r| same_resource(r, &url));
        if let Some(why) = filter::drop_reason(entry, &url, options, redirected_to) {
            if why == Dropped::Telemetry {
                let host = filter::telemetry_host(url.host_str().unwrap_or("")).unwrap_or("");
                if !telemetry.contains(&host) {
                    telemetry.push(host);
                }
            }
            match dropped.iter_mut().find(|(d, _)| *d == why) {
                Some((_, n)) => *n += 1,
                None => dropped.push((why, 1)),
            }
            continue;
        }
        redirect = redirect_target(entry, &url);
        match read::exchange(entry, &url) {
            Ok(x) => exchanges.push(x),
            Err(what) => report.unsupported(None, what),
        }
    }
    if exchanges.is_empty() {
        let mut why: Vec<String> = dropped
            .iter()
            .map(|(d, n)| format!("{n} {}", d.describe()))
            .collect();
        if not_urls > 0 {
            why.push(format!(
                "{not_urls} with a URL that is not absolute (give --base-url https://host)"
            ));
        }
        return Err(ImportError::invalid(
            file,
            format!(
                "no API request to import: {total} recorded, dropped: {}; record the API calls (XHR/fetch) or loosen --include-host/--include-path",
                if why.is_empty() { "none".into() } else { why.join(", ") }
            ),
        ));
    }
    // Browsers write entries in start order; a tool that does not is put right.
    if exchanges.iter().all(|x| x.started_ms.is_some()) {
        exchanges.sort_by(|a, b| {
            a.started_ms
                .partial_cmp(&b.started_ms)
                .unwrap_or(Ordering::Equal)
        });
    }
    report.did(format!(
        "kept {} of {total} recorded requests as steps",
        exchanges.len()
    ));
    dropped.sort();
    for (d, n) in &dropped {
        report.did(format!("dropped {n}: {}", d.describe()));
    }
    if !telemetry.is_empty() {
        report.did(format!(
            "telemetry hosts dropped: {} (keep one with --include-host)",
            telemetry.join(", ")
        ));
    }
    Ok(exchanges)
}

/// The origin relative URLs are read against: `--base-url`, else the page's URL (browsers
/// record it as the page's title), else none; refused when an entry needs one and there is none.
fn base_url(
    har: &model::Har,
    options: &Options,
    file: &str,
) -> Result<Option<url::Url>, ImportError> {
    if let Some(b) = &options.base_url {
        return url::Url::parse(b).map(Some).map_err(|e| {
            ImportError::invalid(
                file,
                format!("--base-url `{b}` is not an absolute URL ({e}); give e.g. https://shop.example.com"),
            )
        });
    }
    let relative = har
        .log
        .entries
        .iter()
        .filter(|e| url::Url::parse(&e.request.url).is_err())
        .count();
    if relative == 0 {
        return Ok(None);
    }
    let page = har
        .log
        .pages
        .iter()
        .find_map(|p| url::Url::parse(p.title.trim()).ok())
        .filter(|u| matches!(u.scheme(), "http" | "https"));
    match page {
        Some(p) => Ok(Some(p)),
        None => Err(ImportError::invalid(
            file,
            format!(
                "{relative} of {} recorded requests have a relative URL (`{}`) and the recording names no page URL; give the origin with --base-url https://host",
                har.log.entries.len(),
                har.log
                    .entries
                    .iter()
                    .find(|e| url::Url::parse(&e.request.url).is_err())
                    .map(|e| e.request.url.as_str())
                    .unwrap_or("")
            ),
        )),
    }
}

/// Where a redirect (3xx with a `Location`) sends the browser next.
fn redirect_target(entry: &model::Entry, url: &url::Url) -> Option<url::Url> {
    if !(300..400).contains(&entry.response.status) {
        return None;
    }
    let location = entry
        .response
        .headers
        .iter()
        .find(|h| h.name.eq_ignore_ascii_case("location"))?;
    url.join(&location.value).ok()
}

fn same_resource(a: &url::Url, b: &url::Url) -> bool {
    a.origin() == b.origin() && a.path() == b.path()
}

/// The scenario language has no escape for a literal `{{`: a recorded one would be read as
/// a template, so each is marked for a person to edit.
fn flag_literal_templates(exchanges: &mut [Exchange], report: &mut Report) {
    for x in exchanges {
        for slot in x.slots() {
            if slot.text.contains("{{") {
                let what = format!(
                    "`{}` {}: the recorded text holds `{{{{`, which loadlab reads as a template; edit it",
                    x.name,
                    x.describe(&slot.place)
                );
                x.comments.push(format!("decide: {what}"));
                report.unsupported(None, what);
            }
        }
    }
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
