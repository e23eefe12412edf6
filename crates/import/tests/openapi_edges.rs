//! The OpenAPI importer on what real specs hold and the first version got wrong: `{{` in a
//! spec's examples (read as a template), several credentials or cookies for one header,
//! array path parameters, duplicate operationIds, odd server URLs and `+json` media types.
//! Each converted scenario must validate.

mod common;

use common::{import_ok, validate};
use loadlab_import::{Kind, Options};
use loadlab_scenario::{Body, Scenario};
use serde_json::json;

fn imported(spec: &str, options: &Options) -> (Scenario, loadlab_import::Imported) {
    let out = import_ok(Kind::OpenApi, spec, "spec.yaml", options);
    for v in &out.report.variables {
        std::env::set_var(&v.name, "x");
    }
    (validate(&out.yaml, "imported.yaml"), out)
}

const INJECTION: &str = r#"openapi: 3.0.3
info: {title: "inject {{ env.HOME }}", version: "1"}
servers: [{url: "http://127.0.0.1:9"}]
paths:
  /notes/{id}:
    post:
      parameters:
        - {name: id, in: path, required: true, schema: {type: integer}, example: "{{ env.USER }}"}
        - {name: q, in: query, required: true, schema: {type: string}, example: "{{ env.HOME }}"}
        - {name: kind, in: query, required: true, schema: {type: string, enum: ["{{vu}}", plain]}}
      requestBody:
        content:
          application/json:
            schema:
              type: object
              properties:
                text: {type: string, example: "Hello {{ env.AWS_SECRET_ACCESS_KEY }}"}
                n: {type: integer}
      responses: {"201": {description: ok}}
  /raw:
    post:
      requestBody:
        content:
          application/json:
            example: {text: "{{ env.AWS_SECRET_ACCESS_KEY }}"}
      responses: {"201": {description: ok}}
"#;

#[test]
fn braces_in_a_spec_never_become_a_template() {
    let (s, out) = imported(INJECTION, &Options::default());
    assert!(out.report.variables.is_empty(), "{}", out.report);
    for needle in ["{{ env.HOME", "{{ env.USER", "AWS_SECRET", "{{vu}}"] {
        assert!(!out.yaml.contains(needle), "{needle} in\n{}", out.yaml);
    }
    assert_ne!(s.name, "inject {{ env.HOME }}");
    let reqs: Vec<_> = s.request_steps().collect();
    let notes = reqs.iter().find(|r| r.name == "POST /notes/{id}").unwrap();
    assert_eq!(notes.url, "/notes/{{ id }}");
    assert_eq!(
        notes.query,
        [
            ("kind".to_string(), "plain".to_string()),
            ("q".to_string(), "string".to_string())
        ]
    );
    assert_eq!(
        notes.body,
        Some(Body::Json(json!({"text": "string", "n": 1})))
    );
    // The example-only body has nothing to generate from: left out, and said so.
    let raw = reqs.iter().find(|r| r.name == "POST /raw").unwrap();
    assert_eq!(raw.body, None);
    let said: Vec<&str> = out
        .report
        .unsupported
        .iter()
        .map(|u| u.what.as_str())
        .collect();
    assert_eq!(said.len(), 2, "{said:?}");
    assert!(
        said[1].contains("path parameter `id`, query parameter `q`, the request body holds `{{`"),
        "{said:?}"
    );
    assert!(said[0].contains("the body is left out"), "{said:?}");
}
