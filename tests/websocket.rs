//! WebSocket sessions end to end: the built-in target's `/ws/echo` and `/ws/subscribe`, and
//! a server from another implementation (Python `websockets`, scripts/ws_server.py,
//! installed by scripts/setup-test-deps.sh) whose own counts must equal the run's; and the
//! faults: an abnormal close, an upgrade never answered, an oversized message, pings.

mod common;
#[path = "common/py_servers.rs"]
mod py_servers;
#[path = "common/run_json.rs"]
mod run_json;

use common::{exclusive, Target};
use py_servers::{settled, PyServer};
use run_json::{first_then, http_get, metric, n, report_md, run, run_fresh, step};

use std::net::TcpListener;

use std::time::{Duration, Instant};

#[test]
fn sessions_against_the_built_in_target_count_what_the_target_counts() {
    let _load = exclusive();
    let dir = tempfile::tempdir().unwrap();
    let scenario = |target: &Target| {
        format!(
            r#"
target: {url}
load: {{ model: open, rate: 20/s, duration: 1s }}
flows:
  - steps:
      - name: echo
        ws:
          url: /ws/echo
          steps:
            - send: '{{"n": {{{{ vu }}}}}}'
            - expect: {{ json: "$.n" }}
            - capture: {{ echoed: "$.n" }}
            - send: {{ binary: aGVsbG8= }}
            - expect: {{ contains: hello }}
      - name: updates
        ws:
          url: /ws/subscribe?every_ms=20
          steps:
            - send: {{ json: {{ subscribe: "app-{{{{ echoed }}}}" }} }}
            - expect: {{ json: "$.status", equals: received, within: 2s }}
          close_after: 300ms
"#,
            url = target.url
        )
    };
    let (code, result, text, target) = run_fresh(dir.path(), || Target::start(&[]), scenario);
    assert_eq!(code, Some(0), "{text}\nvalidity: {}", result["validity"]);
    common::assert_valid(&result, "ws run");
    common::assert_matches_run_schema(&result);
    let echo = step(&result, "echo");
    let sessions = n(&echo["requests"]);
    assert!(sessions >= 15, "{echo}");
    assert_eq!(n(&echo["failed"]), 0, "{echo}");
    assert_eq!(n(&echo["status_codes"]["101"]), sessions);
    assert_eq!(n(&echo["ws"]["messages_sent"]), 2 * sessions);
    assert_eq!(n(&echo["ws"]["messages_received"]), 2 * sessions);
    assert_eq!(n(&echo["ws"]["close_codes"]["1000"]), sessions, "{echo}");
    assert!(echo["latency_ms"]["p50"].as_f64().unwrap() > 0.0);
    for name in ["echo › expect $.n", "echo › expect contains \"hello\""] {
        let e = step(&result, name);
        assert_eq!(n(&e["requests"]), sessions, "{e}");
        assert_eq!(n(&e["failed"]), 0, "{e}");
        assert!(e["latency_ms"]["p50"].as_f64().unwrap() > 0.0, "{e}");
    }
    let updates = step(&result, "updates");
    assert_eq!(n(&updates["requests"]), sessions, "{updates}");
    assert_eq!(n(&updates["failed"]), 0, "{updates}");
    let ack = step(&result, "updates › expect $.status == \"received\"");
    assert_eq!(n(&ack["failed"]), 0, "{ack}");
    // Held open 300 ms with a push every 20 ms: several updates per session.
    let pushed = n(&updates["ws"]["messages_received"]);
    assert!(pushed >= 5 * sessions, "{updates}");
    let session_p50 = updates["ws"]["session_ms"]["p50"].as_f64().unwrap();
    assert!((280.0..1000.0).contains(&session_p50), "{updates}");
    // The report shows the sessions' figures in its Protocols section.
    let md = report_md(dir.path());
    let protocols = &md[md.find("## Protocols").expect("a Protocols section")..];
    let row = format!("| `echo` | {sessions} | {} (", 2 * sessions);
    assert!(protocols.contains(&row), "{protocols}");
    assert!(
        protocols.contains(&format!("| 1000={sessions} |")),
        "{protocols}"
    );
    assert!(!protocols.contains("### gRPC"), "{protocols}");

    let addr = target.url.trim_start_matches("http://");
    let metrics = http_get(addr, "/metrics");
    let sent: u64 = ["echo", "updates"]
        .iter()
        .map(|s| n(&step(&result, s)["ws"]["messages_sent"]))
        .sum();
    let received: u64 = ["echo", "updates"]
        .iter()
        .map(|s| n(&step(&result, s)["ws"]["messages_received"]))
        .sum();
    assert_eq!(
        metric(&metrics, "loadlab_target_ws_sessions_total"),
        2 * sessions
    );
    assert_eq!(
        metric(&metrics, "loadlab_target_ws_messages_received_total"),
        sent
    );
    // The target may push an update the client no longer reads while it closes.
    let target_sent = metric(&metrics, "loadlab_target_ws_messages_sent_total");
    assert!(
        (received..=received + sessions).contains(&target_sent),
        "{target_sent} vs {received}"
    );
}

#[test]
fn counts_agree_with_a_python_websockets_server() {
    let Some(server) = PyServer::start() else {
        return;
    };
    let _load = exclusive();
    let dir = tempfile::tempdir().unwrap();
    let scenario = |server: &PyServer| {
        format!(
            r#"
load: {{ model: open, rate: 20/s, duration: 1s }}
steps:
  - name: echo
    ws:
      url: ws://{addr}/echo
      steps:
        - send: "hello {{{{ vu }}}}"
        - expect: {{ contains: hello }}
        - send: {{ binary: AAECAw== }}
        - expect: {{}}
        - send: {{ json: {{ a: 1 }} }}
        - expect: {{ json: "$.a", equals: 1 }}
"#,
            addr = server.addr
        )
    };
    let fresh = first_then(server, PyServer::start);
    let (code, result, text, server) = run_fresh(dir.path(), fresh, scenario);
    // A paced run on a quiet machine is valid: exit 0.
    assert!(code == Some(0), "{text}\nvalidity: {}", result["validity"]);
    let echo = step(&result, "echo");
    let sessions = n(&echo["requests"]);
    assert!(sessions >= 15, "{echo}");
    assert_eq!(n(&echo["failed"]), 0, "{echo}");
    let c = settled(&server, sessions);
    assert_eq!(n(&c["sessions"]), sessions, "{c}");
    assert_eq!(
        n(&c["received"]),
        n(&echo["ws"]["messages_sent"]),
        "{c} {echo}"
    );
    assert_eq!(
        n(&c["sent"]),
        n(&echo["ws"]["messages_received"]),
        "{c} {echo}"
    );
    assert_eq!(
        n(&c["bytes_received"]),
        n(&echo["ws"]["message_bytes_sent"]),
        "{c} {echo}"
    );
    assert_eq!(n(&c["received"]), 3 * sessions);
    assert_eq!(n(&c["close_codes"]["1000"]), sessions, "{c}");
    assert_eq!(n(&echo["ws"]["close_codes"]["1000"]), sessions, "{echo}");
}

#[test]
fn faults_become_their_error_kinds() {
    let Some(server) = PyServer::start() else {
        return;
    };
    let _load = exclusive();
    let dir = tempfile::tempdir().unwrap();
    // A listener that accepts and never answers the upgrade.
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let silent_addr = silent.local_addr().unwrap();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for s in silent.incoming().take(64).flatten() {
            held.push(s);
        }
    });
    let scenario = |server: &PyServer| {
        format!(
            r#"
load: {{ model: open, rate: 25/s, duration: 1s, max_in_flight: 100 }}
flows:
  - name: dropped
    steps:
      - name: drop
        ws: {{ url: "ws://{addr}/drop", steps: [ {{send: hi}}, {{expect: {{within: 2s}}}} ] }}
  - name: silent
    steps:
      - name: silent
        ws: {{ url: "ws://{silent_addr}/", timeout: 300ms, steps: [ {{send: hi}} ] }}
  - name: big
    steps:
      - name: big
        ws: {{ url: "ws://{addr}/big?bytes=200000", max_message: 64KB, steps: [ {{send: hi}}, {{expect: {{}}}} ] }}
  - name: pinged
    steps:
      - name: ping
        ws: {{ url: "ws://{addr}/ping", steps: [ {{send: hi}}, {{expect: {{}}}} ], close_after: 600ms }}
  - name: slow
    steps:
      - name: slow
        ws: {{ url: "ws://{addr}/echo", steps: [ {{expect: {{contains: never, within: 200ms}}}} ] }}
"#,
            addr = server.addr
        )
    };
    let started = Instant::now();
    let fresh = first_then(server, PyServer::start);
    let (code, result, text, server) = run_fresh(dir.path(), fresh, scenario);
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "no hang: {text}"
    );
    // Faults of the target do not make the measurement invalid: exit 0.
    assert!(code == Some(0), "{text}\nvalidity: {}", result["validity"]);
    let errors = |name: &str| step(&result, name)["errors"].clone();
    let drop = step(&result, "drop");
    assert!(n(&drop["requests"]) > 0);
    assert_eq!(
        n(&errors("drop")["ws_closed_abnormally"]),
        n(&drop["requests"]),
        "{drop}"
    );
    assert_eq!(
        n(&drop["ws"]["close_codes"]["1006"]),
        n(&drop["requests"]),
        "{drop}"
    );
    let silent = step(&result, "silent");
    assert!(n(&silent["requests"]) > 0);
    assert_eq!(
        n(&errors("silent")["ws_handshake"]),
        n(&silent["requests"]),
        "{silent}"
    );
    let big = step(&result, "big");
    assert!(n(&big["requests"]) > 0);
    assert_eq!(
        n(&errors("big")["ws_protocol"]),
        n(&big["requests"]),
        "{big}"
    );
    let ping = step(&result, "ping");
    assert!(n(&ping["requests"]) > 0);
    assert_eq!(
        n(&ping["failed"]),
        0,
        "pings answered, sessions survive: {ping}"
    );
    assert_eq!(
        n(&ping["ws"]["close_codes"]["1000"]),
        n(&ping["requests"]),
        "{ping}"
    );
    let slow = step(&result, "slow › expect contains \"never\"");
    assert_eq!(
        n(&slow["errors"]["ws_expect_timeout"]),
        n(&slow["requests"]),
        "{slow}"
    );
    assert!(n(&slow["requests"]) > 0);
    let c = server.counts();
    assert_eq!(n(&c["pings_unanswered"]), 0, "{c}");
    let examples = result.to_string();
    assert!(
        examples.contains("no WebSocket upgrade within 300ms"),
        "{examples}"
    );
}

#[test]
fn wss_sessions_run_over_the_engines_tls() {
    let _load = exclusive();
    let target = Target::start(&["--tls"]);
    assert!(target.url.starts_with("https://"), "{}", target.url);
    let dir = tempfile::tempdir().unwrap();
    let yaml = format!(
        r#"
target: {url}
insecure: true
load: {{ model: open, rate: 20/s, duration: 1s }}
steps:
  - name: echo
    ws:
      url: /ws/echo
      steps:
        - send: "hello {{{{ vu }}}}"
        - expect: {{ contains: hello }}
"#,
        url = target.url
    );
    let (code, result, text) = run(dir.path(), &yaml);
    assert_eq!(code, Some(0), "{text}\nvalidity: {}", result["validity"]);
    let echo = step(&result, "echo");
    let sessions = n(&echo["requests"]);
    assert!(sessions >= 15, "{echo}");
    assert_eq!(n(&echo["failed"]), 0, "{echo}");
    assert_eq!(n(&echo["ws"]["messages_received"]), sessions, "{echo}");
    // Each session's own connection: a TLS handshake each.
    let tls = &echo["phases_ms"]["tls_handshake"];
    assert!(tls["p50"].as_f64().unwrap() > 0.0, "{echo}");
}
