//! Scenario flows (templates, captures, checks, loops, `once`, data) against a scripted
//! transport in paused time: what was sent, what was recorded.

use super::test_totals::{totals, Totals};
use super::{run_worker, IntervalClock, WorkerPlan};
use crate::cancel::Cancel;
use crate::flow::Worker;
use crate::flow_picker::FlowPicker;
use crate::prepare::PreparedScenario;
use crate::request::RenderedRequest;
use crate::transport::{Failure, Response, ResponseData, Transport};
use loadlab_metrics::{ErrorKind, Recorder};
use loadlab_scenario::plan::Segment;
use loadlab_scenario::{Load, Scenario};
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::mpsc;
use tokio::time::{Duration, Instant};

type Handler = Rc<dyn Fn(&str) -> (u16, String)>;

/// Answers with `handler(request text)` after 1 ms and remembers every request.
struct Scripted {
    handler: Handler,
    sent: Rc<RefCell<Vec<String>>>,
}

impl Transport for Scripted {
    type Conn = ();

    async fn connect(&self, _origin: u16) -> Result<(), Failure> {
        Ok(())
    }

    async fn send(
        &self,
        _conn: &mut (),
        req: &RenderedRequest<'_>,
        keep: Option<&mut ResponseData>,
    ) -> Result<Response, Failure> {
        tokio::time::sleep(Duration::from_millis(1)).await;
        // The request as HTTP/1.1 would frame it, so tests read what was asked for.
        let mut bytes = Vec::new();
        crate::http::h1::encode(req, b"127.0.0.1:1", &mut bytes);
        let text = String::from_utf8_lossy(&bytes).to_string();
        let (status, body) = (self.handler)(&text);
        self.sent.borrow_mut().push(text);
        if let Some(k) = keep {
            if k.keep_headers {
                k.add_header(b"X-Token", b"hdr-token");
                k.add_header(b"Content-Length", body.len().to_string().as_bytes());
            }
            if k.keep_body {
                k.body.extend_from_slice(body.as_bytes());
            }
        }
        Ok(Response {
            status,
            close: false,
            server_us: None,
            ..Response::default()
        })
    }
}

const HEAD: &str = "target: http://127.0.0.1:1\n";

async fn run(yaml: &str, handler: Handler) -> (Totals, Vec<String>, PreparedScenario) {
    let scenario = Scenario::parse(&format!("{HEAD}{yaml}"), "flow.yaml").unwrap();
    let prepared = PreparedScenario::new(&scenario).unwrap();
    let plan = scenario.plan();
    let sent = Rc::new(RefCell::new(Vec::new()));
    let start = Instant::now();
    let worker = Rc::new(Worker {
        transport: Scripted {
            handler,
            sent: sent.clone(),
        },
        picker: RefCell::new(FlowPicker::new(&prepared.flows)),
        recorder: RefCell::new(Recorder::new(prepared.requests.len())),
        scenario: Rc::new(prepared.clone()),
        rng: RefCell::new(fastrand::Rng::with_seed(1)),
        start,
        end: start + plan.duration(),
        stopping: Cell::new(false),
        pool: crate::idle_pool::IdlePool::new(1),
        precise_timer: None,
        deferred: None,
        requests_begun: tokio::sync::Notify::new(),
    });
    let (tx, rx) = mpsc::channel();
    let load: Load = plan.load.clone();
    tokio::task::LocalSet::new()
        .run_until(run_worker(
            worker.clone(),
            WorkerPlan {
                load,
                segment: Segment::WHOLE,
                seed: 1,
                grace: Duration::from_secs(60),
                clock: IntervalClock::new(Duration::ZERO, Duration::from_secs(1)),
                steer: None,
            },
            tx,
            Cancel::new(),
        ))
        .await;
    let rec = totals(&rx);
    let sent = sent.borrow().clone();
    (rec, sent, prepared)
}

fn target(req: &str) -> (String, String) {
    let line = req.lines().next().unwrap_or("");
    let body = req.split("\r\n\r\n").nth(1).unwrap_or("").to_string();
    (line.to_string(), body)
}

fn api(req: &str) -> (u16, String) {
    let (line, _) = target(req);
    if line.starts_with("POST /signin") {
        (200, r#"{"token":"tok-1","user":{"id":42}}"#.into())
    } else if line.starts_with("POST /bad-signin") {
        (200, r#"{"error":"nope"}"#.into())
    } else if line.starts_with("GET /missing") {
        (404, "{}".into())
    } else if line.starts_with("GET /boom") {
        (500, "{}".into())
    } else {
        (201, r#"{"ok":true,"id":7}"#.into())
    }
}

#[tokio::test(start_paused = true)]
async fn once_then_loop_with_captures_and_typed_json() {
    let yaml = "
load: {model: closed, vus: 2, iterations: 2}
flows:
  - name: users
    steps:
      - once:
          - { name: signin, post: /signin, json: {u: 'user{{ vu }}'}, capture: {token: $.token, uid: $.user.id} }
      - loop:
          count: 3
          steps:
            - name: tx
              post: /tx
              headers: { Authorization: 'Bearer {{ token }}' }
              json: { user: '{{ uid }}', n: '{{ iteration }}', note: 'it {{ iteration }}' }
";
    let (rec, sent, _) = run(yaml, Rc::new(api)).await;
    let signins: Vec<_> = sent
        .iter()
        .filter(|r| r.starts_with("POST /signin"))
        .collect();
    assert_eq!(signins.len(), 2, "once per VU");
    assert!(signins.iter().any(|r| r.ends_with(r#"{"u":"user1"}"#)));
    assert!(signins.iter().any(|r| r.ends_with(r#"{"u":"user2"}"#)));
    let txs: Vec<_> = sent.iter().filter(|r| r.starts_with("POST /tx")).collect();
    assert_eq!(txs.len(), 12, "2 VUs x 2 iterations x 3");
    for t in &txs {
        assert!(t.contains("Authorization: Bearer tok-1\r\n"), "{t}");
        let (_, body) = target(t);
        // The fields go out in the order the scenario wrote them.
        assert!(body.starts_with(r#"{"user":42,"n":"#), "{body}");
        assert!(
            body.contains(r#""user":42"#),
            "captured numbers stay numbers: {body}"
        );
        assert!(
            t.contains(&format!("Content-Length: {}\r\n", body.len())),
            "{t}"
        );
    }
    assert!(txs
        .iter()
        .any(|t| t.ends_with(r#"{"user":42,"n":1,"note":"it 1"}"#)));
    assert_eq!(rec.iterations_completed, 4);
    assert_eq!(rec.steps.iter().map(|s| s.failed).sum::<u64>(), 0);
}

#[tokio::test(start_paused = true)]
async fn a_capture_miss_fails_the_step_and_stops_the_iteration() {
    let yaml = "
load: {model: closed, vus: 1, iterations: 3}
steps:
  - { name: signin, post: /bad-signin, capture: {token: $.token} }
  - { name: use, get: '/use/{{ token }}' }
";
    let (rec, sent, _) = run(yaml, Rc::new(api)).await;
    assert_eq!(sent.len(), 3, "the second step is never sent");
    assert_eq!(rec.steps[0].errors[ErrorKind::CaptureFailed.index()], 3);
    assert_eq!(rec.steps[0].failed, 3);
    assert_eq!(rec.steps[1].requests, 0);
    assert_eq!(rec.iterations_completed, 0);
    assert!(rec
        .error_examples
        .iter()
        .any(|(k, m)| *k == ErrorKind::CaptureFailed && m.contains("capture `token`")));
}

#[tokio::test(start_paused = true)]
async fn header_and_regex_captures() {
    let yaml = r#"
load: {model: closed, vus: 1, iterations: 1}
steps:
  - name: signin
    post: /signin
    capture:
      h: { header: x-token }
      r: { regex: '"token":"([a-z]+)-(\d)"', group: 2 }
  - { name: use, get: '/use/{{ h }}/{{ r }}' }
"#;
    let (rec, sent, _) = run(yaml, Rc::new(api)).await;
    assert!(
        sent[1].starts_with("GET /use/hdr-token/1 HTTP/1.1"),
        "{}",
        sent[1]
    );
    assert_eq!(rec.iterations_completed, 1);
}

#[tokio::test(start_paused = true)]
async fn checks_count_per_check_and_replace_the_status_rule() {
    let yaml = "
load: {model: closed, vus: 1, iterations: 4}
steps:
  - { name: created, post: /x, check: {status: 200, json: {$.ok: true}, body_contains: '\"id\":7', header: {X-Token: hdr-token}} }
  - { name: missing, get: /missing, check: {status: [200, 404]} }
  - { name: boom, get: /boom }
  - { name: slow, get: /fine, check: {max_latency: 500us} }
";
    let (rec, _, prepared) = run(yaml, Rc::new(api)).await;
    let s = &rec.steps;
    assert_eq!(
        s[0].errors[ErrorKind::CheckFailed.index()],
        4,
        "201 is not 200"
    );
    assert_eq!(s[0].check_failures, vec![4], "only the status check failed");
    assert_eq!(prepared.requests[0].checks.len(), 4);
    assert_eq!(s[1].failed, 0, "an expected 404 is not an error");
    assert_eq!(s[2].errors[ErrorKind::Http5xx.index()], 4);
    assert_eq!(
        s[3].errors[ErrorKind::CheckFailed.index()],
        4,
        "1 ms > 500 us"
    );
    assert_eq!(
        rec.iterations_completed, 4,
        "no capture: failures do not stop the flow"
    );
}

#[tokio::test(start_paused = true)]
async fn weights_hold_exactly_and_data_rows_are_picked() {
    let yaml = "
load: {model: closed, vus: 1, iterations: 100}
data:
  ids: { values: [10, 20, 30] }
flows:
  - { name: a, weight: 70, steps: [ { get: '/a/{{ ids }}' } ] }
  - { name: b, weight: 20, steps: [ { get: '/b?q={{ random_int(5, 5) }}', query: {x: 'a b'} } ] }
  - { name: c, weight: 10, steps: [ { post: /c, form: {k: '{{ ids }}'} } ] }
";
    let (rec, sent, _) = run(yaml, Rc::new(api)).await;
    let count = |p: &str| sent.iter().filter(|r| r.contains(p)).count();
    assert_eq!(count(" /a/"), 70);
    assert_eq!(count("GET /b?q=5&x=a%20b HTTP"), 20);
    assert_eq!(count("POST /c"), 10);
    assert!(sent[0].starts_with("GET /a/10 "), "{}", sent[0]);
    assert!(sent.iter().any(|r| r.starts_with("GET /a/20 ")));
    assert!(sent
        .iter()
        .any(|r| r.ends_with("k=30") || r.ends_with("k=10") || r.ends_with("k=20")));
    assert_eq!(rec.iterations_completed, 100);
}

#[tokio::test(start_paused = true)]
async fn unique_data_runs_out_and_stops_the_vus() {
    let yaml = "
load: {model: closed, vus: 3, iterations: 2}
data:
  users: { values: [{name: a}, {name: b}, {name: c}, {name: d}], pick: unique }
steps:
  - { get: '/u/{{ users.name }}' }
";
    let (rec, sent, _) = run(yaml, Rc::new(api)).await;
    assert_eq!(sent.len(), 4, "each row used once");
    let mut names: Vec<_> = sent.iter().map(|r| r[7..8].to_string()).collect();
    names.sort();
    assert_eq!(names, ["a", "b", "c", "d"]);
    assert!(rec.data_refused[0] >= 2, "{:?}", rec.data_refused);
    assert_eq!(rec.iterations_completed, 4);
}

#[tokio::test(start_paused = true)]
async fn iteration_duration_spans_think_times_and_requests() {
    // Starts and ends with a think time: the iteration reads the clock itself.
    let yaml = "
load: {model: closed, vus: 1, iterations: 3}
steps:
  - think: 10ms
  - get: /a
  - think: 20ms
";
    let (rec, sent, _) = run(yaml, Rc::new(api)).await;
    assert_eq!(sent.len(), 3);
    let h = &rec.iteration_duration;
    assert_eq!(h.len(), 3);
    // Paused tokio timers fire on a later millisecond tick: a little over, never under.
    assert!(
        h.min() >= 30_000 && h.max() <= 33_000,
        "{} {}",
        h.min(),
        h.max()
    );
    // Starts and ends with a request: from the first one wanted to the last one done.
    let yaml = "
load: {model: closed, vus: 1, iterations: 2}
steps:
  - get: /a
  - think: 15ms
  - get: /b
";
    let (rec, _, _) = run(yaml, Rc::new(api)).await;
    let h = &rec.iteration_duration;
    assert_eq!(h.len(), 2);
    assert!(
        h.min() >= 15_000 && h.max() <= 18_000,
        "{} {}",
        h.min(),
        h.max()
    );
}
