//! The OpenAPI importer on the Swagger Petstore 3 spec and on a small JSON spec with links:
//! flows per tag or per operation, example bodies, security as env variables, checks from the
//! documented 2xx statuses, path parameters captured through links.

mod common;

use common::{import_ok, validate, variable_names};
use loadlab_import::{import, Kind, Options};
use loadlab_scenario::{Body, CaptureSource, Check, Scenario, Step};
use serde_json::json;

const PETSTORE: &str = include_str!("fixtures/petstore3.yaml");

fn parse(yaml: &str) -> Scenario {
    std::env::set_var("TOKEN", "t");
    std::env::set_var("API_KEY", "k");
    validate(yaml, "imported.yaml")
}

#[test]
fn petstore_becomes_one_flow_per_tag() {
    let out = import_ok(
        Kind::OpenApi,
        PETSTORE,
        "petstore3.yaml",
        &Options::default(),
    );
    let r = &out.report;
    assert_eq!(
        r.done[0],
        "19 operation(s) became request steps in 3 flow(s) (one per tag)"
    );
    let vars = variable_names(r);
    // The spec's example password is read from the environment, not written out.
    assert_eq!(vars, ["TOKEN", "API_KEY", "PASSWORD"]);
    std::env::set_var("PASSWORD", "12345");
    let upload_line = PETSTORE
        .lines()
        .position(|l| l == "  /pet/{petId}/uploadImage:")
        .unwrap()
        + 1;
    assert_eq!(r.unsupported.len(), 1, "{r}");
    assert_eq!(r.unsupported[0].line, Some(upload_line));
    assert!(r.unsupported[0].what.contains("application/octet-stream"));

    let s = parse(&out.yaml);
    assert_eq!(s.name, "Swagger Petstore - OpenAPI 3.0");
    let flows: Vec<(&str, usize)> = s
        .flows
        .iter()
        .map(|f| (f.name.as_str(), f.steps.len()))
        .collect();
    assert_eq!(flows, [("pet", 8), ("store", 4), ("user", 7)]);
    let reqs: Vec<_> = s.request_steps().collect();
    let add = reqs.iter().find(|r| r.name == "POST /pet").unwrap();
    assert_eq!(add.url, "/api/v3/pet");
    assert_eq!(
        add.body,
        Some(Body::Json(
            json!({"id": 10, "name": "doggie", "photoUrls": ["string"]})
        ))
    );
    assert_eq!(add.checks, [Check::Status(vec![200])]);
    assert_eq!(
        add.headers,
        [(
            "Authorization".to_string(),
            "Bearer {{ env.TOKEN }}".to_string()
        )]
    );
    let get = reqs.iter().find(|r| r.name == "GET /pet/{petId}").unwrap();
    assert_eq!(get.url, "/api/v3/pet/{{ pet_id }}");
    assert_eq!(
        get.headers,
        [("api_key".to_string(), "{{ env.API_KEY }}".to_string())]
    );
    let by_status = reqs
        .iter()
        .find(|r| r.name == "GET /pet/findByStatus")
        .unwrap();
    assert_eq!(
        by_status.query,
        [("status".to_string(), "available".to_string())]
    );
    let data: Vec<&str> = s.data.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(data, ["order_id", "pet_id", "username"]);
    // Creations first, deletions last.
    let Step::Request(first) = &s.flows[0].steps[0] else {
        panic!()
    };
    assert_eq!(first.name, "POST /pet");
    let Step::Request(last) = s.flows[0].steps.last().unwrap() else {
        panic!()
    };
    assert_eq!(last.name, "DELETE /pet/{petId}");
}

#[test]
fn per_operation_gives_one_flow_each() {
    let options = Options {
        per_operation: true,
        ..Options::default()
    };
    let out = import_ok(Kind::OpenApi, PETSTORE, "petstore3.yaml", &options);
    let s = parse(&out.yaml);
    assert_eq!(s.flows.len(), 19);
    assert!(s.flows.iter().any(|f| f.name == "getPetById"));
    assert!(s.flows.iter().all(|f| f.steps.len() == 1));
}

const LINKED: &str = r##"{
  "openapi": "3.1.0",
  "info": {"title": "items", "version": "1"},
  "servers": [{"url": "https://{host}/v1", "variables": {"host": {"default": "api.example.com"}}}],
  "security": [{"bearer": []}],
  "paths": {
    "/items/{itemId}": {
      "parameters": [{"name": "itemId", "in": "path", "required": true, "schema": {"type": "string", "format": "uuid"}}],
      "get": {"operationId": "getItem", "tags": ["items"], "responses": {"200": {"description": "ok"}}}
    },
    "/items": {
      "post": {
        "operationId": "createItem", "tags": ["items"],
        "requestBody": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/NewItem"}}}},
        "responses": {
          "201": {"description": "created", "links": {
            "GetItem": {"operationId": "getItem", "parameters": {"itemId": "$response.body#/id"}},
            "Archive": {"operationId": "archiveItem", "parameters": {"archiveId": "$response.body#/archive"}}
          }},
          "202": {"description": "accepted"}
        }
      }
    }
  },
  "components": {
    "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
    "schemas": {"NewItem": {"type": "object", "required": ["title", "secret"], "properties": {
      "title": {"type": "string", "minLength": 3},
      "secret": {"type": "string", "format": "password"},
      "count": {"type": ["integer", "null"], "minimum": 2}
    }}}
  }
}"##;

#[test]
fn links_become_captures() {
    let out = import_ok(Kind::OpenApi, LINKED, "items.json", &Options::default());
    std::env::set_var("PASSWORD", "p");
    let s = parse(&out.yaml);
    assert_eq!(s.target.as_deref(), Some("https://api.example.com"));
    let reqs: Vec<_> = s.request_steps().collect();
    assert_eq!(reqs.len(), 2);
    let create = reqs[0];
    assert_eq!(create.url, "/v1/items");
    assert_eq!(create.checks, [Check::Status(vec![201, 202])]);
    // Only the link a later step uses is captured (no step archives items).
    assert_eq!(create.captures.len(), 1);
    assert_eq!(create.captures[0].name, "item_id");
    assert!(matches!(&create.captures[0].source, CaptureSource::JsonPath(p) if p.text() == "$.id"));
    assert_eq!(
        create.body,
        Some(Body::Json(
            json!({"title": "string", "secret": "{{ env.PASSWORD }}"})
        ))
    );
    assert_eq!(reqs[1].url, "/v1/items/{{ item_id }}");
    assert!(s.data.is_empty(), "a linked parameter needs no data");
    let vars = variable_names(&out.report);
    assert_eq!(vars, ["TOKEN", "PASSWORD"]);
    assert!(out.report.done[1].contains("1 path parameter(s) captured"));
}

/// The consumer is declared, and sorts, before the operation whose link feeds it.
const LINKED_BACKWARDS: &str = r##"openapi: 3.0.3
info: { title: repos, version: "1" }
servers: [ { url: "https://git.example.com" } ]
paths:
  /repositories/{username}:
    get:
      operationId: getRepositoriesByOwner
      parameters: [ { name: username, in: path, required: true, schema: { type: string } } ]
      responses: { "200": { description: repositories } }
  /users/{username}:
    get:
      operationId: getUserByName
      parameters: [ { name: username, in: path, required: true, schema: { type: string } } ]
      responses:
        "200":
          description: the user
          links:
            userRepositories:
              operationId: getRepositoriesByOwner
              parameters: { username: $response.body#/username }
"##;

#[test]
fn a_link_s_producer_comes_before_its_consumer() {
    let out = import_ok(
        Kind::OpenApi,
        LINKED_BACKWARDS,
        "repos.yaml",
        &Options::default(),
    );
    let s = parse(&out.yaml);
    let reqs: Vec<_> = s.request_steps().collect();
    assert_eq!(reqs.len(), 2, "{}", out.yaml);
    assert!(reqs[0].url.starts_with("/users/"), "{}", out.yaml);
    assert_eq!(reqs[0].captures.len(), 1, "{}", out.yaml);
    assert_eq!(
        reqs[1].url,
        format!("/repositories/{{{{ {} }}}}", reqs[0].captures[0].name)
    );
}

#[test]
fn the_first_declared_example_is_the_body_not_the_first_by_name() {
    let spec = r##"openapi: 3.0.3
info: { title: orders, version: "1" }
servers: [ { url: "https://shop.example.com" } ]
paths:
  /orders:
    post:
      requestBody:
        content:
          application/json:
            examples:
              typical: { value: { quantity: 2, pick: typical } }
              bulk: { value: { pick: bulk, quantity: 500 } }
      responses: { "201": { description: created } }
"##;
    let out = import_ok(Kind::OpenApi, spec, "orders.yaml", &Options::default());
    let s = parse(&out.yaml);
    let order = s.request_steps().next().unwrap();
    assert_eq!(
        order.body,
        Some(Body::Json(json!({"pick": "typical", "quantity": 2}))),
        "{}",
        out.yaml
    );
    // The example's fields keep the spec's order in the file too.
    let pick = out.yaml.find("pick: typical").unwrap();
    assert!(out.yaml.find("quantity: 2").unwrap() < pick, "{}", out.yaml);
}

/// A JSON spec is read as JSON: an escaped emoji (`\ud83d\udc4d`, a surrogate pair, as in
/// Twilio's published specs) is valid JSON that the YAML parser refuses.
#[test]
fn a_json_spec_with_an_escaped_emoji_is_read() {
    let spec = r#"{"openapi": "3.0.3", "info": {"title": "sms", "version": "1"},
 "servers": [{"url": "https://api.example.com"}],
 "paths": {"/messages": {"post": {
   "requestBody": {"content": {"application/json": {"example": {"body": "Hello! \ud83d\udc4d", "to": "+15005550006"}}}},
   "responses": {"201": {"description": "sent"}}}}}}"#;
    let out = import_ok(Kind::OpenApi, spec, "sms.json", &Options::default());
    let s = parse(&out.yaml);
    let send = s.request_steps().next().unwrap();
    assert_eq!(
        send.body,
        Some(Body::Json(
            json!({"body": "Hello! \u{1f44d}", "to": "+15005550006"})
        )),
        "{}",
        out.yaml
    );
}

#[test]
fn swagger_2_is_refused_with_the_fix() {
    let err = import(
        Kind::OpenApi,
        "swagger: \"2.0\"\npaths: {}\n",
        "old.yaml",
        &Options::default(),
    )
    .unwrap_err()
    .to_string();
    assert_eq!(
        err,
        "old.yaml is not an OpenAPI 3 spec: it is Swagger 2.0; convert it to OpenAPI 3 first (e.g. `npx swagger2openapi`)"
    );
}

const TARGET_API: &str = include_str!("fixtures/target-api.openapi.yaml");

#[test]
fn a_sign_in_answering_a_token_gives_the_bearer_header() {
    let out = import_ok(
        Kind::OpenApi,
        TARGET_API,
        "target-api.openapi.yaml",
        &Options::default(),
    );
    assert!(
        out.report.done[0].starts_with(
            "the bearer token is captured from `POST /api/auth/signin` ($.token), the one operation without security"
        ),
        "{}",
        out.report
    );
    let vars = variable_names(&out.report);
    assert_eq!(vars, ["PASSWORD"], "no TOKEN to set");
    std::env::set_var("PASSWORD", "p");
    let s = parse(&out.yaml);
    assert!(!out.yaml.contains("env.TOKEN"), "{}", out.yaml);
    let flow = |name: &str| {
        s.flows
            .iter()
            .find(|f| f.name == name)
            .unwrap_or_else(|| panic!("flow {name}"))
    };
    let steps = |name: &str| -> Vec<&loadlab_scenario::RequestStep> {
        flow(name)
            .steps
            .iter()
            .filter_map(|st| match st {
                Step::Request(r) => Some(r.as_ref()),
                _ => None,
            })
            .collect()
    };
    // The applications flow signs in first and sends that token; its ids come from links.
    let apps = steps("applications");
    let names: Vec<&str> = apps.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "POST /api/auth/signin",
            "POST /api/applications",
            "POST /api/applications/{id}/submit",
            "GET /api/applications/{id}"
        ]
    );
    assert_eq!(apps[0].captures.len(), 1);
    assert_eq!(apps[0].captures[0].name, "token");
    for r in &apps[1..] {
        assert!(
            r.headers
                .iter()
                .any(|(k, v)| k == "Authorization" && v == "Bearer {{ token }}"),
            "{}: {:?}",
            r.name,
            r.headers
        );
    }
    // The auth flow's own sign-in captures nothing: no later step of it sends the token.
    let auth = steps("auth");
    assert_eq!(auth.len(), 1);
    assert!(auth[0].captures.is_empty());

    // A sign-in that itself needs a token gives none: the token is the person's to set.
    let guarded = TARGET_API.replacen(
        "      summary: Sign in; every sign-in returns a new token.\n      security: []\n",
        "      summary: Sign in; every sign-in returns a new token.\n",
        1,
    );
    assert_ne!(guarded, TARGET_API);
    let out = import_ok(
        Kind::OpenApi,
        &guarded,
        "target-api.openapi.yaml",
        &Options::default(),
    );
    assert!(out.yaml.contains("Bearer {{ env.TOKEN }}"), "{}", out.yaml);
    assert!(!out.yaml.contains("capture: { token"), "{}", out.yaml);
    assert!(out.report.variables.iter().any(|v| v.name == "TOKEN"));
}
