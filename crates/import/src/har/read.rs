//! From a HAR entry to an [`Exchange`]: the URL split into path and query, the headers a
//! browser adds on its own dropped, the body typed (JSON, form or text), the response's JSON
//! and cookies read for correlation.

use super::model;
use super::request::{Exchange, ReqBody};
use super::time;
use crate::names;
use base64::Engine as _;
use serde_json::Value;

/// Request headers a browser adds on its own; loadlab sends its own or none.
fn dropped_request_header(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    n.starts_with(':')
        || n.starts_with("sec-")
        || matches!(
            n.as_str(),
            "host"
                | "connection"
                | "content-length"
                | "accept-encoding"
                | "accept-language"
                | "user-agent"
                | "origin"
                | "referer"
                | "pragma"
                | "cache-control"
                | "dnt"
                | "upgrade-insecure-requests"
                | "te"
                | "priority"
                | "if-modified-since"
                | "if-none-match"
                | "keep-alive"
        )
}

/// A header name as HTTP allows it (a token: RFC 9110 §5.1); recordings hold others
/// (`Accept;charset=UTF-8`), which no client could send.
fn is_header_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// Whether the browser asked only for a newer copy than its cache (the headers dropped above).
fn sent_conditional(entry: &model::Entry) -> bool {
    entry.request.headers.iter().any(|h| {
        h.name.eq_ignore_ascii_case("if-none-match")
            || h.name.eq_ignore_ascii_case("if-modified-since")
    })
}

pub fn exchange(entry: &model::Entry, url: &url::Url) -> Result<Exchange, String> {
    let method = entry.request.method.to_ascii_uppercase();
    // Without `user:password@`: a browser sends those as an Authorization header, which is
    // added here when the recording lacks it, and so moves to the environment.
    let origin = format!(
        "{}{}",
        &url[..url::Position::BeforeUsername],
        &url[url::Position::BeforeHost..url::Position::BeforePath]
    );
    let segments: Vec<String> = url.path().split('/').map(str::to_string).collect();
    let mut query: Vec<(String, String)> = url
        .query_pairs()
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect();
    let mut raw_query = None;
    let mut names_seen: Vec<&str> = Vec::new();
    if query.iter().any(|(k, _)| {
        let dup = names_seen.contains(&k.as_str());
        names_seen.push(k);
        dup
    }) {
        raw_query = url.query().map(str::to_string);
        query.clear();
    }
    let body = entry.request.post_data.as_ref().and_then(request_body);
    let mut comments = Vec::new();
    let headers = request_headers(entry, url, body.as_ref(), &mut comments);
    let started = time::parse_ms(&entry.started_date_time);
    let content = &entry.response.content;
    let response_json = response_json(content);
    let set_cookies = set_cookies(&entry.response);
    if !["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"].contains(&method.as_str()) {
        return Err(format!(
            "{method} {}: the method is not supported",
            url.path()
        ));
    }
    let status = checked_status(entry, &mut comments);
    Ok(Exchange {
        name: names::step_name(&method, url.path()),
        method,
        origin,
        segments,
        query,
        raw_query,
        headers,
        body,
        started_ms: started,
        ended_ms: started.map(|s| s + entry.time.max(0.0)),
        status,
        response_json,
        response_headers: entry
            .response
            .headers
            .iter()
            .map(|h| (h.name.clone(), h.value.clone()))
            .collect(),
        set_cookies,
        comments,
        captures: Vec::new(),
    })
}

/// The headers a request step sends: the recorded ones less those a browser adds on its own
/// and names no client could send (each named in `comments`), with the body's `Content-Type`
/// and a URL's `user:password@` as `Authorization` (so it moves to the environment).
fn request_headers(
    entry: &model::Entry,
    url: &url::Url,
    body: Option<&ReqBody>,
    comments: &mut Vec<String>,
) -> Vec<(String, String)> {
    for h in &entry.request.headers {
        if !is_header_name(&h.name) && !h.name.starts_with(':') {
            comments.push(format!(
                "the recorded header `{}` is left out: it is no valid header name",
                h.name.escape_debug()
            ));
        }
    }
    let headers: Vec<(String, String)> = entry
        .request
        .headers
        .iter()
        .filter(|h| !dropped_request_header(&h.name) && is_header_name(&h.name))
        .filter(|h| {
            // The body kind sets its own Content-Type.
            !(h.name.eq_ignore_ascii_case("content-type")
                && matches!(body, Some(ReqBody::Json(_)) | Some(ReqBody::Form(_))))
        })
        .map(|h| (h.name.clone(), h.value.clone()))
        .collect();
    let mut headers = one_per_name(headers, comments);
    let has = |headers: &[(String, String)], name: &str| {
        headers.iter().any(|(k, _)| k.eq_ignore_ascii_case(name))
    };
    if !url.username().is_empty() && !has(&headers, "authorization") {
        let pair = format!("{}:{}", url.username(), url.password().unwrap_or(""));
        let encoded = base64::engine::general_purpose::STANDARD.encode(pair);
        headers.push(("Authorization".into(), format!("Basic {encoded}")));
    }
    if let Some(ReqBody::Text(_, ct)) = body {
        if !ct.is_empty() && !has(&headers, "content-type") {
            headers.push(("Content-Type".into(), ct.clone()));
        }
    }
    headers
}

/// Each name once, case aside: Chrome records HTTP/2's provisional headers beside the real
/// ones (`Content-type` and `content-type`), and a step sends a map. A name given twice with
/// one value is kept once; with two values they are joined as HTTP joins a repeated field
/// (`Cookie` with `; `), and the step's comment says so.
fn one_per_name(
    headers: Vec<(String, String)>,
    comments: &mut Vec<String>,
) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::with_capacity(headers.len());
    for (name, value) in headers {
        let Some((kept, joined)) = out.iter_mut().find(|(k, _)| k.eq_ignore_ascii_case(&name))
        else {
            out.push((name, value));
            continue;
        };
        if *joined != value && !value.is_empty() {
            let separator = if kept.eq_ignore_ascii_case("cookie") {
                "; "
            } else {
                ", "
            };
            joined.push_str(separator);
            joined.push_str(&value);
            comments.push(format!(
                "the recorded header `{kept}` is given twice: its values are joined"
            ));
        }
    }
    out
}

/// The status a step checks: the recorded one, except a 304 answering the browser's own cache
/// check (whose headers are dropped), which the server answers 200 without them.
fn checked_status(entry: &model::Entry, comments: &mut Vec<String>) -> u16 {
    let recorded = entry
        .response
        .status
        .and_then(|s| u16::try_from(s).ok())
        .unwrap_or(0);
    if recorded == 304 && sent_conditional(entry) {
        comments.push(
            "recorded 304 Not Modified, an answer to the browser's cache check (If-None-Match / If-Modified-Since, left out): checks 200".into(),
        );
        return 200;
    }
    recorded
}

/// The response body as JSON when it is JSON (by its type or its first character), decoded
/// from base64 when the recording saved it so.
fn response_json(content: &model::Content) -> Option<Value> {
    let text = match (&content.text, content.encoding.as_deref()) {
        (Some(t), Some("base64")) => base64::engine::general_purpose::STANDARD
            .decode(t.trim())
            .ok()
            .and_then(|b| String::from_utf8(b).ok()),
        (Some(t), _) => Some(t.clone()),
        (None, _) => None,
    };
    text.and_then(|t| {
        let trimmed = t.trim_start();
        (content.mime_type.contains("json") || trimmed.starts_with('{') || trimmed.starts_with('['))
            .then(|| serde_json::from_str(&t).ok())
            .flatten()
    })
}

/// The cookies the response set, `(name, value)`: the recording's parsed cookies when they
/// match the `Set-Cookie` headers one for one, else read from the headers.
fn set_cookies(response: &model::Response) -> Vec<(String, String)> {
    let set_cookie_headers = response
        .headers
        .iter()
        .filter(|h| h.name.eq_ignore_ascii_case("set-cookie"))
        .count();
    if set_cookie_headers > 0 && response.cookies.len() == set_cookie_headers {
        response
            .cookies
            .iter()
            .map(|c| (c.name.clone(), c.value.clone()))
            .collect()
    } else {
        response
            .headers
            .iter()
            .filter(|h| h.name.eq_ignore_ascii_case("set-cookie"))
            .filter_map(|h| {
                let pair = h.value.split(';').next()?;
                let (n, v) = pair.split_once('=')?;
                Some((n.trim().to_string(), v.trim().to_string()))
            })
            .collect()
    }
}

fn request_body(post: &model::PostData) -> Option<ReqBody> {
    let mime = post.mime_type.to_ascii_lowercase();
    let text = post.text.clone().unwrap_or_default();
    if mime.contains("json") {
        if let Ok(v) = serde_json::from_str::<Value>(&text) {
            return Some(ReqBody::Json(v));
        }
    }
    if mime.starts_with("application/x-www-form-urlencoded") {
        // The text is what was sent; browsers record `params` still percent-encoded.
        let fields: Vec<(String, String)> = if text.is_empty() {
            post.params
                .iter()
                .map(|p| (p.name.clone(), p.value.clone()))
                .collect()
        } else {
            url::form_urlencoded::parse(text.as_bytes())
                .map(|(k, v)| (k.into_owned(), v.into_owned()))
                .collect()
        };
        let repeated = fields
            .iter()
            .enumerate()
            .any(|(i, (k, _))| fields[..i].iter().any(|(seen, _)| seen == k));
        if !repeated {
            return Some(ReqBody::Form(fields));
        }
        // A field sent more than once (`tag=a&tag=b`) has no place in `form:`, a mapping:
        // the body goes as it was encoded.
        let encoded = url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs(&fields)
            .finish();
        return Some(ReqBody::Text(encoded, post.mime_type.clone()));
    }
    if text.is_empty() {
        return None;
    }
    Some(ReqBody::Text(text, post.mime_type.clone()))
}
