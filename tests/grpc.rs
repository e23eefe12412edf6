//! gRPC calls end to end: the built-in target's permits.v1.Permits (unary calls chained by a
//! capture, a server stream, the types from the .proto and from reflection), and a server
//! from another implementation (Python grpcio with reflection, scripts/grpc_server.py,
//! installed by scripts/setup-test-deps.sh) whose own counts must equal the run's; and the
//! faults: UNAVAILABLE, a deadline exceeded, a stream that stops halfway.

mod common;
#[path = "common/py_servers.rs"]
mod py_servers;
#[path = "common/run_json.rs"]
mod run_json;

use common::{exclusive, Target};
use py_servers::{PyGrpc, PyServer};
use run_json::{first_then, http_get, metric, n, report_md, run, run_fresh, run_fresh_with, step};
use serde_json::Value;

const PROTO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/proto/permits.proto");

/// A flow of three calls: create (its id captured), read it back, watch it (a stream of 3).
fn flow(target: &str, proto: bool) -> String {
    let proto = if proto {
        format!("proto: {PROTO}\n          ")
    } else {
        String::new()
    };
    format!(
        r#"
target: {target}
load: {{ model: open, rate: 20/s, duration: 1s }}
flows:
  - steps:
      - name: create
        grpc:
          {proto}call: permits.v1.Permits/Create
          message: {{ applicant: "ann-{{{{ vu }}}}", kind: building, documents: [a, b] }}
          metadata: {{ x-test: "yes" }}
        check: {{ grpc_status: OK, json: {{ "$.status": RECEIVED }} }}
        capture: {{ permit: "$.id" }}
      - name: get
        grpc:
          {proto}call: permits.v1.Permits/Get
          message: {{ id: "{{{{ permit }}}}" }}
        check: {{ grpc_status: OK }}
        capture: {{ read_back: "$.id" }}
      - name: watch
        grpc:
          {proto}call: permits.v1.Permits/Watch
          message: {{ id: "{{{{ permit }}}}", events: 3, every_ms: 10 }}
        check: {{ json: {{ "$[2].seq": 3 }} }}
"#
    )
}

fn ok_calls(step: &Value) -> u64 {
    n(&step["grpc"]["status_codes"]["OK"])
}

#[test]
fn calls_against_the_built_in_target_count_what_the_target_counts() {
    built_in_target_calls("h2");
}

#[test]
fn calls_against_the_built_in_target_count_what_the_target_counts_with_the_wire_client() {
    built_in_target_calls("wire");
}

/// Unary calls chained by a capture and a server stream, with HTTP/2 client `client`.
fn built_in_target_calls(client: &str) {
    let _load = exclusive();
    let dir = tempfile::tempdir().unwrap();
    let (code, result, text, target) = run_fresh_with(
        dir.path(),
        &["--http2-client", client],
        || Target::start(&[]),
        |t| flow(&t.url, true),
    );
    assert_eq!(code, Some(0), "{text}\nvalidity: {}", result["validity"]);
    common::assert_valid(&result, "grpc run");
    common::assert_matches_run_schema(&result);
    let create = step(&result, "create");
    let calls = n(&create["requests"]);
    assert!(calls >= 15, "{create}");
    for name in ["create", "get", "watch"] {
        let s = step(&result, name);
        assert_eq!(n(&s["requests"]), calls, "{s}");
        assert_eq!(n(&s["failed"]), 0, "{s}");
        assert_eq!(ok_calls(s), calls, "{s}");
        assert_eq!(n(&s["grpc"]["messages_sent"]), calls, "{s}");
        assert!(s["latency_ms"]["p50"].as_f64().unwrap() > 0.0, "{s}");
    }
    let watch = step(&result, "watch");
    assert_eq!(n(&watch["grpc"]["messages_received"]), 3 * calls, "{watch}");
    // Three events 10 ms apart, the first at once: the first message comes well before the
    // call ends, after two gaps.
    let first = watch["grpc"]["first_message_ms"]["p50"].as_f64().unwrap();
    let whole = watch["latency_ms"]["p50"].as_f64().unwrap();
    assert!(first > 0.0 && first + 15.0 < whole, "{watch}");
    assert!(whole >= 19.0, "{watch}");

    // The report's Protocols section shows the same figures.
    let md = report_md(dir.path());
    let protocols = &md[md.find("### gRPC").expect("a gRPC table")..];
    for (name, received) in [("create", calls), ("get", calls), ("watch", 3 * calls)] {
        let row = format!("| `{name}` | {calls} | OK {calls} | {calls} (");
        assert!(protocols.contains(&row), "{row}\n{protocols}");
        assert!(
            protocols.contains(&format!("| {received} (")),
            "{protocols}"
        );
    }

    let metrics = http_get(target.url.trim_start_matches("http://"), "/metrics");
    for (method, messages) in [("Create", 1), ("Get", 1), ("Watch", 3)] {
        let path = format!("/permits.v1.Permits/{method}");
        let label = format!("loadlab_target_grpc_calls_total{{method=\"{path}\",code=\"OK\"}}");
        assert_eq!(metric(&metrics, &label), calls, "{method}");
        let sent = format!("loadlab_target_grpc_messages_sent_total{{method=\"{path}\"}}");
        assert_eq!(metric(&metrics, &sent), messages * calls, "{method}");
    }
}

#[test]
fn types_come_from_the_servers_reflection_when_no_proto_is_given() {
    let _load = exclusive();
    let target = Target::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let (code, result, text) = run(dir.path(), &flow(&target.url, false));
    assert_eq!(code, Some(0), "{text}\nvalidity: {}", result["validity"]);
    for name in ["create", "get", "watch"] {
        let s = step(&result, name);
        assert_eq!(n(&s["failed"]), 0, "{s}");
        assert_eq!(ok_calls(s), n(&s["requests"]), "{s}");
    }
}

#[test]
fn a_method_the_server_lacks_is_exit_2_naming_what_it_has() {
    let _load = exclusive();
    let target = Target::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let yaml = format!(
        "target: {}\nload: {{ model: open, rate: 5/s, duration: 1s }}\nsteps:\n  - grpc: {{ call: permits.v1.Permits/Delete }}\n",
        target.url
    );
    let (code, _, text) = run(dir.path(), &yaml);
    assert_eq!(code, Some(2), "{text}");
    assert!(
        text.contains("no method `Delete`") && text.contains("Create"),
        "{text}"
    );
    assert!(!text.contains("panicked"), "{text}");
}

#[test]
fn a_server_without_reflection_is_exit_2_suggesting_the_proto() {
    let Some(server) = PyGrpc::start(&["--no-reflection"]) else {
        return;
    };
    let _load = exclusive();
    let dir = tempfile::tempdir().unwrap();
    let yaml = format!(
        "target: http://{}\nload: {{ model: open, rate: 5/s, duration: 1s }}\nsteps:\n  - grpc: {{ call: permits.v1.Permits/Get }}\n",
        server.addr
    );
    let (code, _, text) = run(dir.path(), &yaml);
    assert_eq!(code, Some(2), "{text}");
    assert!(text.contains("no reflection service"), "{text}");
    assert!(text.contains("proto: path/to/file.proto"), "{text}");
    assert!(!text.contains("panicked"), "{text}");
    // With the .proto the same server answers.
    let with_proto = yaml.replace("call: permits", &format!("proto: {PROTO}, call: permits"));
    let (code, result, text) = run(dir.path(), &with_proto);
    assert_eq!(code, Some(0), "{text}\nvalidity: {}", result["validity"]);
}

/// The Python server's count of `method` calls that ended `status`.
fn server_calls(c: &Value, method: &str, status: &str) -> u64 {
    n(&c["calls"][method][status])
}

#[test]
fn counts_agree_with_a_python_grpcio_server_over_reflection_and_proto() {
    let Some(server) = PyGrpc::start(&[]) else {
        return;
    };
    let _load = exclusive();
    let dir = tempfile::tempdir().unwrap();
    // The first half of the flow from the .proto, the stream from the server's reflection.
    let scenario = |server: &PyGrpc| {
        flow(&format!("http://{}", server.addr), true).replace(
            &format!("proto: {PROTO}\n          call: permits.v1.Permits/Watch"),
            "call: permits.v1.Permits/Watch",
        )
    };
    let fresh = first_then(server, || PyGrpc::start(&[]));
    let (code, result, text, server) = run_fresh(dir.path(), fresh, scenario);
    assert_eq!(code, Some(0), "{text}\nvalidity: {}", result["validity"]);
    let c = server.counts();
    for (name, method, per_call) in [
        ("create", "Create", 1),
        ("get", "Get", 1),
        ("watch", "Watch", 3),
    ] {
        let s = step(&result, name);
        let calls = n(&s["requests"]);
        assert!(calls >= 15, "{s}");
        assert_eq!(n(&s["failed"]), 0, "{s}");
        assert_eq!(server_calls(&c, method, "OK"), calls, "{method}: {c}");
        assert_eq!(ok_calls(s), calls, "{s}");
        assert_eq!(
            n(&c["messages_received"][method]),
            n(&s["grpc"]["messages_sent"]),
            "{c}"
        );
        assert_eq!(
            n(&c["messages_sent"][method]),
            n(&s["grpc"]["messages_received"]),
            "{c}"
        );
        assert_eq!(n(&s["grpc"]["messages_received"]), per_call * calls, "{s}");
    }
}

/// One `grpc:` step named `name` (its keys as a flow mapping) against the Python server started
/// with `flags`, at `rate`/s for 1 s: run.json, the step and the server (whose counts are
/// the run's), or None without grpcio. Failures without a threshold leave the run itself
/// fine (exit 0). HTTP/2 speaks through `client` (`--http2-client`).
fn one_call_with(
    client: &str,
    flags: &[&str],
    rate: u32,
    name: &str,
    grpc: &str,
) -> Option<(Value, Value, PyGrpc)> {
    let server = PyGrpc::start(flags)?;
    let _load = exclusive();
    let dir = tempfile::tempdir().unwrap();
    let scenario = |server: &PyGrpc| {
        format!(
            "target: http://{}\nload: {{ model: open, rate: {rate}/s, duration: 1s }}\nsteps:\n  - name: {name}\n    grpc: {grpc}\n",
            server.addr
        )
    };
    let fresh = first_then(server, || PyGrpc::start(flags));
    let (code, result, text, server) =
        run_fresh_with(dir.path(), &["--http2-client", client], fresh, scenario);
    assert_eq!(code, Some(0), "{text}\nvalidity: {}", result["validity"]);
    let step = step(&result, name).clone();
    Some((result, step, server))
}

#[test]
fn unavailable_calls_are_their_error_kind_and_match_the_servers_count() {
    unavailable_calls("h2");
}

#[test]
fn unavailable_calls_are_their_error_kind_with_the_wire_client() {
    unavailable_calls("wire");
}

/// Every second call answered UNAVAILABLE, with HTTP/2 client `client`.
fn unavailable_calls(client: &str) {
    let grpc = format!(
        "{{ proto: {PROTO}, call: permits.v1.Permits/Create, message: {{ applicant: ann }} }}"
    );
    let unavailable = ["--unavailable-every", "2"];
    let Some((result, s, server)) = one_call_with(client, &unavailable, 20, "create", &grpc) else {
        return;
    };
    let s = &s;
    let c = server.counts();
    let unavailable = server_calls(&c, "Create", "UNAVAILABLE");
    assert!(unavailable >= 7, "{c}");
    assert_eq!(n(&s["errors"]["grpc_unavailable"]), unavailable, "{s}");
    assert_eq!(
        n(&s["grpc"]["status_codes"]["UNAVAILABLE"]),
        unavailable,
        "{s}"
    );
    assert_eq!(ok_calls(s), server_calls(&c, "Create", "OK"), "{s}");
    assert_eq!(n(&s["failed"]), unavailable, "{s}");
    assert!(result["error_hints"]["grpc_unavailable"]
        .as_str()
        .is_some_and(|h| h.contains("unavailable")));
    let example = result["error_examples"]["grpc_unavailable"]
        .as_str()
        .unwrap_or("");
    assert!(example.contains("grpc-status UNAVAILABLE"), "{example}");
}

#[test]
fn a_deadline_shorter_than_the_server_is_deadline_exceeded_not_a_hang() {
    deadline_exceeded("h2");
}

#[test]
fn a_deadline_shorter_than_the_server_is_deadline_exceeded_with_the_wire_client() {
    deadline_exceeded("wire");
}

/// Calls whose deadline is shorter than the server takes, with HTTP/2 client `client`.
fn deadline_exceeded(client: &str) {
    let started = std::time::Instant::now();
    let grpc = "{ call: permits.v1.Permits/Get, message: { id: p-1 }, timeout: 100ms }";
    let Some((_, s, _)) = one_call_with(client, &["--delay-ms", "400"], 10, "get", grpc) else {
        return;
    };
    assert!(started.elapsed() < std::time::Duration::from_secs(15));
    let s = &s;
    let calls = n(&s["requests"]);
    assert!(calls >= 8, "{s}");
    assert_eq!(n(&s["errors"]["grpc_deadline_exceeded"]), calls, "{s}");
    assert_eq!(
        n(&s["grpc"]["status_codes"]["DEADLINE_EXCEEDED"]),
        calls,
        "{s}"
    );
    // Ended at the deadline, not at the server's 400 ms.
    let p50 = s["latency_ms"]["p50"].as_f64().unwrap_or(0.0);
    assert!(p50 < 300.0, "{s}");
}

#[test]
fn a_stream_that_stops_halfway_counts_the_messages_it_got_and_fails() {
    stream_stops_halfway("h2");
}

#[test]
fn a_stream_that_stops_halfway_counts_the_messages_it_got_with_the_wire_client() {
    stream_stops_halfway("wire");
}

/// A server stream cut after two messages, with HTTP/2 client `client`.
fn stream_stops_halfway(client: &str) {
    let grpc = format!("{{ proto: {PROTO}, call: permits.v1.Permits/Watch, message: {{ id: p-1, events: 5, every_ms: 5 }} }}");
    let stop = ["--stream-stop-after", "2"];
    let Some((result, s, server)) = one_call_with(client, &stop, 20, "watch", &grpc) else {
        return;
    };
    let s = &s;
    let calls = n(&s["requests"]);
    assert!(calls >= 15, "{s}");
    assert_eq!(n(&s["errors"]["grpc_unavailable"]), calls, "{s}");
    assert_eq!(n(&s["grpc"]["messages_received"]), 2 * calls, "{s}");
    let c = server.counts();
    assert_eq!(n(&c["messages_sent"]["Watch"]), 2 * calls, "{c}");
    let example = result["error_examples"]["grpc_unavailable"]
        .as_str()
        .unwrap_or("");
    assert!(example.contains("stream stopped"), "{example}");
}

#[test]
fn calls_run_over_tls_with_alpn_h2() {
    calls_over_tls("h2");
}

#[test]
fn calls_run_over_tls_with_alpn_h2_with_the_wire_client() {
    calls_over_tls("wire");
}

/// The flow over TLS (ALPN h2) with HTTP/2 client `client`.
fn calls_over_tls(client: &str) {
    let _load = exclusive();
    let dir = tempfile::tempdir().unwrap();
    let yaml = |t: &Target| flow(&t.url, true).replacen("load:", "insecure: true\nload:", 1);
    let flags = ["--http2-client", client];
    let (code, result, text, _target) =
        run_fresh_with(dir.path(), &flags, || Target::start(&["--tls"]), yaml);
    assert_eq!(code, Some(0), "{text}\nvalidity: {}", result["validity"]);
    let create = step(&result, "create");
    assert_eq!(n(&create["failed"]), 0, "{create}");
    assert_eq!(ok_calls(create), n(&create["requests"]), "{create}");
    assert_eq!(
        result["origins"][0]["protocol"], "h2",
        "{}",
        result["origins"]
    );
}

/// One scenario, a WebSocket flow and a gRPC flow (the issue's "done when").
fn both_flows(target: &str, ws_url: &str, grpc_target: &str) -> String {
    format!(
        r#"
target: {target}
# Two origins (the ws one, and HTTP/2 for gRPC): the default max_in_flight (10,000) would
# budget 20,000 connections, above some machines' open-file limit.
load: {{ model: open, rate: 20/s, duration: 1s, max_in_flight: 100 }}
flows:
  - name: live updates
    steps:
      - name: echo
        ws:
          url: {ws_url}
          steps:
            - send: '{{"n": {{{{ vu }}}}}}'
            - expect: {{ json: "$.n" }}
  - name: permits
    steps:
      - name: create
        grpc:
          proto: {PROTO}
          call: permits.v1.Permits/Create
          target: {grpc_target}
          message: {{ applicant: "ann-{{{{ vu }}}}" }}
        capture: {{ permit: "$.id" }}
      - name: watch
        grpc:
          call: permits.v1.Permits/Watch
          target: {grpc_target}
          message: {{ id: "{{{{ permit }}}}", events: 2, every_ms: 5 }}
"#
    )
}

#[test]
fn a_websocket_flow_and_a_grpc_flow_run_in_one_scenario() {
    let _load = exclusive();
    let dir = tempfile::tempdir().unwrap();
    let scenario = |t: &Target| both_flows(&t.url, "/ws/echo", &t.url);
    let (code, result, text, target) = run_fresh(dir.path(), || Target::start(&[]), scenario);
    assert_eq!(code, Some(0), "{text}\nvalidity: {}", result["validity"]);
    let (echo, create, watch) = (
        step(&result, "echo"),
        step(&result, "create"),
        step(&result, "watch"),
    );
    let (sessions, calls) = (n(&echo["requests"]), n(&create["requests"]));
    // 20 arrivals shared by two flows of equal weight.
    assert!(
        sessions >= 3 && calls >= 3 && sessions + calls >= 18,
        "{echo} {create}"
    );
    assert_eq!(n(&echo["ws"]["messages_received"]), sessions, "{echo}");
    assert_eq!(ok_calls(create), calls, "{create}");
    assert_eq!(n(&watch["grpc"]["messages_received"]), 2 * calls, "{watch}");
    let metrics = http_get(target.url.trim_start_matches("http://"), "/metrics");
    assert_eq!(
        metric(&metrics, "loadlab_target_ws_sessions_total"),
        sessions
    );
    let created =
        "loadlab_target_grpc_calls_total{method=\"/permits.v1.Permits/Create\",code=\"OK\"}";
    assert_eq!(metric(&metrics, created), calls);
}

#[test]
fn both_flows_agree_with_the_python_servers_counts() {
    let (Some(ws), Some(grpc)) = (PyServer::start(), PyGrpc::start(&[])) else {
        return;
    };
    let _load = exclusive();
    let dir = tempfile::tempdir().unwrap();
    let scenario = |(ws, grpc): &(PyServer, PyGrpc)| {
        let grpc_url = format!("http://{}", grpc.addr);
        both_flows(&grpc_url, &format!("ws://{}/echo", ws.addr), &grpc_url)
    };
    let fresh = first_then((ws, grpc), || {
        Some((PyServer::start()?, PyGrpc::start(&[])?))
    });
    let (code, result, text, (ws, grpc)) = run_fresh(dir.path(), fresh, scenario);
    assert_eq!(code, Some(0), "{text}\nvalidity: {}", result["validity"]);
    let (echo, create, watch) = (
        step(&result, "echo"),
        step(&result, "create"),
        step(&result, "watch"),
    );
    let sessions = n(&echo["requests"]);
    assert_eq!(n(&echo["failed"]), 0, "{echo}");
    let w = py_servers::settled(&ws, sessions);
    assert_eq!(n(&w["sessions"]), sessions, "{w}");
    assert_eq!(n(&w["received"]), n(&echo["ws"]["messages_sent"]), "{w}");
    let g = grpc.counts();
    assert_eq!(server_calls(&g, "Create", "OK"), ok_calls(create), "{g}");
    assert_eq!(server_calls(&g, "Watch", "OK"), ok_calls(watch), "{g}");
    assert_eq!(
        n(&g["messages_sent"]["Watch"]),
        n(&watch["grpc"]["messages_received"]),
        "{g}"
    );
    assert_eq!(n(&create["failed"]) + n(&watch["failed"]), 0);
}

/// `loadlab run` on `yaml` with the open-files limit at 20,000 (soft and hard, a common
/// default): the exit code, run.json and the output.
fn run_with_20000_files(dir: &std::path::Path, yaml: &str) -> (Option<i32>, Value, String) {
    let path = dir.join("s.yaml");
    std::fs::write(&path, yaml).unwrap();
    let json = dir.join("run.json");
    let _ = std::fs::remove_file(&json);
    let out = std::process::Command::new("sh")
        .args([
            "-c",
            "ulimit -n 20000 && exec \"$@\"",
            "sh",
            common::BIN,
            "run",
        ])
        .arg(&path)
        .args(["--no-progress", "--retry-invalid", "2", "--json"])
        .arg(&json)
        .env("LOADLAB_RESULTS", dir.join("results"))
        .output()
        .expect("run loadlab");
    let result = std::fs::read_to_string(&json)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(Value::Null);
    (out.status.code(), result, common::text(&out))
}

#[test]
fn an_http_step_beside_a_grpc_step_runs_at_the_default_max_in_flight_on_20000_files() {
    let _load = exclusive();
    let target = Target::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    // Two origins (HTTP/1.1 and the gRPC one), one connection to each per iteration in
    // flight: the default max_in_flight of 10,000 needed 20,064 files and was refused.
    let two_origins = |max_in_flight: &str| {
        format!(
            "target: {}\nload: {{ model: open, rate: 20/s, duration: 500ms{max_in_flight} }}\nsteps:\n  - {{ name: ping, get: /api/ping }}\n  - name: create\n    grpc:\n      proto: {PROTO}\n      call: permits.v1.Permits/Create\n      message: {{ applicant: ann, kind: building }}\n",
            target.url
        )
    };
    let (code, result, text) = run_with_20000_files(dir.path(), &two_origins(""));
    assert_eq!(code, Some(0), "{text}\nvalidity: {}", result["validity"]);
    assert!(n(&step(&result, "create")["requests"]) >= 5, "{text}");
    assert_eq!(n(&step(&result, "create")["failed"]), 0, "{text}");
    // The default was fitted to the limit, and the user told so.
    assert_eq!(result["load"]["max_in_flight"], 9968, "{}", result["load"]);
    assert!(
        text.contains("max_in_flight is 9968 instead of its default 10000"),
        "{text}"
    );
    // One given by the user is kept: if it cannot fit, the run is refused before any load,
    // with what it needs and how to fix it.
    let (code, _, text) = run_with_20000_files(dir.path(), &two_origins(", max_in_flight: 10000"));
    assert_eq!(code, Some(2), "{text}");
    assert!(
        text.contains("20,000 concurrent connections for max_in_flight 10,000 × 2 origins"),
        "{text}"
    );
    assert!(text.contains("ulimit -Hn"), "{text}");
}
