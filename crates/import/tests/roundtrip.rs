//! What a recording sends reads back from the written YAML exactly: strings that YAML would
//! otherwise take for numbers, booleans, comments, mappings or escapes are quoted so that the
//! scenario crate's parser sees the recorded text.

mod common;

use common::{import_ok, validate};
use loadlab_import::{Kind, Options};
use loadlab_scenario::Body;
use serde_json::json;

#[test]
fn tricky_values_read_back_unchanged() {
    let body = json!({
        "colon": "a: b",
        "hash": "x # not a comment",
        "yes": "yes",
        "no": "No",
        "null": "null",
        "tilde": "~",
        "number_text": "0123",
        "float_text": "1e3",
        "quotes": "\"double\" and 'single'",
        "backslash": "C:\\temp\\new",
        "lines": "line1\nline2\ttabbed",
        "unicode": "ünïcödé ✓ 漢字",
        "braces": "{ not a template }",
        "brackets": "[1, 2]",
        "dash": "- item",
        "star": "*anchor",
        "amp": "&ref",
        "empty": "",
        "space": "  padded  ",
        "nested": {"list": ["a: 1", true, null, 2.5, -7]},
        "key: with colon": 1
    });
    let har = json!({"log": {"entries": [{
        "startedDateTime": "2026-11-26T10:00:00.000Z",
        "time": 3.0,
        "_resourceType": "fetch",
        "request": {
            "method": "POST",
            "url": "http://127.0.0.1:8080/api/notes?q=a%26b%3Dc&lang=%C3%BC",
            "headers": [
                {"name": "X-Quote", "value": "he said \"hi\": ok"},
                {"name": "Content-Type", "value": "application/json"}
            ],
            "postData": {"mimeType": "application/json", "text": body.to_string()}
        },
        "response": {"status": 201, "headers": [], "content": {"mimeType": "application/json", "text": "{}"}}
    }, {
        "startedDateTime": "2026-11-26T10:00:01.000Z",
        "time": 3.0,
        "_resourceType": "fetch",
        "request": {
            "method": "PUT",
            "url": "http://127.0.0.1:8080/api/notes/raw",
            "headers": [],
            "postData": {"mimeType": "text/plain", "text": "first line\n# second: line\n\"third\""}
        },
        "response": {"status": 204, "headers": [], "content": {"mimeType": "", "text": ""}}
    }]}});
    let out = import_ok(
        Kind::Har,
        &har.to_string(),
        "tricky.har",
        &Options::default(),
    );
    let s = validate(&out.yaml, "tricky.yaml");
    let reqs: Vec<_> = s.request_steps().collect();
    assert_eq!(reqs[0].body, Some(Body::Json(body)), "{}", out.yaml);
    // `query:` is a map: the scenario sends it in key order.
    assert_eq!(
        reqs[0].query,
        [
            ("lang".to_string(), "ü".to_string()),
            ("q".to_string(), "a&b=c".to_string())
        ]
    );
    assert_eq!(
        reqs[0].headers,
        [("X-Quote".to_string(), "he said \"hi\": ok".to_string())]
    );
    assert_eq!(
        reqs[1].body,
        Some(Body::Text("first line\n# second: line\n\"third\"".into()))
    );
    assert_eq!(
        reqs[1].headers,
        [("Content-Type".to_string(), "text/plain".to_string())]
    );
}
