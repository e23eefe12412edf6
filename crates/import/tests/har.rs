//! The HAR importer on a Chrome recording of the built-in target's flow (sign in, create an
//! application, read it, submit it, with a page's static assets and an analytics beacon):
//! the token and the application id are correlated without help, and the scenario validates.

mod common;

use common::{import_ok, validate, variable_names};
use loadlab_import::{import, Kind, Options};
use loadlab_scenario::{Body, CaptureSource, Check, Scenario, Step};
use std::time::Duration;

const FIXTURE: &str = include_str!("fixtures/target-flow.har");
const TOKEN: &str = "user1.3a9d5c7e1f2b4d60.6f1c2a9e4b7d3c5a8e9f0a1b2c3d4e5f";

fn without_analytics() -> Options {
    Options {
        exclude_hosts: vec!["google-analytics.com".into()],
        ..Options::default()
    }
}

fn parse(yaml: &str) -> Scenario {
    // The password is read from the environment when the scenario loads.
    std::env::set_var("PASSWORD", "password");
    validate(yaml, "target-flow.yaml")
}

#[test]
fn token_and_id_are_correlated_and_the_scenario_validates() {
    let out = import_ok(Kind::Har, FIXTURE, "target-flow.har", &without_analytics());
    let r = &out.report;
    let found: Vec<(&str, &str, &str)> = r
        .correlations
        .iter()
        .map(|c| (c.variable.as_str(), c.step.as_str(), c.capture.as_str()))
        .collect();
    assert_eq!(
        found,
        [
            ("token", "POST /api/auth/signin", "$.token"),
            ("application_id", "POST /api/applications", "$.id"),
        ]
    );
    assert_eq!(
        r.correlations[0].uses,
        [
            "`POST /api/applications` header Authorization",
            "`GET /api/applications/{id}` header Authorization",
            "`POST /api/applications/{id}/submit` header Authorization",
        ]
    );
    assert_eq!(
        r.correlations[1].uses,
        [
            "`GET /api/applications/{id}` path",
            "`POST /api/applications/{id}/submit` path",
        ]
    );
    let vars = variable_names(r);
    assert_eq!(vars, ["PASSWORD"]);
    assert_eq!(r.dynamic.len(), 1, "{:?}", r.dynamic);
    assert_eq!(r.dynamic[0].place, "header X-Request-Id");
    assert_eq!(r.dynamic[0].looks_like, "a UUID");
    assert!(r.done[0].starts_with("kept 5 of 10"), "{:?}", r.done);
    assert!(
        !out.yaml.contains(TOKEN),
        "the recorded token is not in the file"
    );

    let s = parse(&out.yaml);
    assert_eq!(s.target.as_deref(), Some("http://127.0.0.1:8080"));
    assert_eq!(
        s.defaults.headers,
        [("Accept".to_string(), "application/json".to_string())]
    );
    let steps = &s.flows[0].steps;
    let outline: Vec<String> = steps
        .iter()
        .map(|st| match st {
            Step::Request(r) => format!("{} {}", r.method.as_str(), r.url),
            Step::Think(t) => format!("think {:?}", t.min),
            other => format!("{other:?}"),
        })
        .collect();
    assert_eq!(
        outline,
        [
            "GET /api/ping",
            "think 2.5s",
            "POST /api/auth/signin",
            "think 1.5s",
            "POST /api/applications",
            "GET /api/applications/{{ application_id }}",
            "think 5s",
            "POST /api/applications/{{ application_id }}/submit",
        ]
    );
    let requests: Vec<_> = s.request_steps().collect();
    let signin = requests[1];
    assert_eq!(signin.name, "POST /api/auth/signin");
    assert_eq!(
        signin.body,
        Some(Body::Json(serde_json::json!({
            "username": "user1",
            "password": "{{ env.PASSWORD }}"
        })))
    );
    assert_eq!(signin.captures[0].name, "token");
    assert!(
        matches!(&signin.captures[0].source, CaptureSource::JsonPath(p) if p.text() == "$.token")
    );
    assert_eq!(signin.checks, [Check::Status(vec![200])]);
    let create = requests[2];
    assert_eq!(create.checks, [Check::Status(vec![201])]);
    assert_eq!(create.captures[0].name, "application_id");
    for r in &requests[2..] {
        assert_eq!(
            r.headers,
            [(
                "Authorization".to_string(),
                "Bearer {{ token }}".to_string()
            )],
            "{}",
            r.name
        );
    }
    assert_eq!(requests[3].name, "GET /api/applications/{id}");
    assert_eq!(steps.len(), 8);
    assert!(matches!(&steps[1], Step::Think(t) if t.min == Duration::from_millis(2500)));
}

#[test]
fn filters_choose_what_is_kept() {
    // Third-party telemetry is dropped by default, and the report names its hosts.
    let default = import_ok(Kind::Har, FIXTURE, "target-flow.har", &Options::default());
    assert!(
        default.report.done[0].starts_with("kept 5 of 10"),
        "{:?}",
        default.report.done
    );
    assert!(
        default
            .report
            .done
            .iter()
            .any(|d| d.starts_with("telemetry hosts dropped: google-analytics.com")),
        "{:?}",
        default.report.done
    );
    // Named with --include-host, a telemetry host is kept.
    let with_analytics = Options {
        include_hosts: vec!["127.0.0.1:8080".into(), "google-analytics.com".into()],
        ..Options::default()
    };
    let all = import_ok(Kind::Har, FIXTURE, "target-flow.har", &with_analytics);
    assert!(
        all.report.done[0].starts_with("kept 6 of 10"),
        "{:?}",
        all.report.done
    );
    assert!(
        all.yaml
            .contains("post: \"https://www.google-analytics.com/g/collect\""),
        "another host is written as an absolute URL:\n{}",
        all.yaml
    );
    parse(&all.yaml);

    let only_apps = Options {
        include_paths: vec!["/api/applications".into()],
        ..Options::default()
    };
    let apps = import_ok(Kind::Har, FIXTURE, "target-flow.har", &only_apps);
    assert!(apps.report.done[0].starts_with("kept 3 of 10"));
    // Without the sign-in, the token has no source: it becomes a variable to set.
    assert!(apps
        .report
        .correlations
        .iter()
        .all(|c| c.variable != "token"));
    let vars = variable_names(&apps.report);
    assert_eq!(vars, ["TOKEN"]);
    assert!(
        apps.yaml.contains("Bearer {{ env.TOKEN }}"),
        "{}",
        apps.yaml
    );

    let none = Options {
        exclude_paths: vec!["/".into()],
        ..Options::default()
    };
    let err = import(Kind::Har, FIXTURE, "target-flow.har", &none).unwrap_err();
    assert!(
        err.to_string().contains("no API request to import"),
        "{err}"
    );
}

#[test]
fn bad_input_names_the_file_and_the_fix() {
    let err = import(Kind::Har, "{ not json", "rec.har", &Options::default()).unwrap_err();
    let text = err.to_string();
    assert!(text.starts_with("rec.har:1:3: not valid JSON"), "{text}");
    assert!(text.contains("Save all as HAR"), "{text}");
    let err = import(
        Kind::Har,
        r#"{"openapi": "3.0.0"}"#,
        "api.json",
        &Options::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("api.json is not a HAR recording"), "{err}");
    assert!(err.contains("loadlab import openapi"), "{err}");
}

/// A recording of 400 API calls whose answers hold 40 values each: correlation looks at every
/// value against every later request, and must stay fast: never quadratic in the values
/// (docs/import.md, "Correlation on large recordings").
#[test]
fn a_large_recording_imports_quickly() {
    let mut entries = Vec::new();
    for i in 0..400u64 {
        let mut answer = serde_json::Map::new();
        for k in 0..40u64 {
            answer.insert(
                format!("field{k}"),
                serde_json::json!(format!("v{i}-{k}-x")),
            );
            answer.insert(format!("n{k}"), serde_json::json!(100_000 + i * 100 + k));
        }
        answer.insert("id".into(), serde_json::json!(i + 1));
        let path = if i == 0 {
            "/api/items".to_string()
        } else {
            format!("/api/items/{i}")
        };
        entries.push(serde_json::json!({
            "startedDateTime": format!("2026-11-26T10:{:02}:{:02}.000Z", i / 60, i % 60),
            "time": 5.0,
            "_resourceType": "fetch",
            "request": {"method": "GET", "url": format!("http://h{path}"), "headers": []},
            "response": {"status": 200, "headers": [], "content": {
                "mimeType": "application/json", "text": serde_json::Value::Object(answer).to_string()
            }}
        }));
    }
    let har = serde_json::json!({"log": {"entries": entries}}).to_string();
    let started = std::time::Instant::now();
    let out = import_ok(Kind::Har, &har, "big.har", &Options::default());
    let took = started.elapsed();
    assert!(took.as_secs() < 20, "took {took:?}");
    // Each item's id is the next request's path: 399 correlations.
    assert_eq!(out.report.correlations.len(), 399);
    assert_eq!(out.report.correlations[0].variable, "item_id");
    parse(&out.yaml);
}

/// A session cookie the server set is sent back by later requests: the engine keeps no cookie
/// jar, so it is captured from `Set-Cookie` and sent in `Cookie`; a cookie set before the
/// recording has no source and becomes a variable.
#[test]
fn a_session_cookie_is_correlated() {
    let entry = |t: &str,
                 method: &str,
                 path: &str,
                 req_headers: serde_json::Value,
                 resp_headers: serde_json::Value,
                 status: u16| {
        serde_json::json!({
            "startedDateTime": t, "time": 4.0, "_resourceType": "xhr",
            "request": {"method": method, "url": format!("https://shop.example.com{path}"), "headers": req_headers},
            "response": {"status": status, "headers": resp_headers,
                         "content": {"mimeType": "application/json", "text": "{\"ok\":true}"}}
        })
    };
    let har = serde_json::json!({"log": {"entries": [
        entry("2026-11-26T10:00:00.000Z", "POST", "/login", serde_json::json!([
            {"name": "Cookie", "value": "theme=dark"}
        ]), serde_json::json!([
            {"name": "Set-Cookie", "value": "SESSION=8f14e45fceea167a5a36dedd4bea2543; Path=/; HttpOnly"}
        ]), 200),
        entry("2026-11-26T10:00:00.050Z", "GET", "/cart", serde_json::json!([
            {"name": "Cookie", "value": "theme=dark; SESSION=8f14e45fceea167a5a36dedd4bea2543"}
        ]), serde_json::json!([]), 200),
    ]}});
    let out = import_ok(Kind::Har, &har.to_string(), "shop.har", &Options::default());
    let c = &out.report.correlations;
    assert_eq!(c.len(), 1, "{}", out.report);
    assert_eq!(c[0].variable, "session_cookie");
    assert_eq!(c[0].uses, ["`GET /cart` header Cookie"]);
    let vars = variable_names(&out.report);
    assert_eq!(vars, ["COOKIE_THEME"]);
    std::env::set_var("COOKIE_THEME", "dark");
    let s = parse(&out.yaml);
    let reqs: Vec<_> = s.request_steps().collect();
    assert!(matches!(&reqs[0].captures[0].source, CaptureSource::Header(h) if h == "Set-Cookie"));
    assert_eq!(
        reqs[1].headers,
        [(
            "Cookie".to_string(),
            "theme={{ env.COOKIE_THEME }}; {{ session_cookie }}".to_string()
        )]
    );
}

/// Validates what `out` wrote, with the variables it asks for set (to dummy values).
fn validate_imported(out: &loadlab_import::Imported, file: &str) -> Scenario {
    for v in &out.report.variables {
        std::env::set_var(&v.name, "dummy");
    }
    validate(&out.yaml, file)
}

/// A file of the real-world corpus (tests/corpus/MANIFEST names its source).
fn corpus(name: &str) -> String {
    std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/corpus/har")
            .join(name),
    )
    .unwrap()
}

/// Recordings made with a warm cache hold 304 answers to the browser's `If-None-Match`; the
/// conditional headers are left out, so the scenario checks what the server sends without
/// them (200), and says why. (Checking 304 would fail every run.)
#[test]
fn a_browsers_cache_check_is_imported_as_a_plain_request() {
    for file in [
        "mitmproxy-chrome.har",
        "browsertime-chrome-diskcache.har",
        "browsertime-firefox-diskcache.har",
    ] {
        let out = import_ok(Kind::Har, &corpus(file), file, &Options::default());
        assert!(!out.yaml.contains("status: 304"), "{file}:\n{}", out.yaml);
        assert!(
            out.yaml.contains("recorded 304 Not Modified") && !out.yaml.contains("If-None-Match:"),
            "{file}:\n{}",
            out.yaml
        );
        validate_imported(&out, "cached.yaml");
    }
}

/// A form field sent twice (`link=a&link=b`) cannot be a key of `form:` twice: the body goes
/// as it was encoded, every field kept, in order.
#[test]
fn repeated_form_fields_are_sent_as_the_encoded_body() {
    let out = import_ok(
        Kind::Har,
        &corpus("har-to-k6-url-full.har"),
        "url-full.har",
        &Options::default(),
    );
    let s = validate_imported(&out, "url-full.yaml");
    let bodies: Vec<String> = s
        .request_steps()
        .filter_map(|step| match &step.body {
            Some(Body::Text(t)) => Some(t.clone()),
            _ => None,
        })
        .collect();
    assert!(
        bodies.iter().any(|b| b.contains("link=http%3A%2F%2Fexample.com%2Fimage%2F%24%7Bfoo%7D&link=http%3A%2F%2Fexample.com%2Fimage%2F%24%7Bbar%7D")),
        "{bodies:?}\n{}",
        out.yaml
    );
}

/// Header names no client could send (`Accept;charset=UTF-8`, recorded by some tools) are left
/// out, each named in a comment; the rest of the request stays.
#[test]
fn invalid_header_names_are_left_out_and_named() {
    for (file, name) in [
        ("har-to-k6-pseudo-headers.har", "Accept;charset=UTF-8"),
        (
            "har-to-k6-blacklisted-headers.har",
            "Content-Length;something",
        ),
    ] {
        let out = import_ok(Kind::Har, &corpus(file), file, &Options::default());
        assert!(
            out.yaml
                .contains(&format!("# the recorded header `{name}` is left out")),
            "{file}:\n{}",
            out.yaml
        );
        assert!(!out.yaml.contains(&format!("{name}:")), "{}", out.yaml);
        validate_imported(&out, "headers.yaml");
    }
}

/// Shapes real recorders write that HAR 1.2 does not: Polly.js's array for a repeated header,
/// a beacon's object as a form value, `pages: null`, and Chrome's provisional HTTP/2 headers
/// beside the real ones (the same name twice, in another case).
#[test]
fn other_recorders_shapes_load_and_a_header_recorded_twice_is_sent_once() {
    let har = serde_json::json!({"log": {"pages": null, "entries": [
        {"request": {"method": "POST", "url": "http://shop.test/api/beacon",
            "headers": [
                {"name": "Accept", "value": ["application/json", "text/plain"]},
                {"name": "Content-type", "value": "text/plain"},
                {"name": "content-type", "value": "text/plain"},
                {"name": "ADRUM", "value": "isAjax:true"},
                {"name": "adrum", "value": "isAjax:true"},
                {"name": "X-Count", "value": 3}],
            "postData": {"mimeType": "application/x-www-form-urlencoded",
                "params": [{"name": "event", "value": {"kind": "click", "n": 2}}]}},
         "response": {"status": 204, "headers": null}}
    ]}});
    let out = import_ok(
        Kind::Har,
        &har.to_string(),
        "beacon.har",
        &Options::default(),
    );
    let scenario = validate(&out.yaml, "beacon.yaml");
    let Step::Request(step) = &scenario.flows[0].steps[0] else {
        panic!("an HTTP step: {}", out.yaml)
    };
    let headers: Vec<(&str, &str)> = step
        .headers
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    assert_eq!(
        headers,
        [
            ("ADRUM", "isAjax:true"),
            ("Accept", "application/json, text/plain"),
            ("X-Count", "3"),
        ],
        "{}",
        out.yaml
    );
    assert!(
        out.yaml.contains(r#"{\"kind\":\"click\",\"n\":2}"#),
        "the object is sent as its JSON: {}",
        out.yaml
    );

    let broken = r#"{"log": {"entries": [{"request": {"method": "GET", "url": "http://a.test/"}},
        {"request": {"method": "GET", "url": "http://a.test/x", "headers": 7}}]}}"#;
    let err = import(Kind::Har, broken, "broken.har", &Options::default()).unwrap_err();
    assert!(
        err.to_string()
            .contains("log.entries[1] (GET http://a.test/x): invalid type: integer `7`"),
        "{err}"
    );
}
