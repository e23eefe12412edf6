//! Which entries of a recording become steps, in the order they started: the filter's choice,
//! or — for a recording that holds no API call at all (a page load, a single download) — its
//! page, asset and unanswered requests, said so, rather than a refusal.

use super::filter::{self, Dropped};
use super::model;
use super::read;
use super::request::Exchange;
use crate::error::ImportError;
use crate::report::Report;
use crate::Options;
use std::cmp::Ordering;

/// What one pass over the entries kept and left out.
#[derive(Default)]
struct Selection<'a> {
    exchanges: Vec<Exchange>,
    dropped: Vec<(Dropped, usize)>,
    not_urls: Vec<&'a str>,
    telemetry: Vec<&'static str>,
    unsupported: Vec<String>,
}

/// The steps of the recording; none left is an error that says why.
pub fn api_exchanges(
    har: &model::Har,
    file: &str,
    options: &Options,
    report: &mut Report,
) -> Result<Vec<Exchange>, ImportError> {
    let total = har.log.entries.len();
    let base = base_url(har, options, file)?;
    let mut chosen = select(har, base.as_ref(), options, false);
    let fallback = chosen.exchanges.is_empty()
        && chosen.dropped.iter().any(|(d, _)| {
            matches!(
                d,
                Dropped::Document | Dropped::StaticAsset | Dropped::NoResponse
            )
        });
    if fallback {
        chosen = select(har, base.as_ref(), options, true);
        report.did(
            "the recording holds no API call (XHR/fetch): its page, asset and unanswered requests are kept as steps",
        );
    }
    for u in &chosen.unsupported {
        report.unsupported(None, u.clone());
    }
    let Selection {
        mut exchanges,
        mut dropped,
        not_urls,
        telemetry,
        ..
    } = chosen;
    if exchanges.is_empty() {
        let mut why: Vec<String> = dropped
            .iter()
            .map(|(d, n)| format!("{n} {}", d.describe()))
            .collect();
        if let Some(first) = not_urls.first() {
            why.push(format!(
                "{} whose URL is not absolute (`{first}`: give --base-url https://host)",
                not_urls.len()
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

/// One pass: `relaxed` keeps documents, assets and unanswered requests too.
fn select<'a>(
    har: &'a model::Har,
    base: Option<&url::Url>,
    options: &Options,
    relaxed: bool,
) -> Selection<'a> {
    let mut out = Selection::default();
    // Where the last kept request's redirect leads: that page is part of the flow.
    let mut redirect: Option<url::Url> = None;
    for entry in &har.log.entries {
        let parsed = match base {
            Some(b) => b.join(&entry.request.url),
            None => url::Url::parse(&entry.request.url),
        };
        let Ok(url) = parsed else {
            out.not_urls.push(&entry.request.url);
            out.unsupported
                .push(format!("a request to `{}`: not a URL", entry.request.url));
            continue;
        };
        let redirected_to = redirect.as_ref().is_some_and(|r| same_resource(r, &url));
        let why = filter::drop_reason(entry, &url, options, redirected_to).filter(|d| {
            !(relaxed
                && matches!(
                    d,
                    Dropped::Document | Dropped::StaticAsset | Dropped::NoResponse
                ))
        });
        if let Some(why) = why {
            if why == Dropped::Telemetry {
                let host = filter::telemetry_host(url.host_str().unwrap_or("")).unwrap_or("");
                if !out.telemetry.contains(&host) {
                    out.telemetry.push(host);
                }
            }
            match out.dropped.iter_mut().find(|(d, _)| *d == why) {
                Some((_, n)) => *n += 1,
                None => out.dropped.push((why, 1)),
            }
            continue;
        }
        redirect = redirect_target(entry, &url);
        match read::exchange(entry, &url) {
            Ok(x) => out.exchanges.push(x),
            Err(what) => out.unsupported.push(what),
        }
    }
    out
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
    let relative: Vec<&str> = har
        .log
        .entries
        .iter()
        .map(|e| e.request.url.as_str())
        .filter(|u| url::Url::parse(u).is_err())
        .collect();
    let Some(first) = relative.first() else {
        return Ok(None);
    };
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
                "{} of {} recorded requests have a relative URL (`{first}`) and the recording names no page URL; give the origin with --base-url https://host",
                relative.len(),
                har.log.entries.len(),
            ),
        )),
    }
}

/// Where a redirect (3xx with a `Location`) sends the browser next.
fn redirect_target(entry: &model::Entry, url: &url::Url) -> Option<url::Url> {
    if !entry
        .response
        .status
        .is_some_and(|s| (300..400).contains(&s))
    {
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
