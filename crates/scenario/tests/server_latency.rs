//! `defaults.server_latency_header`: which response header carries the server's own time.

use loadlab_scenario::{Scenario, ServerLatency};

fn parse(defaults: &str) -> Result<Scenario, String> {
    let src = format!(
        "load: {{model: closed, vus: 1, duration: 1s}}\n{defaults}flows: [ {{ steps: [ {{ get: /a }} ] }} ]\n"
    );
    Scenario::parse(&src, "s.yaml").map_err(|e| e.to_string())
}

#[test]
fn header_forms() {
    let table: &[(&str, ServerLatency)] = &[
        ("", ServerLatency::ServerTiming),
        (
            "defaults: { server_latency_header: Server-Timing }\n",
            ServerLatency::ServerTiming,
        ),
        (
            "defaults: { server_latency_header: X-Response-Time }\n",
            ServerLatency::Header("X-Response-Time".into()),
        ),
        (
            "defaults: { server_latency_header: none }\n",
            ServerLatency::Off,
        ),
    ];
    for (defaults, want) in table {
        let s = parse(defaults).unwrap_or_else(|e| panic!("{defaults}: {e}"));
        assert_eq!(&s.defaults.server_latency, want, "{defaults}");
    }
}

#[test]
fn a_bad_header_name_is_located_and_explained() {
    let err = parse("defaults:\n  server_latency_header: \"X Response: Time\"\n").unwrap_err();
    assert!(
        err.starts_with(
            "s.yaml:3:26: defaults.server_latency_header: `X Response: Time` is not a header name"
        ),
        "{err}"
    );
    assert!(err.contains("X-Response-Time"), "{err}");
}
