use super::*;
use std::io::{BufRead, BufReader, Read, Write};

#[test]
fn addresses_parse_or_say_what_to_give() {
    let cases: &[(&str, Option<&str>)] = &[
        ("127.0.0.1:5665", Some("127.0.0.1:5665")),
        ("[::1]:7000", Some("[::1]:7000")),
        ("0.0.0.0:80", Some("0.0.0.0:80")),
        ("localhost:5666", Some("127.0.0.1:5666")),
        (":5667", Some("127.0.0.1:5667")),
        ("5668", Some("127.0.0.1:5668")),
        ("scenario.yaml", None),
        ("127.0.0.1:99999", None),
        ("", None),
    ];
    for (given, want) in cases {
        let got = parse_addr(given).ok().map(|a| a.to_string());
        assert_eq!(got.as_deref(), *want, "{given}");
    }
}

fn get(addr: SocketAddr, path: &str) -> String {
    let mut s = TcpStream::connect(addr).unwrap();
    write!(s, "GET {path} HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    out
}

#[test]
fn serves_the_page_the_state_the_stream_and_refuses_a_busy_port() {
    let loopback = SocketAddr::from(([127, 0, 0, 1], 0));
    let dash = Dashboard::start(loopback).unwrap();
    let addr = dash.addr();
    assert_ne!(addr.port(), 0);
    match Dashboard::start(addr) {
        Err(DashboardError::InUse { addr: a }) => assert_eq!(a, addr),
        other => panic!("a busy port must be InUse, got {:?}", other.err()),
    }
    let page = get(addr, "/");
    assert!(page.starts_with("HTTP/1.1 200 OK"), "{page}");
    assert!(page.contains("text/html"));
    assert!(get(addr, "/nope").starts_with("HTTP/1.1 404"));
    assert!(get(addr, "/report").starts_with("HTTP/1.1 404"));

    dash.set_context(Context {
        kind: "study".into(),
        name: "s".into(),
        current: "[1/2] base".into(),
        position: Some(1),
        total: Some(2),
        ..Context::default()
    });
    let state = get(addr, "/api/state");
    let body = state.split_once("\r\n\r\n").unwrap().1;
    let v: serde_json::Value = serde_json::from_str(body).unwrap();
    assert_eq!(v["context"]["context"]["current"], "[1/2] base");
    assert_eq!(v["cost"]["coordinator_calls"], 0);

    // A stream gets `retry:`, the context it missed, then the end as it comes.
    let mut s = TcpStream::connect(addr).unwrap();
    write!(s, "GET /events HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    let mut r = BufReader::new(s);
    let mut datas = Vec::new();
    let mut retry = false;
    let report_dir = tempfile::Builder::new()
        .prefix("loadlab-dash-report-")
        .tempdir()
        .unwrap();
    let report = report_dir.path().join("dash-report.html");
    std::fs::write(&report, "<p>report</p>").unwrap();
    // A run was made (it lingers only then).
    let _observer = dash.observer(&loadlab_analysis::thresholds::ThresholdWatch::new(&[]));
    let finishing = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(200));
        let end = CommandEnd {
            exit_status: 1,
            verdict: "thresholds failed".into(),
            ..CommandEnd::default()
        };
        dash.finish(end, Some(report), Duration::from_millis(300));
        dash
    });
    let mut line = String::new();
    while datas.len() < 2 {
        line.clear();
        assert!(r.read_line(&mut line).unwrap() > 0, "stream closed early");
        retry |= line.starts_with("retry: 1000");
        if let Some(d) = line.strip_prefix("data: ") {
            datas.push(serde_json::from_str::<serde_json::Value>(d).unwrap());
        }
    }
    assert!(retry);
    assert_eq!(datas[0]["type"], "context");
    assert_eq!(datas[1]["type"], "end");
    assert_eq!(datas[1]["exit_status"], 1);
    assert_eq!(datas[1]["report"], "/report");
    // While it lingers, the report is served.
    assert!(get(addr, "/report").contains("<p>report</p>"));
    finishing.join().unwrap();
}
