//! The OpenAPI importer on what real specs hold and the first version got wrong: `{{` in a
//! spec's examples (read as a template), several credentials or cookies for one header,
//! array path parameters, duplicate operationIds, odd server URLs and `+json` media types,
//! a `$ref` that refers to itself. Each converted scenario must validate.

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
    assert_eq!(notes.url, "/notes/{{ note_id }}");
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
    // In the spec's order (the flow sends POST /raw first).
    assert_eq!(said.len(), 2, "{said:?}");
    assert!(
        said[0].contains("path parameter `id`, query parameter `q`, the request body holds `{{`"),
        "{said:?}"
    );
    assert!(said[1].contains("the body is left out"), "{said:?}");
}

const ONE_HEADER_TWICE: &str = r#"openapi: 3.0.3
info: {title: twice, version: "1"}
servers: [{url: "https://api.example.com"}]
components:
  securitySchemes:
    key: {type: apiKey, in: header, name: Authorization}
    bearer: {type: http, scheme: bearer}
    session: {type: apiKey, in: cookie, name: sid}
paths:
  /items/{ids}:
    get:
      operationId: getItems
      security: [{key: [], bearer: [], session: []}]
      parameters:
        - {name: ids, in: path, required: true, schema: {type: array, items: {type: integer}}, example: [3, 4, 5]}
        - {name: theme, in: cookie, required: true, schema: {type: string}, example: dark}
        - {name: lang, in: cookie, required: true, schema: {type: string}, example: en}
        - {name: authorization, in: header, required: true, schema: {type: string}, example: x}
      responses: {"200": {description: ok}}
  /other:
    get:
      operationId: getItems
      responses: {"200": {description: ok}}
"#;

#[test]
fn one_header_is_sent_once_and_every_scenario_validates() {
    let (s, out) = imported(ONE_HEADER_TWICE, &Options::default());
    let reqs: Vec<_> = s.request_steps().collect();
    let get = reqs.iter().find(|r| r.name == "GET /items/{ids}").unwrap();
    assert_eq!(
        get.headers,
        [
            ("Authorization".to_string(), "{{ env.KEY }}".to_string()),
            (
                "Cookie".to_string(),
                "sid={{ env.SESSION }}; theme=dark; lang=en".to_string()
            ),
        ]
    );
    assert_eq!(get.url, "/items/{{ ids }}");
    assert!(
        out.yaml
            .contains("  ids:\n    values:\n      - \"3,4,5\"\n"),
        "{}",
        out.yaml
    );
    assert!(
        out.yaml
            .contains("decide: security scheme `bearer` also sets the `Authorization` header"),
        "{}",
        out.yaml
    );
    let said: Vec<&str> = out
        .report
        .unsupported
        .iter()
        .map(|u| u.what.as_str())
        .collect();
    assert_eq!(said, ["GET /items/{ids}: header parameter `authorization` is left out: the security scheme sets that header"]);
    // Per operation, the repeated operationId gives two flows of distinct names.
    let per_op = Options {
        per_operation: true,
        ..Options::default()
    };
    let (s, _) = imported(ONE_HEADER_TWICE, &per_op);
    let names: Vec<&str> = s.flows.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["getItems", "getItems 2"]);
}

#[test]
fn a_scenario_over_the_size_limit_is_refused() {
    let big = "x".repeat(5 * 1024 * 1024);
    let spec = format!(
        "openapi: 3.0.3\ninfo: {{title: big, version: \"1\"}}\npaths:\n  /a:\n    post:\n      requestBody:\n        content:\n          application/json:\n            example: {{text: {big}}}\n      responses: {{\"200\": {{description: ok}}}}\n"
    );
    let err = loadlab_import::import(Kind::OpenApi, &spec, "big.yaml", &Options::default())
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("big.yaml: the scenario written from it would be 5.0 MiB, over the 4 MiB limit of a scenario file; import a copy of the spec with fewer paths"),
        "{err}"
    );
}

#[test]
fn an_integer_beyond_64_bits_does_not_refuse_the_spec() {
    // OpenAI's `seed`: a valid YAML number no 64-bit integer holds.
    let spec = "openapi: 3.0.3\ninfo: {title: seed, version: \"1\"}\npaths:\n  /c:\n    post:\n      requestBody:\n        content:\n          application/json:\n            schema:\n              type: object\n              required: [seed]\n              properties:\n                seed: {type: integer, minimum: -9223372036854776000, maximum: 9223372036854776000}\n      responses: {\"200\": {description: ok}}\n";
    let (s, _) = imported(spec, &Options::default());
    let post = s.request_steps().next().unwrap();
    assert_eq!(post.body, Some(Body::Json(json!({"seed": 1}))));
}

const SERVERS: &str = r#"openapi: 3.0.3
info: {title: servers, version: "1"}
servers:
  - url: "https://{region}.api.example.com/{version}"
    variables:
      region: {enum: [eu, us]}
      version: {default: v2}
paths:
  /items:
    get:
      responses: {"200": {description: ok}}
  /upload:
    post:
      servers: [{url: "https://upload.example.com/files"}]
      responses: {"201": {description: ok}}
  /token:
    servers: [{url: "https://eu.api.example.com"}]
    post:
      responses: {"200": {description: ok}}
"#;

#[test]
fn servers_are_read_where_the_spec_names_them() {
    let (s, out) = imported(SERVERS, &Options::default());
    assert_eq!(s.target.as_deref(), Some("https://eu.api.example.com"));
    let urls: Vec<(&str, &str)> = s
        .request_steps()
        .map(|r| (r.name.as_str(), r.url.as_str()))
        .collect();
    assert_eq!(
        urls,
        [
            ("POST /upload", "https://upload.example.com/files/upload"),
            ("POST /token", "/token"),
            ("GET /items", "/v2/items"),
        ]
    );
    assert!(out.yaml.contains("# decide: the spec's server `https://{region}.api.example.com/{version}`: its variable `region` has no default: the first of its `enum`, `eu`, is used"), "{}", out.yaml);
    assert!(
        out.report
            .done
            .iter()
            .any(|d| d.starts_with("2 step(s) go to the server their operation or path names")),
        "{}",
        out.report
    );
    // A scheme-relative server (Redoc's demo) is a host, read as https.
    let relative = SERVERS.replace(
        "\"https://{region}.api.example.com/{version}\"",
        "//petstore.swagger.io/v2",
    );
    let (s, out) = imported(&relative, &Options::default());
    assert_eq!(s.target.as_deref(), Some("https://petstore.swagger.io"));
    assert!(
        out.yaml
            .contains("`//petstore.swagger.io/v2`: it names no scheme: https is assumed"),
        "{}",
        out.yaml
    );
    let items = s.request_steps().find(|r| r.name == "GET /items").unwrap();
    assert_eq!(items.url, "/v2/items");
}

#[test]
fn a_json_media_type_other_than_application_json_is_sent_as_content_type() {
    let spec = r#"openapi: 3.0.3
info: {title: media, version: "1"}
paths:
  /a:
    patch:
      requestBody:
        content:
          application/merge-patch+json:
            example: {name: x}
      responses: {"200": {description: ok}}
  /b:
    patch:
      requestBody:
        content:
          application/json-patch+json:
            example: [{op: replace, path: /name, value: x}]
          application/json:
            example: {name: x}
      responses: {"200": {description: ok}}
"#;
    let (s, _) = imported(spec, &Options::default());
    let reqs: Vec<_> = s.request_steps().collect();
    let a = reqs.iter().find(|r| r.name == "PATCH /a").unwrap();
    assert_eq!(
        a.headers,
        [(
            "Content-Type".to_string(),
            "application/merge-patch+json".to_string()
        )]
    );
    assert_eq!(a.body, Some(Body::Json(json!({"name": "x"}))));
    // Plain JSON offered too: sent as `json:` says, no header needed.
    let b = reqs.iter().find(|r| r.name == "PATCH /b").unwrap();
    assert!(b.headers.is_empty(), "{:?}", b.headers);
    assert_eq!(b.body, Some(Body::Json(json!({"name": "x"}))));
}

#[test]
fn the_default_load_runs_every_flow_and_the_report_names_what_changes_data() {
    let spec = r#"openapi: 3.0.3
info: {title: shop, version: "1"}
servers: [{url: "https://api.shop.example"}]
paths:
  /carts:
    post: {tags: [carts], responses: {"201": {description: ok}}}
  /carts/{id}:
    delete:
      tags: [carts]
      parameters: [{name: id, in: path, required: true, schema: {type: integer}}]
      responses: {"204": {description: ok}}
  /items:
    get: {tags: [items], responses: {"200": {description: ok}}}
  /health:
    get: {tags: [health], responses: {"200": {description: ok}}}
"#;
    let (s, out) = imported(spec, &Options::default());
    assert_eq!(s.flows.len(), 3);
    assert!(
        out.yaml
            .contains("load: { model: closed, vus: 1, iterations: 3 }"),
        "{}",
        out.yaml
    );
    let done = &out.report.done;
    assert!(done.contains(&"the load is 1 VU x 3 iterations: each of the 3 flows runs once (flows are picked in turn)".to_string()), "{done:?}");
    assert!(done.contains(&"the scenario sends 1 DELETE and 1 POST/PUT/PATCH step(s), which change or delete data at https://api.shop.example: point `target:` at a test system, or remove those steps".to_string()), "{done:?}");
}

const QUERY_STYLES: &str = r#"openapi: 3.0.3
info: {title: t, version: '1'}
servers: [{url: 'http://127.0.0.1:9'}]
paths:
  /items:
    get:
      parameters:
        - {name: ids, in: query, required: true, schema: {type: array, items: {type: integer}}, example: [3, 4]}
        - {name: filter, in: query, required: true, style: deepObject, explode: true, schema: {type: object}, example: {color: red}}
        - {name: tags, in: query, required: true, explode: false, schema: {type: array, items: {type: string}}, example: [a, b]}
      responses: {"200": {description: ok}}
  /one:
    get:
      parameters:
        - {name: q, in: query, required: true, schema: {type: string}, example: shoes}
      responses: {"200": {description: ok}}
"#;

#[test]
fn query_parameters_are_serialised_by_their_style() {
    let (s, out) = imported(QUERY_STYLES, &Options::default());
    let items = s.request_steps().find(|r| r.name == "GET /items").unwrap();
    // An exploded array repeats its name, which a `query:` map cannot hold: in the path.
    assert_eq!(
        items.url, "/items?ids=3&ids=4&filter%5Bcolor%5D=red&tags=a%2Cb",
        "{}",
        out.yaml
    );
    let one = s.request_steps().find(|r| r.name == "GET /one").unwrap();
    assert_eq!(one.query, [("q".to_string(), "shoes".to_string())]);
}

/// The hunt's recursive.yaml: a path parameter and a path item whose `$ref` refers to itself.
const SELF_REFS: &str = r#"openapi: 3.0.3
info: {title: refs, version: "1"}
servers: [{url: "http://127.0.0.1:9/api"}]
paths:
  /ok:
    get:
      responses: {"200": {description: ok}}
  /param/{id}:
    parameters:
      - $ref: '#/components/parameters/P'
    get:
      responses: {"200": {description: ok}}
  /pathref:
    $ref: '#/paths/~1pathref'
components:
  parameters:
    P: {$ref: '#/components/parameters/P'}
"#;

#[test]
fn a_path_placeholder_no_parameter_fills_is_reported_not_sent() {
    let (s, out) = imported(SELF_REFS, &Options::default());
    let urls: Vec<String> = s.request_steps().map(|r| r.url.clone()).collect();
    assert_eq!(urls, ["/api/ok"], "{}", out.yaml);
    // In the spec's order, though the path item's is found first.
    let said: Vec<(Option<usize>, &str)> = out
        .report
        .unsupported
        .iter()
        .map(|u| (u.line, u.what.as_str()))
        .collect();
    assert_eq!(
        said,
        [
            (Some(8), "GET /param/{id}: the path's `{id}`: no path parameter declares it (`$ref: #/components/parameters/P` never reaches a parameter: it refers to itself or names nothing); the operation is left out"),
            (Some(13), "path `/pathref`: its `$ref: #/paths/~1pathref` never reaches a path item (it refers to itself or names nothing); left out"),
        ]
    );
    assert!(
        out.report
            .to_string()
            .contains("1 of 2 operation(s) became request steps"),
        "{}",
        out.report
    );
    // With nothing else to call, the spec is refused, saying why.
    let only = SELF_REFS.replace(
        "  /ok:\n    get:\n      responses: {\"200\": {description: ok}}\n",
        "",
    );
    let Err(err) = loadlab_import::import(Kind::OpenApi, &only, "refs.yaml", &Options::default())
    else {
        panic!("imported with no operation to call");
    };
    assert!(
        err.to_string()
            .contains("(line 5: GET /param/{id}: the path's `{id}`"),
        "{err}"
    );
}
