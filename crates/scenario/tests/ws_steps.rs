//! The `ws:` step: the issue's form parses into a session; mistakes give `file:line:column`.

use loadlab_scenario::{Scenario, Step, WsAction, WsMatch, WsMessage};
use std::time::Duration;

const ISSUE_FORM: &str = r#"
target: http://127.0.0.1:8080
load: {model: open, rate: 5/s, duration: 1s}
data:
  apps: { values: [ {application_id: a1, payload_b64: aGVsbG8=} ] }
flows:
  - steps:
      - name: live updates
        ws:
          url: /ws/applications
          headers: { Authorization: "Bearer {{ apps.application_id }}" }
          steps:
            - send: '{"subscribe": "{{ apps.application_id }}"}'
            - expect: { json: "$.status", equals: "received", within: 2s }
            - capture: { last_status: "$.status" }
            - think: 1s
            - send: { binary: "{{ apps.payload_b64 }}" }
            - send: { json: { echo: "{{ last_status }}" } }
            - expect: { contains: received }
          close_after: 10s
"#;

#[test]
fn parses_the_issue_form() {
    let s = Scenario::parse(ISSUE_FORM, "ws.yaml").unwrap();
    let Step::Ws(w) = &s.flows[0].steps[0] else {
        panic!("a ws step")
    };
    assert_eq!(w.name, "live updates");
    assert_eq!(w.url, "/ws/applications");
    assert_eq!(w.close_after, Some(Duration::from_secs(10)));
    assert_eq!(w.actions.len(), 7);
    assert!(matches!(&w.actions[0], WsAction::Send(WsMessage::Text(t)) if t.contains("subscribe")));
    let WsAction::Expect(e) = &w.actions[1] else {
        panic!("expect")
    };
    assert_eq!(e.within, Duration::from_secs(2));
    assert_eq!(e.name, "live updates › expect $.status == \"received\"");
    assert!(matches!(&e.matcher, WsMatch::Json { equals: Some(v), .. } if v == "received"));
    assert!(matches!(
        &w.actions[4],
        WsAction::Send(WsMessage::Binary(_))
    ));
    assert!(matches!(&w.actions[5], WsAction::Send(WsMessage::Json(_))));
    assert_eq!(s.capture_names(), vec!["last_status".to_string()]);
    assert_eq!(s.ws_steps().len(), 1);
}

#[test]
fn absolute_urls_and_defaults() {
    let src = "load: {model: closed, vus: 1, duration: 1s}\nsteps:\n  - ws: {url: 'wss://127.0.0.1:9/x', steps: [{send: hi}, {expect: {}}]}\n";
    let s = Scenario::parse(src, "ws.yaml").unwrap();
    let Step::Ws(w) = &s.flows[0].steps[0] else {
        panic!("a ws step")
    };
    assert_eq!(w.name, "WS wss://127.0.0.1:9/x");
    assert_eq!(w.max_message, loadlab_scenario::DEFAULT_WS_MAX_MESSAGE);
    assert!(
        matches!(&w.actions[1], WsAction::Expect(e) if e.matcher == WsMatch::Any && e.within == Duration::from_secs(5))
    );
}

fn error_of(src: &str) -> String {
    Scenario::parse(src, "bad.yaml").unwrap_err().to_string()
}

#[test]
fn bad_ws_steps_table() {
    let head = "load: {model: closed, vus: 1, duration: 1s}\nsteps:\n";
    let cases: &[(&str, &str)] = &[
        ("  - ws: {url: ws/echo, steps: [{send: hi}]}\n",
         "bad.yaml:3:15: steps[0].ws.url: `ws/echo` is neither a path starting with / nor a ws:// or wss:// URL\n  hint: write `/ws/echo`"),
        ("  - ws: {url: 'http://127.0.0.1/x', steps: [{send: hi}]}\n",
         "hint: write `ws://127.0.0.1/x`"),
        ("  - ws: {steps: [{send: hi}]}\n",
         "steps[0].ws: a `ws:` step needs `url:`"),
        ("  - ws: {url: /x, steps: [{send: hi, think: 1s}]}\n",
         "steps[0].ws.steps[0]: a session step takes exactly one of `send`, `expect`, `capture` or `think`"),
        ("  - ws: {url: /x, steps: [{expect: {equals: 1}}]}\n",
         "steps[0].ws.steps[0].expect.equals: `equals` compares the value at a `json:` path"),
        ("  - ws: {url: /x, steps: [{expect: {json: 'status'}}]}\n",
         "steps[0].ws.steps[0].expect.json"),
        ("  - ws: {url: /x, steps: [{send: {binary: '***'}}]}\n",
         "steps[0].ws.steps[0].send.binary: not base64"),
        ("  - ws: {url: /x, steps: [{send: hi}], close_after: 0s}\n",
         "steps[0].ws.close_after: must be above zero"),
        ("  - ws: {url: /x, steps: [{send: '{{ nope }}'}]}\n",
         "steps[0].ws.steps[0].send"),
        ("  - ws: {url: /x, steps: [{capture: {t: {header: X}}}]}\n",
         "a WebSocket message has no headers"),
        ("  - ws: {url: /x, steps: [{send: hi}], clos_after: 1s}\n",
         "unknown field `clos_after`"),
        ("  - get: /a\n    ws: {url: /x, steps: [{send: hi}]}\n",
         "steps[0].get: a `ws:` step cannot also have `get`"),
        ("  - ws: {url: /x}\n",
         "the session does nothing"),
    ];
    for (steps, want) in cases {
        let got = error_of(&format!("{head}{steps}"));
        assert!(
            got.contains(want),
            "for {steps:?}\n got: {got}\nwant: {want}"
        );
        assert!(got.starts_with("bad.yaml:"), "located: {got}");
    }
}
