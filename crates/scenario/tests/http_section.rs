//! `http:`: the version per scenario and per step, shared connections, and the errors a user
//! gets for each mistake (file:line, field, fix).

use loadlab_scenario::{HttpVersion, Scenario, Step, DEFAULT_MAX_STREAMS};

const LOAD: &str = "load: {model: closed, vus: 1, duration: 1s}\ntarget: http://127.0.0.1:8080\n";

fn parse(body: &str) -> Result<Scenario, String> {
    Scenario::parse(&format!("{LOAD}{body}"), "h.yaml").map_err(|e| e.to_string())
}

fn step_version(s: &Scenario, i: usize) -> Option<HttpVersion> {
    match &s.flows[0].steps[i] {
        Step::Request(r) => r.http_version,
        _ => panic!("not a request"),
    }
}

#[test]
fn versions_connections_and_streams_parse() {
    let s = parse("steps: [ {get: /a} ]\n").unwrap();
    assert_eq!(s.http.version, HttpVersion::Auto, "default: auto");
    assert_eq!(s.http.connections, None, "default: a connection per VU");
    assert_eq!(s.http.max_streams, DEFAULT_MAX_STREAMS);
    let s = parse(
        "http: { version: \"2\", connections: 4, max_streams: 50 }\nsteps:\n  - get: /a\n  - get: /b\n    http: { version: \"1.1\" }\n",
    )
    .unwrap();
    assert_eq!(s.http.version, HttpVersion::Http2);
    assert_eq!(s.http.connections, Some(4));
    assert_eq!(s.http.max_streams, 50);
    assert_eq!(step_version(&s, 0), None);
    assert_eq!(step_version(&s, 1), Some(HttpVersion::Http1));
    // As people write them: numbers, and the ALPN names.
    for (written, want) in [
        ("2", HttpVersion::Http2),
        ("2.0", HttpVersion::Http2),
        ("1.1", HttpVersion::Http1),
        ("\"1.1\"", HttpVersion::Http1),
        ("auto", HttpVersion::Auto),
        ("h2", HttpVersion::Http2),
    ] {
        let s = parse(&format!(
            "http: {{ version: {written} }}\nsteps: [ {{get: /a}} ]\n"
        ))
        .unwrap();
        assert_eq!(s.http.version, want, "{written}");
    }
    // `connections: shared` and shared multiplexed connections agree.
    parse("connections: shared\nhttp: { connections: 2 }\nsteps: [ {get: /a} ]\n").unwrap();
}

#[test]
fn mistakes_name_their_line_and_the_fix() {
    let cases = [
        (
            "http: { version: 3 }\nsteps: [ {get: /a} ]\n",
            "h.yaml:3:18: http.version: unknown HTTP version `3`\n  hint: use \"1.1\", \"2\" or auto",
        ),
        (
            "http: { connections: 0 }\nsteps: [ {get: /a} ]\n",
            "h.yaml:3:22: http.connections: `0` shared connections: give 1 to 100000",
        ),
        (
            "http: { connections: 2, max_streams: 0 }\nsteps: [ {get: /a} ]\n",
            "http.max_streams: `0` streams per connection: give 1 to 1000000",
        ),
        (
            "http: { max_streams: 10 }\nsteps: [ {get: /a} ]\n",
            "http.max_streams: `max_streams` limits the streams of shared connections, but `http.connections` is not set",
        ),
        (
            "connections: none\nhttp: { connections: 2 }\nsteps: [ {get: /a} ]\n",
            "h.yaml:4:22: http.connections: `http.connections` shares connections between VUs, but `connections` asks for a new connection for every request",
        ),
        (
            "connections: per_vu\nhttp: { connections: 2 }\nsteps: [ {get: /a} ]\n",
            "but `connections` asks for a connection per VU",
        ),
        (
            "http: { versoin: 2 }\nsteps: [ {get: /a} ]\n",
            "h.yaml:3:9: http: unknown field `versoin`\n  hint: did you mean `version`?",
        ),
        (
            "steps:\n  - get: /a\n    http: { connections: 2 }\n",
            "h.yaml:5:26: steps[0].http.connections: a step's `http:` can only choose `version`; `connections` is set for the whole scenario\n  hint: move `connections` to the top-level `http:` section",
        ),
        (
            "steps:\n  - get: /a\n    http: { version: \"1.0\" }\n",
            "steps[0].http.version: unknown HTTP version `1.0`",
        ),
        (
            "steps:\n  - get: /a\n  - think: 1s\n    http: { version: \"2\" }\n",
            "steps[1].http: `http:` belongs to a request step",
        ),
    ];
    let mut bad = 0;
    for (src, want) in cases {
        let got = parse(src).unwrap_err();
        if !got.starts_with(want) && !got.contains(want) {
            eprintln!("\nsource:\n{src}\nwant: {want}\ngot:  {got}");
            bad += 1;
        }
    }
    assert_eq!(bad, 0, "mismatched error messages");
}

#[test]
fn the_record_describes_the_section_and_the_fingerprint_covers_it() {
    let a = parse("http: { version: \"2\", connections: 4 }\nsteps: [ {get: /a, http: {version: \"1.1\"}} ]\n").unwrap();
    let d = a.describe();
    assert_eq!(d["http"]["version"], "2");
    assert_eq!(d["http"]["connections"], 4);
    assert_eq!(d["http"]["max_streams"], 100);
    assert_eq!(d["flows"][0]["steps"][0]["http_version"], "1.1");
    let b = parse("http: { version: \"2\", connections: 5 }\nsteps: [ {get: /a, http: {version: \"1.1\"}} ]\n").unwrap();
    assert_ne!(a.fingerprint(), b.fingerprint());
}
