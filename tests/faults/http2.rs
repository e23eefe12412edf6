//! HTTP/2 end to end: the binary against a Rust HTTP/2 server (the `h2` crate's) over h2c and
//! TLS + ALPN — counts agree with the server's — and against one that limits streams to one,
//! resets streams, sends GOAWAY mid-run or stalls flow control: every run ends in bounded
//! time with its errors classified. And the open model over one multiplexed connection keeps
//! a server's slowness in latency, not in service time.

use crate::h2server::{Behaviour, H2Server, Mode};
use crate::run::*;
use h2::Reason;
use serde_json::Value;
use std::time::Duration;

/// Runs a scenario file written from `yaml` (target `url`) with HTTP/2 client `client`.
fn run_scenario(test: &str, url: &str, yaml: &str, client: &str) -> Run {
    let test = &format!("{test}_{client}");
    let tmp = scratch_dir("http2-");
    let path = tmp.path().join(format!("{test}.yaml"));
    std::fs::write(&path, format!("target: {url}\ninsecure: true\n{yaml}")).unwrap();
    let run = run_args(
        test,
        vec![
            "run".into(),
            path.to_string_lossy().into_owned(),
            "--http2-client".into(),
            client.into(),
        ],
        results_dir().path(),
        &[],
    );
    let _ = std::fs::remove_file(&path);
    run
}

/// `loadlab run --url` (see `run_loadlab`) with HTTP/2 client `client`.
fn run_url(test: &str, url: &str, load: &[&str], timeout: &str, client: &str) -> Run {
    let mut args = load.to_vec();
    args.extend(["--http2-client", client]);
    run_loadlab(&format!("{test}_{client}"), url, &args, timeout)
}

fn origin<'a>(run: &'a Run, key: &str) -> &'a serde_json::Value {
    &run.json()["origins"][0][key]
}

/// Every request answered, and the server saw exactly the requests loadlab counted.
fn assert_all_answered(run: &Run, server: &H2Server) {
    assert_eq!(run.code(), 0, "{}", run.describe());
    assert_consistent(run);
    assert!(run.total() > 0, "{}", run.describe());
    assert_eq!(run.failed(), 0, "{}", run.describe());
    assert_eq!(server.requests(), run.total(), "{}", run.describe());
    assert_eq!(server.responses(), run.total(), "{}", run.describe());
    // One latency per stream.
    assert_eq!(
        run.u("/latency_ms/count"),
        run.total(),
        "{}",
        run.describe()
    );
    assert_eq!(run.u("/steps/0/latency_ms/count"), run.total());
}

fn h2c_and_tls_alpn_counts_agree_with_the_server(client: &str) {
    let plain = H2Server::start(Behaviour::default());
    let run = run_url(
        "h2c",
        &plain.url("/"),
        &["--http2", "--rate", "200/s"],
        "2s",
        client,
    );
    assert_all_answered(&run, &plain);
    assert_eq!(origin(&run, "protocol"), "h2c");
    assert_eq!(origin(&run, "version"), "2");
    let tls = H2Server::start(Behaviour {
        tls: true,
        ..Behaviour::default()
    });
    // `auto` (the default) over TLS: ALPN picks h2. Paced: three VUs flat out with this
    // process serving TLS take both cores of a 2-core host, and the run is rightly invalid.
    let run = run_url(
        "h2_alpn",
        &tls.url("/"),
        &["--insecure", "--vus", "3", "--pace", "10ms"],
        "2s",
        client,
    );
    assert_all_answered(&run, &tls);
    assert_eq!(origin(&run, "protocol"), "h2");
    assert_eq!(origin(&run, "version"), "auto");
    assert_eq!(origin(&run, "connections")["h2"], 3, "one per VU");
    // Shared and multiplexed: two connections carry every stream.
    let shared = H2Server::start(Behaviour {
        tls: true,
        delay: Duration::from_millis(5),
        ..Behaviour::default()
    });
    let run = run_scenario(
        "h2_shared",
        &shared.url(""),
        "http: { version: \"2\", connections: 2, max_streams: 50 }\nload: { model: open, rate: 300/s, duration: 1s }\nsteps: [ { get: / } ]\n", client,
    );
    assert_all_answered(&run, &shared);
    // The check before the load only shakes hands over TLS: it opens no HTTP/2 connection.
    assert_eq!(shared.connections(), 2);
    assert_eq!(origin(&run, "shared_connections"), 2);
}

fn data_sent_and_received_are_what_the_connections_moved(client: &str) {
    // Per VU and shared: every frame (the preface, SETTINGS, HPACK-compressed header blocks,
    // DATA) counted as it went over the connection, as the server read and wrote it.
    // Paced: three VUs flat out against this process's server take a third of a core from
    // the generator on a 2-core host, and on CI's VM (27% stolen) all five attempts were
    // rightly invalid as host_contended. The bytes are what this test is about.
    for (name, yaml) in [
        (
            "h2_bytes_per_vu",
            "http: { version: \"2\" }\nload: { model: closed, vus: 3, pace: 10ms, duration: 1s }\n",
        ),
        (
            "h2_bytes_shared",
            "http: { version: \"2\", connections: 2 }\nload: { model: open, rate: 300/s, duration: 1s }\n",
        ),
    ] {
        let server = H2Server::start(Behaviour::default());
        let run = run_scenario(
            name,
            &server.url(""),
            &format!("{yaml}steps: [ {{ post: /, body: 'twelve bytes' }} ]\n"), client,
    );
        assert_all_answered(&run, &server);
        let (sent, received) = (run.u("/bytes/sent"), run.u("/bytes/received"));
        // Let the server read what the client wrote last.
        std::thread::sleep(Duration::from_millis(200));
        let (server_in, server_out) = server.wire_bytes();
        // Only what moved after the last answer (a closing GOAWAY, a WINDOW_UPDATE) is not
        // any request's: a few frames per connection.
        let connections = server.connections();
        let slack = 64 * connections;
        assert!(
            sent <= server_in && server_in - sent <= slack,
            "{name}: loadlab sent {sent} bytes, the server read {server_in} on {connections} connections"
        );
        assert!(
            received <= server_out && server_out - received <= slack,
            "{name}: loadlab received {received} bytes, the server wrote {server_out}"
        );
        // Not HTTP/1.1 re-counted: HPACK makes repeated headers a few bytes each.
        let per_request = sent / run.total();
        assert!(
            (12..120).contains(&per_request),
            "{name}: {per_request} bytes a request"
        );
    }
}

fn a_server_allowing_one_stream_gets_one_at_a_time(client: &str) {
    let server = H2Server::start(Behaviour {
        max_streams: Some(1),
        delay: Duration::from_millis(2),
        ..Behaviour::default()
    });
    let run = run_scenario(
        "h2_one_stream",
        &server.url(""),
        "http: { version: \"2\", connections: 1, max_streams: 100 }\nload: { model: open, rate: 200/s, duration: 1s }\ndefaults: { timeout: 3s }\nsteps: [ { get: / } ]\n", client,
    );
    assert_all_answered(&run, &server);
    assert_eq!(
        server.most_active(),
        1,
        "SETTINGS_MAX_CONCURRENT_STREAMS honoured"
    );
    assert_eq!(run.err("stream_refused"), 0);
}

fn reset_and_refused_streams_are_classified(client: &str) {
    for (reason, kind) in [
        (Reason::INTERNAL_ERROR, "stream_reset"),
        (Reason::REFUSED_STREAM, "stream_refused"),
    ] {
        let server = H2Server::start(Behaviour {
            mode: Mode::Reset(reason),
            ..Behaviour::default()
        });
        let run = run_url(
            kind,
            &server.url("/"),
            &["--http2", "--rate", "50/s"],
            "2s",
            client,
        );
        assert_every_request_failed_as(&run, kind);
        assert!(run.elapsed < Duration::from_secs(5), "{}", run.describe());
        let example = run.json()["error_examples"][kind].as_str().unwrap_or("");
        assert!(example.contains("RST_STREAM"), "{example}");
        assert!(!run.json()["error_hints"][kind].as_str().unwrap().is_empty());
    }
}

fn goaway_mid_run_drains_and_reconnects(client: &str) {
    // Graceful GOAWAY after every 50 streams: the run reconnects without a single error,
    // on shared connections and on each VU's own. An arrival that comes while the worker opens
    // the next connection is sent late by that work (the generator's own, rightly counted);
    // every 25 streams put about 5% of the arrivals there, on the p95 the run is judged by.
    let server = H2Server::start(Behaviour {
        mode: Mode::GoAwayAfter(50),
        delay: Duration::from_millis(1),
        ..Behaviour::default()
    });
    let run = run_scenario(
        "h2_goaway_shared",
        &server.url(""),
        "http: { version: \"2\", connections: 1 }\nload: { model: open, rate: 200/s, duration: 1s }\ndefaults: { timeout: 3s }\nsteps: [ { get: / } ]\n", client,
    );
    assert_all_answered(&run, &server);
    let opened = origin(&run, "connections")["h2c"].as_u64().unwrap();
    assert!(
        opened >= 200 / 50 - 1,
        "reconnected after each GOAWAY: {opened}"
    );
    let server = H2Server::start(Behaviour {
        mode: Mode::GoAwayAfter(10),
        ..Behaviour::default()
    });
    let run = run_url(
        "h2_goaway_vus",
        &server.url("/"),
        &["--http2", "--vus", "2"],
        "2s",
        client,
    );
    assert_eq!(run.failed(), 0, "{}", run.describe());
    assert!(run.total() > 20, "{}", run.describe());
    assert_eq!(server.responses(), run.total(), "{}", run.describe());
    // A GOAWAY with an error code fails the streams it cuts off, and the run goes on.
    let server = H2Server::start(Behaviour {
        mode: Mode::GoAwayError(5, Reason::ENHANCE_YOUR_CALM),
        delay: Duration::from_millis(20),
        ..Behaviour::default()
    });
    let run = run_url(
        "h2_goaway_error",
        &server.url("/"),
        &["--http2", "--vus", "4"],
        "2s",
        client,
    );
    assert_eq!(run.code(), 0, "{}", run.describe());
    assert_consistent(&run);
    assert!(run.ok() > 0, "{}", run.describe());
    // The server closes its socket right after the GOAWAY: a client that was writing then
    // sees the broken pipe before it reads the frame (a race the load on the machine decides),
    // and that stream is a `reset`. Either way the cut streams fail and the run goes on.
    assert!(run.failed() > 0, "{}", run.describe());
    assert_eq!(
        run.err("goaway") + run.err("reset"),
        run.failed(),
        "{}",
        run.describe()
    );
    if run.err("goaway") > 0 {
        let example = run.json()["error_examples"]["goaway"].as_str().unwrap();
        assert!(example.contains("ENHANCE_YOUR_CALM"), "{example}");
    }
}

fn a_stalled_flow_control_window_is_a_bounded_flow_control_error(client: &str) {
    let server = H2Server::start(Behaviour {
        window: Some(0),
        ..Behaviour::default()
    });
    let run = run_url(
        "h2_stalled_window",
        &server.url("/"),
        &["--http2", "-X", "POST", "--body", "hello", "--vus", "2"],
        "300ms",
        client,
    );
    // The client does not wait for the server's SETTINGS before its first stream (nor do
    // browsers or h2load): a first request sent before they arrive may use the default
    // window and succeed. Every other request fails as flow_control.
    let opened: u64 = run.json()["origins"][0]["connections"]
        .as_object()
        .map_or(0, |c| c.values().filter_map(Value::as_u64).sum());
    assert_eq!(run.code(), 0, "{}", run.describe());
    assert_consistent(&run);
    assert!(run.ok() <= opened, "{opened} opened\n{}", run.describe());
    // A body that got through on the default window waits for a response the stalled server
    // never sends: that request times out instead. Each failure closes its connection, so
    // every request is its connection's first and races the server's SETTINGS: on a slow
    // host more bodies slip through (CI's VM: 6 of 8) — at least one meets the closed window.
    assert!(run.err("flow_control") >= 1, "{}", run.describe());
    assert_eq!(
        run.err("flow_control") + run.err("timeout"),
        run.failed(),
        "{}",
        run.describe()
    );
    assert!(run.err("timeout") <= opened, "{}", run.describe());
    assert!(run.elapsed < Duration::from_secs(4), "{}", run.describe());
    // 2 VUs × ~1.3 s / 300 ms: a handful of failures, each waiting its whole timeout (the
    // requests that slip through before SETTINGS are quick, and bounded by `opened` above).
    assert!((4..=12).contains(&run.failed()), "{}", run.describe());
    let example = run.json()["error_examples"]["flow_control"]
        .as_str()
        .unwrap();
    assert!(example.contains("WINDOW_UPDATE"), "{example}");
}

fn open_model_over_one_multiplexed_connection_keeps_the_queue_in_latency(client: &str) {
    // 40 arrivals/s, but the server takes 100 ms per request and allows 2 streams: capacity
    // 20/s. Arrivals wait for a stream slot; that wait is latency, not service time.
    let server = H2Server::start(Behaviour {
        max_streams: Some(2),
        delay: Duration::from_millis(100),
        ..Behaviour::default()
    });
    let run = run_scenario(
        "h2_open_queue",
        &server.url(""),
        "http: { version: \"2\", connections: 1 }\nload: { model: open, rate: 40/s, duration: 1s }\ndefaults: { timeout: 5s }\nsteps: [ { get: / } ]\n", client,
    );
    assert_all_answered(&run, &server);
    assert_eq!(server.most_active(), 2);
    assert!(
        run.u("/requests/delayed_by_stream_limit") > 10,
        "{}",
        run.describe()
    );
    let service_max = run.f("/service_time_ms/max");
    let latency_max = run.f("/latency_ms/max");
    assert!(
        (99.0..250.0).contains(&service_max),
        "service time stays ~100 ms: {service_max}"
    );
    assert!(
        latency_max >= 500.0,
        "latency {latency_max} ms should include the wait for a stream"
    );
}

fn a_body_past_max_body_is_body_too_large(client: &str) {
    // The server answers "ok": two bytes, one past the bound. The stream is reset; no
    // request fails as anything else (a reset, a broken connection).
    let server = H2Server::start(Behaviour::default());
    let run = run_scenario(
        "h2_max_body",
        &server.url(""),
        "http: { version: \"2\" }\nload: { model: closed, vus: 2, pace: 10ms, duration: 1s }\ndefaults: { max_body: 1B }\nsteps: [ { get: / } ]\n",
        client,
    );
    assert_every_request_failed_as(&run, "body_too_large");
    let example = run.json()["error_examples"]["body_too_large"].as_str();
    assert_eq!(example, Some("response body larger than 1 bytes"));
}

/// Each test with the `h2` crate and with the purpose-built client (`--http2-client wire`):
/// the same counts, bytes, errors and limits.
mod clients {
    #[test]
    fn a_body_past_max_body_is_body_too_large_h2() {
        super::a_body_past_max_body_is_body_too_large("h2");
    }

    #[test]
    fn a_body_past_max_body_is_body_too_large_wire() {
        super::a_body_past_max_body_is_body_too_large("wire");
    }

    #[test]
    fn h2c_and_tls_alpn_counts_agree_with_the_server_h2() {
        super::h2c_and_tls_alpn_counts_agree_with_the_server("h2");
    }

    #[test]
    fn h2c_and_tls_alpn_counts_agree_with_the_server_wire() {
        super::h2c_and_tls_alpn_counts_agree_with_the_server("wire");
    }

    #[test]
    fn data_sent_and_received_are_what_the_connections_moved_h2() {
        super::data_sent_and_received_are_what_the_connections_moved("h2");
    }

    #[test]
    fn data_sent_and_received_are_what_the_connections_moved_wire() {
        super::data_sent_and_received_are_what_the_connections_moved("wire");
    }

    #[test]
    fn a_server_allowing_one_stream_gets_one_at_a_time_h2() {
        super::a_server_allowing_one_stream_gets_one_at_a_time("h2");
    }

    #[test]
    fn a_server_allowing_one_stream_gets_one_at_a_time_wire() {
        super::a_server_allowing_one_stream_gets_one_at_a_time("wire");
    }

    #[test]
    fn reset_and_refused_streams_are_classified_h2() {
        super::reset_and_refused_streams_are_classified("h2");
    }

    #[test]
    fn reset_and_refused_streams_are_classified_wire() {
        super::reset_and_refused_streams_are_classified("wire");
    }

    #[test]
    fn goaway_mid_run_drains_and_reconnects_h2() {
        super::goaway_mid_run_drains_and_reconnects("h2");
    }

    #[test]
    fn goaway_mid_run_drains_and_reconnects_wire() {
        super::goaway_mid_run_drains_and_reconnects("wire");
    }

    #[test]
    fn a_stalled_flow_control_window_is_a_bounded_flow_control_error_h2() {
        super::a_stalled_flow_control_window_is_a_bounded_flow_control_error("h2");
    }

    #[test]
    fn a_stalled_flow_control_window_is_a_bounded_flow_control_error_wire() {
        super::a_stalled_flow_control_window_is_a_bounded_flow_control_error("wire");
    }

    #[test]
    fn open_model_over_one_multiplexed_connection_keeps_the_queue_in_latency_h2() {
        super::open_model_over_one_multiplexed_connection_keeps_the_queue_in_latency("h2");
    }

    #[test]
    fn open_model_over_one_multiplexed_connection_keeps_the_queue_in_latency_wire() {
        super::open_model_over_one_multiplexed_connection_keeps_the_queue_in_latency("wire");
    }
}
