//! The `grpc:` step: the brief's form becomes a request step carrying its call and the
//! method's descriptor from the `.proto`; mistakes give `file:line:column` and a fix.

use loadlab_metrics::GrpcCode;
use loadlab_scenario::{Body, Check, HttpVersion, Method, Scenario, Step};
use std::path::Path;
use std::time::Duration;

/// A scenario file name in examples/, so that `proto: proto/permits.proto` resolves.
fn in_examples(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples")
        .join(name)
        .display()
        .to_string()
}

const FULL: &str = r#"
target: http://127.0.0.1:8080
load: {model: open, rate: 5/s, duration: 1s}
data:
  users: { values: [ {user: ada, token: t1} ] }
flows:
  - steps:
      - name: create permit
        grpc:
          proto: proto/permits.proto
          call: permits.v1.Permits/Create
          message: { applicant: "{{ users.user }}", kind: building, documents: [a, b], pad_bytes: "{{ random_int(1, 9) }}" }
          metadata: { Authorization: "Bearer {{ users.token }}", x-trace-bin: aGVsbG8= }
          timeout: 2s
        check: { grpc_status: OK, json: { "$.status": RECEIVED } }
        capture: { permit_id: "$.id" }
        group: permits
        tags: { kind: create }
      - grpc:
          proto: proto/permits.proto
          call: permits.v1.Permits/Watch
          message: { id: "{{ permit_id }}", events: 3, every_ms: 20 }
          target: http://127.0.0.1:50051
        timeout: 5s
        check: { grpc_status: [ok, 5, Unavailable] }
"#;

fn requests(s: &Scenario) -> Vec<&loadlab_scenario::RequestStep> {
    s.flows[0]
        .steps
        .iter()
        .map(|st| match st {
            Step::Request(r) => r.as_ref(),
            other => panic!("a request step, got {other:?}"),
        })
        .collect()
}

#[test]
fn the_full_form_becomes_a_request_step() {
    let s = Scenario::parse(FULL, &in_examples("grpc-test.yaml")).unwrap();
    let steps = requests(&s);
    let create = steps[0];
    assert_eq!(create.name, "create permit");
    assert_eq!(create.method, Method::Post);
    assert_eq!(create.url, "/permits.v1.Permits/Create");
    assert_eq!(create.http_version, Some(HttpVersion::Http2));
    assert_eq!(create.timeout, Some(Duration::from_secs(2)));
    assert_eq!(create.group.as_deref(), Some("permits"));
    assert_eq!(
        create.tags,
        vec![("kind".to_string(), "create".to_string())]
    );
    let headers: Vec<(&str, &str)> = create
        .headers
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    assert_eq!(
        headers,
        vec![
            ("content-type", "application/grpc"),
            ("te", "trailers"),
            ("authorization", "Bearer {{ users.token }}"),
            ("x-trace-bin", "aGVsbG8="),
        ]
    );
    let Some(Body::Json(body)) = &create.body else {
        panic!("a JSON body")
    };
    assert_eq!(body["applicant"], "{{ users.user }}");
    assert_eq!(body["documents"], serde_json::json!(["a", "b"]));
    assert_eq!(create.checks[0], Check::GrpcStatus(vec![GrpcCode::Ok]));
    assert!(matches!(&create.checks[1], Check::Json { expected, .. } if expected == "RECEIVED"));
    assert_eq!(create.captures[0].name, "permit_id");
    let call = create.grpc.as_ref().expect("a gRPC call");
    assert_eq!(call.full_name(), "permits.v1.Permits/Create");
    assert_eq!(call.proto.as_deref(), Some("proto/permits.proto"));
    let d = call
        .descriptor
        .as_ref()
        .expect("the method from the .proto");
    assert_eq!(d.input().full_name(), "permits.v1.CreateRequest");
    assert_eq!(d.output().full_name(), "permits.v1.Permit");
    assert_eq!(call.server_streaming(), Some(false));

    let watch = steps[1];
    assert_eq!(watch.name, "gRPC permits.v1.Permits/Watch");
    assert_eq!(watch.url, "http://127.0.0.1:50051/permits.v1.Permits/Watch");
    assert_eq!(watch.timeout, Some(Duration::from_secs(5)));
    let call = watch.grpc.as_ref().unwrap();
    assert_eq!(call.server_streaming(), Some(true));
    assert_eq!(
        watch.checks,
        vec![Check::GrpcStatus(vec![
            GrpcCode::Ok,
            GrpcCode::NotFound,
            GrpcCode::Unavailable
        ])]
    );
    assert_eq!(
        loadlab_scenario::grpc::expected_statuses(&watch.checks),
        vec![GrpcCode::Ok, GrpcCode::NotFound, GrpcCode::Unavailable]
    );
}

#[test]
fn reflection_and_an_empty_message() {
    let src = "target: http://127.0.0.1:8080\nload: {model: closed, vus: 1, duration: 1s}\nsteps:\n  - grpc: {call: permits.v1.Permits/Get}\n";
    let s = Scenario::parse(src, "r.yaml").unwrap();
    let r = requests(&s)[0];
    assert_eq!(r.body, Some(Body::Json(serde_json::json!({}))));
    let call = r.grpc.as_ref().unwrap();
    assert!(call.descriptor.is_none() && call.proto.is_none());
    assert_eq!(call.server_streaming(), None);
    assert!(r.checks.is_empty(), "no check: OK is expected by default");
    let shown = s.describe().to_string();
    assert!(
        shown.contains(r#""call":"permits.v1.Permits/Get""#),
        "{shown}"
    );
    assert!(shown.contains(r#""types":"reflection""#), "{shown}");
}

/// The .proto is found relative to the scenario file, wherever the process runs, and its
/// imports from its own directory and the scenario's.
#[test]
fn proto_relative_to_the_scenario_file_with_imports() {
    let tmp = temp_dir("relative");
    let dir = tmp.path();
    std::fs::create_dir_all(dir.join("protos/common")).unwrap();
    std::fs::write(
        dir.join("protos/common/money.proto"),
        "syntax = \"proto3\";\npackage common;\nmessage Money { string currency = 1; int64 units = 2; }\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("protos/pay.proto"),
        "syntax = \"proto3\";\npackage pay.v1;\nimport \"common/money.proto\";\nimport \"google/protobuf/timestamp.proto\";\nservice Pay { rpc Charge(Charge) returns (Charge); }\nmessage Charge { common.Money amount = 1; map<string, common.Money> parts = 2; bool urgent = 3; google.protobuf.Timestamp at = 4; }\n",
    )
    .unwrap();
    let scenario = dir.join("s.yaml");
    std::fs::write(
        &scenario,
        "target: http://127.0.0.1:8080\nload: {model: closed, vus: 1, duration: 1s}\nsteps:\n  - grpc:\n      proto: protos/pay.proto\n      call: pay.v1.Pay/Charge\n      message: {amount: {currency: EUR, units: \"{{ vu }}\"}, parts: {a: {units: 1}}, urgent: true, at: \"{{ uuid() }}\"}\n",
    )
    .unwrap();
    let s = Scenario::from_file(&scenario).unwrap();
    let d = requests(&s)[0]
        .grpc
        .as_ref()
        .unwrap()
        .descriptor
        .clone()
        .unwrap();
    assert_eq!(d.input().full_name(), "pay.v1.Charge");

    // A misspelt field two levels down (inside a map value), located and suggested.
    let good = std::fs::read_to_string(&scenario).unwrap();
    let bad = good.replace("parts: {a: {units: 1}}", "parts: {a: {unts: 1}}");
    std::fs::write(&scenario, bad).unwrap();
    let e = Scenario::from_file(&scenario).unwrap_err().to_string();
    assert!(
        e.contains("s.yaml:7:79: steps[0].grpc.message.parts.a.unts: `unts` is not a field of `common.Money`\n  hint: did you mean `units`? `common.Money` has: currency (string), units (int64)"),
        "{e}"
    );
    // A template for a bool field cannot render to true or false.
    let bad = good.replace("urgent: true", "urgent: \"{{ vu }}\"");
    std::fs::write(&scenario, bad).unwrap();
    let e = Scenario::from_file(&scenario).unwrap_err().to_string();
    assert!(
        e.contains("steps[0].grpc.message.urgent: `urgent` is a bool"),
        "{e}"
    );

    // A well-known type written out is checked; with a template it is known at call time.
    let bad = good.replace("\"{{ uuid() }}\"", "yesterday");
    std::fs::write(&scenario, bad).unwrap();
    let e = Scenario::from_file(&scenario).unwrap_err().to_string();
    assert!(
        e.contains(
            "steps[0].grpc.message.at: `at` of `pay.v1.Charge` (google.protobuf.Timestamp): "
        ),
        "{e}"
    );
    std::fs::write(&scenario, &good).unwrap();
    // A .proto that does not compile: protox's message at the .proto's line:column.
    std::fs::write(
        dir.join("protos/pay.proto"),
        "syntax = \"proto3\";\npackage pay.v1;\nmessage Charge { string a = 1 }\n",
    )
    .unwrap();
    let e = Scenario::from_file(&scenario).unwrap_err().to_string();
    assert!(e.contains("s.yaml:5:14: steps[0].grpc.proto: `protos/pay.proto` does not compile: pay.proto:3:31: expected ';' or '[', but found '}'"), "{e}");
    // An import that is not found.
    std::fs::write(
        dir.join("protos/pay.proto"),
        "syntax = \"proto3\";\npackage pay.v1;\nimport \"nowhere/x.proto\";\n",
    )
    .unwrap();
    let e = Scenario::from_file(&scenario).unwrap_err().to_string();
    assert!(
        e.contains("does not compile: pay.proto:3:1: import 'nowhere/x.proto' not found"),
        "{e}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

/// A scratch directory removed when the returned guard is dropped (the test passed or failed).
fn temp_dir(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("loadlab-grpc-steps-{name}-"))
        .tempdir()
        .unwrap()
}

fn error_of(src: &str) -> String {
    Scenario::parse(src, &in_examples("bad.yaml"))
        .unwrap_err()
        .to_string()
}

#[test]
fn bad_grpc_steps_table() {
    let head =
        "target: http://127.0.0.1:8080\nload: {model: closed, vus: 1, duration: 1s}\nsteps:\n";
    let p = "proto: proto/permits.proto";
    let cases: Vec<(String, &str)> = vec![
        (format!("  - grpc: {{{p}, call: permits.v1.Permits/Create, message: {{applicnt: x}}}}\n"),
         "bad.yaml:4:93: steps[0].grpc.message.applicnt: `applicnt` is not a field of `permits.v1.CreateRequest`\n  hint: did you mean `applicant`? `permits.v1.CreateRequest` has: applicant (string), kind (string), documents (repeated string), pad_bytes (uint32)"),
        ("  - grpc: {proto: proto/nope.proto, call: permits.v1.Permits/Create}\n".to_string(),
         "bad.yaml:4:19: steps[0].grpc.proto: no .proto file at "),
        (format!("  - grpc: {{{p}, call: Permits.Create}}\n"),
         "bad.yaml:4:46: steps[0].grpc.call: `Permits.Create` is not a method's full name: write `package.Service/Method`"),
        (format!("  - grpc: {{{p}, call: Permits/Create}}\n"),
         "bad.yaml:4:46: steps[0].grpc.call: `proto/permits.proto` has no service `Permits`; its services: permits.v1.Permits\n  hint: write the service's full name, its package first: `permits.v1.Permits/Create`"),
        (format!("  - grpc: {{{p}, call: permits.v1.Permit/Create}}\n"),
         "hint: did you mean `permits.v1.Permits/Create`?"),
        (format!("  - grpc: {{{p}, call: permits.v1.Permits/Creat}}\n"),
         "bad.yaml:4:46: steps[0].grpc.call: service `permits.v1.Permits` has no method `Creat`; its methods: Create, Get, Watch\n  hint: did you mean `permits.v1.Permits/Create`?"),
        (format!("  - grpc: {{{p}, call: permits.v1.Permits/Watch, message: {{events: -3}}}}\n"),
         "bad.yaml:4:90: steps[0].grpc.message.events: `events` of `permits.v1.WatchRequest` (uint32): "),
        (format!("  - grpc: {{{p}, call: permits.v1.Permits/Watch, message: {{id: [a]}}}}\n"),
         "steps[0].grpc.message.id: `id` of `permits.v1.WatchRequest` (string): invalid type: sequence"),
        (format!("  - grpc: {{{p}, call: permits.v1.Permits/Create, message: [a]}}\n"),
         "steps[0].grpc.message: a `permits.v1.CreateRequest` message is written as a mapping of its fields"),
        (format!("  - grpc: {{{p}, call: permits.v1.Permits/Create}}\n    check: {{status: 200}}\n"),
         "bad.yaml:5:21: steps[0].check.status: a gRPC call's outcome is its grpc-status, not an HTTP status: use `grpc_status`"),
        (format!("  - grpc: {{{p}, call: permits.v1.Permits/Create}}\n    check: {{grpc_status: UNAVAILBLE}}\n"),
         "bad.yaml:5:26: steps[0].check.grpc_status: `UNAVAILBLE` is not a gRPC status\n  hint: did you mean `UNAVAILABLE`?"),
        (format!("  - grpc: {{{p}, call: permits.v1.Permits/Create}}\n    check: {{grpc_status: 17}}\n"),
         "`17` is not a gRPC status\n  hint: use a name or a number 0..16"),
        ("  - get: /a\n    check: {grpc_status: OK}\n".to_string(),
         "bad.yaml:5:26: steps[0].check.grpc_status: `grpc_status` only applies to `grpc:` steps"),
        (format!("  - grpc: {{{p}, call: permits.v1.Permits/Create}}\n    json: {{a: 1}}\n"),
         "bad.yaml:5:12: steps[0].json: a `grpc:` step cannot have `json`: a `grpc:` step sends `grpc.message`: move the fields there"),
        (format!("  - grpc: {{{p}, call: permits.v1.Permits/Create}}\n    body: x\n"),
         "steps[0].body: a `grpc:` step cannot have `body`"),
        (format!("  - grpc: {{{p}, call: permits.v1.Permits/Create}}\n    form: {{a: b}}\n"),
         "steps[0].form: a `grpc:` step cannot have `form`"),
        (format!("  - grpc: {{{p}, call: permits.v1.Permits/Create}}\n    headers: {{a: b}}\n"),
         "steps[0].headers: a `grpc:` step cannot have `headers`: a gRPC call's headers are its `grpc.metadata`"),
        (format!("  - grpc: {{{p}, call: permits.v1.Permits/Create}}\n    get: /x\n"),
         "steps[0].get: a `grpc:` step cannot also have `get`"),
        (format!("  - grpc: {{{p}, cal: permits.v1.Permits/Create}}\n"),
         "bad.yaml:4:40: steps[0].grpc: unknown field `cal`\n  hint: did you mean `call`?"),
        (format!("  - grpc: {{{p}, call: permits.v1.Permits/Create, metdata: {{a: b}}}}\n"),
         "unknown field `metdata`\n  hint: did you mean `metadata`?"),
        (format!("  - grpc: {{{p}}}\n"),
         "bad.yaml:4:12: steps[0].grpc: a `grpc:` step needs `call: package.Service/Method`"),
        (format!("  - grpc: {{{p}, call: permits.v1.Permits/Create, target: 'ws://127.0.0.1:1'}}\n"),
         "steps[0].grpc.target: `ws://127.0.0.1:1` is not an http:// or https:// URL"),
        (format!("  - grpc: {{{p}, call: permits.v1.Permits/Create, target: 'http://127.0.0.1:1/api'}}\n"),
         "`http://127.0.0.1:1/api` has a path: a gRPC call's path is `/permits.v1.Permits/Create`\n  hint: write `http://127.0.0.1:1`"),
        (format!("  - grpc: {{{p}, call: permits.v1.Permits/Create, metadata: {{grpc-timeout: 1S}}}}\n"),
         "steps[0].grpc.metadata.grpc-timeout: `grpc-timeout` is set by gRPC itself"),
        (format!("  - grpc: {{{p}, call: permits.v1.Permits/Create, metadata: {{x-bin: '***'}}}}\n"),
         "steps[0].grpc.metadata.x-bin: a `-bin` key's value is base64"),
        (format!("  - grpc: {{{p}, call: permits.v1.Permits/Create, metadata: {{a: '{{{{ nope }}}}'}}}}\n"),
         "steps[0].grpc.metadata.a"),
        (format!("  - grpc: {{{p}, call: permits.v1.Permits/Create, message: {{kind: '{{{{ nope }}}}'}}}}\n"),
         "steps[0].grpc.message.kind"),
        (format!("  - grpc: {{{p}, call: permits.v1.Permits/Create, timeout: 1s}}\n    timeout: 2s\n"),
         "steps[0].grpc.timeout: the timeout is given twice"),
        (format!("  - grpc: {{{p}, call: permits.v1.Permits/Create}}\n    capture: {{x: {{regex: 'a'}}}}\n"),
         "steps[0].capture.x: a regex capture reads a body's text"),
    ];
    for (steps, want) in &cases {
        let got = error_of(&format!("{head}{steps}"));
        assert!(
            got.contains(want),
            "for {steps:?}\n got: {got}\nwant: {want}"
        );
        assert!(got.contains("bad.yaml:"), "located: {got}");
    }
}

/// Client and bidirectional streaming are refused, naming what is supported.
#[test]
fn streaming_kinds_beyond_server_streaming_are_refused() {
    let tmp = temp_dir("streams");
    let dir = tmp.path();
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(
        dir.join("chat.proto"),
        "syntax = \"proto3\";\npackage chat;\nmessage M { string t = 1; }\nservice Chat {\n  rpc Upload(stream M) returns (M);\n  rpc Talk(stream M) returns (stream M);\n}\n",
    )
    .unwrap();
    for (method, kind) in [
        ("Upload", "client streaming"),
        ("Talk", "bidirectional streaming"),
    ] {
        let scenario = dir.join("s.yaml");
        std::fs::write(&scenario, format!("target: http://127.0.0.1:8080\nload: {{model: closed, vus: 1, duration: 1s}}\nsteps:\n  - grpc: {{proto: chat.proto, call: chat.Chat/{method}}}\n")).unwrap();
        let e = Scenario::from_file(&scenario).unwrap_err().to_string();
        assert!(
            e.contains(&format!("s.yaml:4:37: steps[0].grpc.call: `chat.Chat/{method}` is a {kind} method: only unary and server-streaming calls are supported")),
            "{e}"
        );
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// The example file parses, with the three calls of the permits service.
#[test]
fn the_example_parses() {
    let path = in_examples("grpc.yaml");
    let s = Scenario::from_file(Path::new(&path)).unwrap();
    let names: Vec<String> = requests(&s)
        .iter()
        .map(|r| r.grpc.as_ref().unwrap().full_name())
        .collect();
    assert_eq!(
        names,
        [
            "permits.v1.Permits/Create",
            "permits.v1.Permits/Get",
            "permits.v1.Permits/Watch"
        ]
    );
}

/// The runnable example of docs/scenario.md's gRPC section parses where the docs say to
/// save it (examples/, where tests/scenario_docs.rs runs it too), and the step form before it is the one tested above.
#[test]
fn the_docs_example_parses() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let doc = std::fs::read_to_string(root.join("docs/scenario.md")).unwrap();
    let section = &doc[doc.find("\n## gRPC\n").expect("a gRPC section")..];
    let section = &section[..section[1..].find("\n## ").unwrap()];
    let blocks: Vec<&str> = section
        .split("```yaml\n")
        .skip(1)
        .map(|b| &b[..b.find("```").unwrap()])
        .collect();
    assert_eq!(blocks.len(), 2, "the step's form, then a runnable scenario");
    let file = in_examples("grpc-try.yaml");
    let s = Scenario::parse(blocks[1], &file).unwrap_or_else(|e| panic!("{e}"));
    let steps = requests(&s);
    assert!(steps[0].grpc.as_ref().unwrap().descriptor.is_some());
    assert!(
        steps[1].grpc.as_ref().unwrap().descriptor.is_none(),
        "reflection"
    );
    // The form itself, as a step of a flow.
    let form = format!(
        "target: http://127.0.0.1:8080\nload: {{model: open, rate: 1/s, duration: 1s}}\ndata:\n  users: {{values: [{{name: ada}}]}}\nsteps:\n{}",
        blocks[0]
            .lines()
            .map(|l| format!("  {l}\n"))
            .collect::<String>()
            .replace("{{ token }}", "{{ users.name }}")
    );
    let s = Scenario::parse(&form, &in_examples("form.yaml")).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        requests(&s)[0].url,
        "http://127.0.0.1:50051/permits.v1.Permits/Create"
    );
}
