//! The HAR filter a user would choose, each case a defect found on real recordings: assets
//! loaded by XHR, requests without a response, telemetry, a login form answered with HTML and
//! its redirect, and recordings with relative URLs.

mod common;

use common::{import_ok, validate};
use loadlab_import::{import, Kind, Options};
use serde_json::{json, Value};

fn entry(method: &str, url: &str, kind: &str, status: i64, mime: &str) -> Value {
    json!({
        "startedDateTime": "2026-01-01T00:00:00.000Z",
        "time": 5,
        "_resourceType": kind,
        "request": {"method": method, "url": url, "headers": []},
        "response": {"status": status, "headers": [], "content": {"mimeType": mime, "text": ""}}
    })
}

fn har(entries: Vec<Value>, page: Option<&str>) -> String {
    let mut log = json!({"version": "1.2", "entries": entries});
    if let Some(p) = page {
        log["pages"] = json!([{"title": p}]);
    }
    json!({ "log": log }).to_string()
}

/// The request steps' names of the written scenario (validated, variables set).
fn steps(out: &loadlab_import::Imported) -> Vec<String> {
    for v in &out.report.variables {
        std::env::set_var(&v.name, "x");
    }
    validate(&out.yaml, "filtered.yaml")
        .request_steps()
        .map(|r| r.name.clone())
        .collect()
}

#[test]
fn assets_fetched_by_xhr_unanswered_requests_and_telemetry_are_dropped() {
    let text = har(
        vec![
            entry(
                "GET",
                "https://app.example.com/api/items",
                "xhr",
                200,
                "application/json",
            ),
            entry(
                "GET",
                "https://app.example.com/templates/list.html",
                "xhr",
                200,
                "text/html",
            ),
            entry(
                "GET",
                "https://app.example.com/chunks/7.js",
                "xhr",
                200,
                "application/javascript",
            ),
            entry("GET", "https://app.example.com/api/slow", "xhr", 0, ""),
            entry("GET", "https://app.example.com/favicon.ico", "other", 0, ""),
            entry(
                "POST",
                "https://o123.ingest.sentry.io/api/1/envelope/",
                "fetch",
                200,
                "application/json",
            ),
            entry(
                "POST",
                "https://www.google-analytics.com/g/collect",
                "ping",
                204,
                "",
            ),
        ],
        None,
    );
    let out = import_ok(Kind::Har, &text, "app.har", &Options::default());
    assert_eq!(steps(&out), ["GET /api/items"], "{}", out.yaml);
    let done = out.report.done.join("\n");
    assert!(done.contains("dropped 2: static assets"), "{done}");
    assert!(done.contains("dropped 2: without a response"), "{done}");
    assert!(
        done.contains("dropped 2: third-party analytics and telemetry"),
        "{done}"
    );
    assert!(
        done.contains("telemetry hosts dropped: sentry.io, google-analytics.com"),
        "{done}"
    );
    validate(&out.yaml, "app.yaml");
}

#[test]
fn a_login_form_answered_with_html_and_its_redirect_are_kept() {
    let mut post = entry(
        "POST",
        "https://idp.example.com/saml/login",
        "document",
        302,
        "text/html",
    );
    post["request"]["postData"] = json!({
        "mimeType": "application/x-www-form-urlencoded",
        "text": "username=ann&SAMLResponse=PHNhbWw%2BPC9zYW1sPg%3D%3D"
    });
    post["response"]["headers"] = json!([{"name": "Location", "value": "/home"}]);
    let text = har(
        vec![
            entry(
                "GET",
                "https://idp.example.com/login",
                "document",
                200,
                "text/html",
            ),
            post,
            entry(
                "GET",
                "https://idp.example.com/home",
                "document",
                200,
                "text/html",
            ),
            entry(
                "GET",
                "https://idp.example.com/about",
                "document",
                200,
                "text/html",
            ),
            entry(
                "GET",
                "https://idp.example.com/api/me",
                "xhr",
                200,
                "application/json",
            ),
        ],
        None,
    );
    let out = import_ok(Kind::Har, &text, "login.har", &Options::default());
    assert_eq!(
        steps(&out),
        ["POST /saml/login", "GET /home", "GET /api/me"],
        "{}",
        out.yaml
    );
    assert!(
        !out.yaml.contains("PHNhbWw"),
        "the SAML response is a credential"
    );
    for v in &out.report.variables {
        std::env::set_var(&v.name, "x");
    }
    validate(&out.yaml, "login.yaml");
}

#[test]
fn relative_urls_are_read_against_the_page_or_base_url() {
    let entries = vec![
        entry("GET", "/api/items", "xhr", 200, "application/json"),
        entry("POST", "/api/items", "xhr", 201, "application/json"),
    ];
    // With the page's URL recorded, relative URLs are read against its origin.
    let text = har(entries.clone(), Some("https://shop.example.com/cart"));
    let out = import_ok(Kind::Har, &text, "rel.har", &Options::default());
    assert!(
        out.yaml.contains("target: \"https://shop.example.com\""),
        "{}",
        out.yaml
    );
    assert_eq!(steps(&out), ["GET /api/items", "POST /api/items"]);

    // Without one, the error says how many and what to give, not "dropped: none".
    let text = har(entries, None);
    let err = import(Kind::Har, &text, "rel.har", &Options::default()).unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("2 of 2 recorded requests have a relative URL (`/api/items`)"),
        "{msg}"
    );
    assert!(msg.contains("--base-url"), "{msg}");
    assert!(!msg.contains("dropped: none"), "{msg}");
    let with_base = Options {
        base_url: Some("http://127.0.0.1:8080".into()),
        ..Options::default()
    };
    let out = import_ok(Kind::Har, &text, "rel.har", &with_base);
    assert!(
        out.yaml.contains("target: \"http://127.0.0.1:8080\""),
        "{}",
        out.yaml
    );
    validate(&out.yaml, "rel.yaml");
}

#[test]
fn a_recording_without_api_calls_keeps_its_pages() {
    let text = har(
        vec![
            entry(
                "GET",
                "https://www.example.com/",
                "document",
                200,
                "text/html",
            ),
            entry(
                "GET",
                "https://www.example.com/logo.png",
                "image",
                200,
                "image/png",
            ),
        ],
        None,
    );
    let out = import_ok(Kind::Har, &text, "page.har", &Options::default());
    assert_eq!(steps(&out), ["GET /", "GET /logo.png"], "{}", out.yaml);
    assert!(out
        .report
        .done
        .iter()
        .any(|d| d.contains("holds no API call")));
    validate(&out.yaml, "page.yaml");
}

/// The user's filters hold for a recording without API calls too: what `--include-host` or
/// `--exclude-path` leaves out is not brought back by keeping its pages and unanswered
/// requests (a Chrome recording with one unanswered request was imported whole).
#[test]
fn the_users_filters_hold_when_only_pages_were_recorded() {
    let text = har(
        vec![
            entry(
                "GET",
                "https://www.example.com/",
                "document",
                200,
                "text/html",
            ),
            entry("GET", "https://www.example.com/ping", "other", 0, ""),
        ],
        None,
    );
    let elsewhere = Options {
        include_hosts: vec!["nosuch.example".into()],
        ..Options::default()
    };
    let no_root = Options {
        exclude_paths: vec!["/".into()],
        ..Options::default()
    };
    for (options, dropped) in [
        (elsewhere, "filtered out by host"),
        (no_root, "filtered out by path"),
    ] {
        let msg = import(Kind::Har, &text, "page.har", &options)
            .unwrap_err()
            .to_string();
        assert!(msg.contains(&format!("2 {dropped}")), "{msg}");
    }
    // Without filters, both are kept.
    let out = import_ok(Kind::Har, &text, "page.har", &Options::default());
    assert_eq!(steps(&out), ["GET /", "GET /ping"], "{}", out.yaml);
}
