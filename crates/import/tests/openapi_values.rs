//! The values an OpenAPI import sends, from what real specs showed: a pagination marker left as
//! the spec wrote it rather than taken for a secret (Box), while a key beside it still leaves.

mod common;

use common::{import_ok, validate, variable_names};
use loadlab_import::{Kind, Options};
use loadlab_scenario::Scenario;

fn imported(spec: &str) -> (Scenario, loadlab_import::Imported) {
    let out = import_ok(Kind::OpenApi, spec, "spec.yaml", &Options::default());
    for v in &out.report.variables {
        std::env::set_var(&v.name, "x");
    }
    (validate(&out.yaml, "imported.yaml"), out)
}

/// Box's spec (box/box-openapi, Apache-2.0) gives its `marker` parameter this example.
const MARKER: &str = "JV9IRGZmieiBasejOG9yDCRNgd2ymoZIbjsxbJMjIs3kioVii";
const KEY: &str = "Zx8Qw3Lr9Tb2Yk7Mn4Vc6Hp1Sd5Fg0JjKuE2";

#[test]
fn a_pagination_marker_is_no_secret_and_a_key_beside_it_is() {
    let spec = format!(
        r#"openapi: 3.0.3
info: {{title: t, version: "1"}}
servers: [{{url: "http://127.0.0.1:9"}}]
paths:
  /folders:
    get:
      parameters:
        - {{name: marker, in: query, required: true, schema: {{type: string}}, example: {MARKER}}}
        - {{name: If-None-Match, in: header, required: true, schema: {{type: string}}, example: "{MARKER}"}}
        - {{name: api_key, in: query, required: true, schema: {{type: string}}, example: {KEY}}}
        - {{name: x-request-note, in: header, required: true, schema: {{type: string}}, example: {KEY}}}
      responses: {{"200": {{description: ok}}}}
"#
    );
    let (s, out) = imported(&spec);
    let step = s.request_steps().next().unwrap();
    assert!(
        step.query
            .contains(&("marker".to_string(), MARKER.to_string())),
        "{}",
        out.yaml
    );
    assert!(
        step.headers
            .contains(&("If-None-Match".to_string(), MARKER.to_string())),
        "{}",
        out.yaml
    );
    assert!(!out.yaml.contains(KEY), "{}", out.yaml);
    assert_eq!(variable_names(&out.report), ["API_KEY"]);
}

const HEADER_STYLES: &str = r#"openapi: 3.0.3
info: {title: t, version: "1"}
servers: [{url: "http://127.0.0.1:9"}]
paths:
  /items/{id}:
    get:
      parameters:
        - {name: id, in: path, required: true, style: matrix, explode: true, schema: {type: array, items: {type: integer}}, example: [1, 2]}
        - {name: X-Ids, in: header, required: true, schema: {type: array, items: {type: integer}}, example: [1, 2]}
        - {name: X-Filter, in: header, required: true, schema: {type: object}, example: {a: 1, b: 2}}
        - {name: X-Exploded, in: header, required: true, explode: true, schema: {type: object}, example: {a: 1, b: 2}}
        - {name: tags, in: cookie, required: true, explode: false, schema: {type: array, items: {type: string}}, example: [x, y]}
        - {name: theme, in: cookie, required: true, schema: {type: string}, example: dark}
      responses: {"200": {description: ok}}
"#;

/// Headers are `simple` (OAS 3, "Style Values"): never the JSON of the example.
#[test]
fn header_and_cookie_parameters_are_serialised_by_their_style() {
    let (s, out) = imported(HEADER_STYLES);
    let step = s.request_steps().next().unwrap();
    let header = |name: &str| {
        step.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    };
    assert_eq!(header("X-Ids"), Some("1,2"), "{}", out.yaml);
    assert_eq!(header("X-Filter"), Some("a,1,b,2"), "{}", out.yaml);
    assert_eq!(header("X-Exploded"), Some("a=1,b=2"), "{}", out.yaml);
    assert_eq!(
        header("Cookie"),
        Some("tags=x,y; theme=dark"),
        "{}",
        out.yaml
    );
    assert!(out.yaml.contains("- \";id=1;id=2\""), "{}", out.yaml);
}

/// PagerDuty's spec names every resource's path parameter `id`: one `data:` value for all of
/// them sent an addon's id as an ability's.
const SHARED_ID: &str = r#"openapi: 3.0.3
info: {title: t, version: "1"}
servers: [{url: "http://127.0.0.1:9"}]
paths:
  /abilities/{id}:
    get:
      parameters: [{name: id, in: path, required: true, schema: {type: string}, example: sso}]
      responses: {"200": {description: ok}}
  /addons/{id}:
    get:
      parameters: [{name: id, in: path, required: true, schema: {type: string}, example: PQ1ADDN}]
      responses: {"200": {description: ok}}
    delete:
      parameters: [{name: id, in: path, required: true, schema: {type: string}, example: PQ1ADDN}]
      responses: {"204": {description: ok}}
"#;

#[test]
fn each_resource_s_id_is_its_own_data_variable() {
    let (s, out) = imported(SHARED_ID);
    let urls: Vec<String> = s.request_steps().map(|r| r.url.clone()).collect();
    assert_eq!(
        urls,
        [
            "/abilities/{{ ability_id }}",
            "/addons/{{ addon_id }}",
            "/addons/{{ addon_id }}"
        ],
        "{}",
        out.yaml
    );
    assert!(
        out.yaml
            .contains("data:\n  ability_id:\n    values:\n      - sso\n  addon_id:\n    values:\n      - PQ1ADDN\n"),
        "{}",
        out.yaml
    );
}

/// A generated body keeps the schema's constraints (the hunt's params.yaml, v31.yaml and
/// recursive.yaml): an API validating its input would answer 400 to every request.
const CONSTRAINED: &str = r#"openapi: 3.1.0
info: {title: t, version: "1"}
servers: [{url: "http://127.0.0.1:9"}]
paths:
  /things:
    post:
      requestBody:
        content:
          application/json:
            schema:
              type: object
              required: [kind, count, ratio, price, tags, code, kids]
              properties:
                kind: {const: gadget}
                count: {type: integer, exclusiveMinimum: 100}
                ratio: {type: number, exclusiveMinimum: 0, exclusiveMaximum: 1}
                price: {type: number, minimum: 0.25, multipleOf: 0.1}
                tags: {type: array, minItems: 2, maxItems: 3, uniqueItems: true, items: {type: string, maxLength: 3}}
                code: {type: string, minLength: 2, maxLength: 4, format: email}
                kids: {type: array, minItems: 2, items: {$ref: '#/components/schemas/Node'}}
      responses: {"201": {description: ok}}
components:
  schemas:
    Node:
      type: object
      required: [kids]
      properties:
        kids: {type: array, minItems: 2, items: {$ref: '#/components/schemas/Node'}}
"#;

#[test]
fn a_generated_body_keeps_the_schema_s_constraints() {
    let (s, out) = imported(CONSTRAINED);
    let step = s.request_steps().next().unwrap();
    assert_eq!(
        step.body,
        Some(loadlab_scenario::Body::Json(serde_json::json!({
            "kind": "gadget",
            "count": 101,
            "ratio": 0.5,
            "price": 0.3,
            "tags": ["str", "st2"],
            "code": "user",
            "kids": [{"kids": [{}, {}]}, {"kids": [{}, {}]}],
        }))),
        "{}",
        out.yaml
    );
}
