//! End-to-end tests of the running server over real loopback sockets, with a tiny raw
//! HTTP/1.1 client, so they check exactly the bytes a load tester would see.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::{spawn, ServiceDist, TargetConfig, TargetError, TargetHandle};

fn loopback() -> SocketAddr {
    "127.0.0.1:0".parse().expect("valid address")
}

fn start(config: TargetConfig) -> TargetHandle {
    spawn(TargetConfig {
        listen: loopback(),
        ..config
    })
    .expect("target starts")
}

#[derive(Debug)]
struct Reply {
    status: u16,
    head: String,
    body: String,
}

impl Reply {
    fn json(&self) -> Value {
        serde_json::from_str(&self.body)
            .unwrap_or_else(|e| panic!("body is not JSON ({e}): {:?}", self.body))
    }

    fn header(&self, name: &str) -> Option<&str> {
        self.head.lines().skip(1).find_map(|line| {
            let (k, v) = line.split_once(':')?;
            k.eq_ignore_ascii_case(name).then(|| v.trim())
        })
    }
}

/// Sends one request on a fresh connection (`Connection: close`) and reads the reply.
async fn send(
    addr: SocketAddr,
    method: &str,
    path: &str,
    token: Option<&str>,
    body: Option<&str>,
) -> Reply {
    let mut req = format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n");
    if let Some(token) = token {
        req.push_str(&format!("Authorization: Bearer {token}\r\n"));
    }
    if let Some(body) = body {
        req.push_str(&format!(
            "Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        ));
    } else {
        req.push_str("\r\n");
    }
    send_raw(addr, &req).await.pop().expect("one reply")
}

/// Writes raw request bytes and splits everything read until EOF into replies.
async fn send_raw(addr: SocketAddr, raw: &str) -> Vec<Reply> {
    let mut stream = TcpStream::connect(addr).await.expect("connect");
    stream.write_all(raw.as_bytes()).await.expect("write");
    let mut buf = Vec::new();
    stream.read_to_end(&mut buf).await.expect("read");
    let mut text = String::from_utf8(buf).expect("utf-8 reply");
    let mut replies = Vec::new();
    while !text.is_empty() {
        let (head, rest) = text.split_once("\r\n\r\n").expect("complete head");
        let status = head
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .expect("status code");
        let head = head.to_string();
        let len: usize = head
            .lines()
            .find_map(|l| {
                let (k, v) = l.split_once(':')?;
                k.eq_ignore_ascii_case("content-length")
                    .then(|| v.trim().parse().ok())?
            })
            .expect("content-length");
        let body = rest[..len].to_string();
        text = rest[len..].to_string();
        replies.push(Reply { status, head, body });
    }
    replies
}

async fn get(addr: SocketAddr, path: &str) -> Reply {
    send(addr, "GET", path, None, None).await
}

async fn signin(addr: SocketAddr, user: &str) -> String {
    let body = format!(r#"{{"username":"{user}","password":"password"}}"#);
    let r = send(addr, "POST", "/api/auth/signin", None, Some(&body)).await;
    assert_eq!(r.status, 200, "{r:?}");
    r.json()["token"].as_str().expect("token").to_string()
}

/// Sends `n` pings at once; returns each one's (status, latency from the common start),
/// sorted by latency.
async fn concurrent_pings(addr: SocketAddr, n: usize) -> Vec<(u16, Duration)> {
    let start = Instant::now();
    let tasks: Vec<_> = (0..n)
        .map(|_| {
            tokio::spawn(async move {
                let r = get(addr, "/api/ping").await;
                (r.status, start.elapsed())
            })
        })
        .collect();
    let mut out = Vec::new();
    for t in tasks {
        out.push(t.await.expect("task"));
    }
    out.sort_by_key(|&(_, d)| d);
    out
}

#[tokio::test]
async fn health_and_ping() {
    let t = start(TargetConfig::default());
    let r = get(t.addr, "/health").await;
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert_eq!(r.json(), serde_json::json!({"status": "ok"}));
    let r = get(t.addr, "/api/ping").await;
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert_eq!(r.json(), serde_json::json!({"pong": true}));
    assert!(t.url().starts_with("http://127.0.0.1:"));
}

#[tokio::test]
async fn keep_alive_serves_several_requests_on_one_connection() {
    let t = start(TargetConfig::default());
    let host = t.addr;
    let raw = format!(
        "GET /api/ping HTTP/1.1\r\nHost: {host}\r\n\r\n\
         GET /health HTTP/1.1\r\nHost: {host}\r\n\r\n\
         GET /api/ping HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    );
    let replies = send_raw(t.addr, &raw).await;
    let statuses: Vec<u16> = replies.iter().map(|r| r.status).collect();
    assert_eq!(statuses, [200, 200, 200]);
    assert_eq!(replies[1].body, r#"{"status":"ok"}"#);
}

#[tokio::test]
async fn signin_ok_unauthorized_and_bad_request() {
    let t = start(TargetConfig::default());
    let a = t.addr;
    let ok = send(
        a,
        "POST",
        "/api/auth/signin",
        None,
        Some(r#"{"username":"user42","password":"password"}"#),
    )
    .await;
    assert_eq!(ok.status, 200, "{ok:?}");
    let v = ok.json();
    assert_eq!(v["user"], "user42");
    assert!(v["token"]
        .as_str()
        .is_some_and(|t| t.starts_with("user42.")));
    let admin = send(
        a,
        "POST",
        "/api/auth/signin",
        None,
        Some(r#"{"username":"admin100","password":"password"}"#),
    )
    .await;
    assert_eq!(admin.status, 200);
    assert_eq!(admin.json()["role"], "admin");

    for body in [
        r#"{"username":"user42","password":"wrong"}"#,
        r#"{"username":"user1001","password":"password"}"#,
        r#"{"username":"mallory","password":"password"}"#,
    ] {
        let r = send(a, "POST", "/api/auth/signin", None, Some(body)).await;
        assert_eq!(r.status, 401, "{body}");
        assert!(r.json()["error"].is_string());
    }
    for body in [
        "",
        "{",
        r#"{"username":"user1"}"#,
        "[1,2]",
        r#"{"username":1,"password":"password"}"#,
    ] {
        let r = send(a, "POST", "/api/auth/signin", None, Some(body)).await;
        assert_eq!(r.status, 400, "{body:?}");
        assert!(r.json()["error"].is_string());
    }
    let r = send(a, "POST", "/api/auth/signin", None, None).await;
    assert_eq!(r.status, 400);
}

#[tokio::test]
async fn application_flow_with_token() {
    let t = start(TargetConfig::default());
    let a = t.addr;
    let token = signin(a, "user7").await;
    let tok = Some(token.as_str());

    let created = send(
        a,
        "POST",
        "/api/applications",
        tok,
        Some(r#"{"name":"loan","amount":1200,"status":"x"}"#),
    )
    .await;
    assert_eq!(created.status, 201, "{created:?}");
    let c = created.json();
    let id = c["id"].as_u64().expect("numeric id");
    assert_eq!(c["status"], "draft");
    assert_eq!(c["name"], "loan");
    assert_eq!(c["amount"], 1200);

    let got = send(a, "GET", &format!("/api/applications/{id}"), tok, None).await;
    assert_eq!(got.status, 200);
    assert_eq!(got.json(), c);

    let sub = send(
        a,
        "POST",
        &format!("/api/applications/{id}/submit"),
        tok,
        None,
    )
    .await;
    assert_eq!(sub.status, 200);
    assert_eq!(
        sub.json(),
        serde_json::json!({"id": id, "status": "submitted"})
    );
    let got = send(a, "GET", &format!("/api/applications/{id}"), tok, None).await;
    assert_eq!(got.json()["status"], "submitted");

    assert_eq!(
        send(a, "GET", "/api/applications/999999", tok, None)
            .await
            .status,
        404
    );
    assert_eq!(
        send(a, "GET", "/api/applications/abc", tok, None)
            .await
            .status,
        404
    );
    assert_eq!(
        send(a, "POST", "/api/applications/999999/submit", tok, None)
            .await
            .status,
        404
    );

    let u = send(a, "POST", "/api/users", tok, Some(r#"{"email":"a@b.c"}"#)).await;
    assert_eq!(u.status, 201);
    assert!(u.json()["id"].is_u64());
    assert_eq!(u.json()["email"], "a@b.c");
    let tx = send(a, "POST", "/api/transactions", tok, Some(r#"{"amount":5}"#)).await;
    assert_eq!(tx.status, 201);
    assert!(tx.json()["id"].is_u64());
    let res = send(a, "POST", "/api/reservations", tok, Some("{}")).await;
    assert_eq!(res.status, 201);
    assert_eq!(res.json()["status"], "reserved");
    assert!(res.json()["id"].is_u64());

    let p = send(a, "GET", "/api/patients/5", tok, None).await;
    assert_eq!(p.status, 200);
    assert_eq!(p.json()["id"], 5);
    assert_eq!(p.json()["name"], "patient 5");
    assert_eq!(
        send(a, "GET", "/api/patients/abc", tok, None).await.status,
        400
    );

    for (path, body) in [
        ("/api/applications", "not json"),
        ("/api/applications", "[1]"),
        ("/api/users", "{"),
        ("/api/transactions", ""),
        ("/api/reservations", "42"),
    ] {
        let r = send(a, "POST", path, tok, Some(body)).await;
        assert_eq!(r.status, 400, "{path} {body:?}");
    }
}

#[tokio::test]
async fn tokens_are_new_at_each_sign_in_and_applications_belong_to_their_creator() {
    let t = start(TargetConfig::default());
    let a = t.addr;
    let first = signin(a, "user7").await;
    let second = signin(a, "user7").await;
    assert_ne!(first, second, "a token is new at each sign-in");
    let other = signin(a, "user8").await;
    let admin = signin(a, "admin1").await;

    let created = send(
        a,
        "POST",
        "/api/applications",
        Some(&first),
        Some(r#"{"title":"mine","owner":"user8"}"#),
    )
    .await;
    assert_eq!(created.status, 201, "{created:?}");
    assert_eq!(
        created.json()["owner"],
        "user7",
        "the server sets the owner"
    );
    let id = created.json()["id"].as_u64().unwrap();
    let get = format!("/api/applications/{id}");
    let submit = format!("/api/applications/{id}/submit");

    // The creator's earlier and later tokens both work (bearer tokens do not expire here).
    assert_eq!(send(a, "GET", &get, Some(&second), None).await.status, 200);
    assert_eq!(send(a, "GET", &get, Some(&first), None).await.status, 200);

    // Another user, even an admin, is refused with a JSON error, and changes nothing.
    for token in [&other, &admin] {
        for (method, path) in [("GET", &get), ("POST", &submit)] {
            let r = send(a, method, path, Some(token), None).await;
            assert_eq!(r.status, 403, "{method} {path}: {r:?}");
            assert!(r.json()["error"]
                .as_str()
                .is_some_and(|e| e.contains("another user")));
        }
    }
    let got = send(a, "GET", &get, Some(&first), None).await;
    assert_eq!(got.json()["status"], "draft");
    // An id that does not exist stays 404 for everyone.
    let missing = send(a, "GET", "/api/applications/999999", Some(&other), None).await;
    assert_eq!(missing.status, 404);

    // A token this user got from another instance (a recording of an earlier run) is 401.
    let earlier = start(TargetConfig::default());
    let recorded = signin(earlier.addr, "user7").await;
    let r = send(a, "GET", &get, Some(&recorded), None).await;
    assert_eq!(r.status, 401, "{r:?}");
}

#[tokio::test]
async fn protected_endpoints_need_a_valid_token() {
    let t = start(TargetConfig::default());
    let a = t.addr;
    let other = start(TargetConfig::default());
    let foreign = signin(other.addr, "user1").await;
    for (method, path) in [
        ("POST", "/api/applications"),
        ("GET", "/api/applications/1"),
        ("POST", "/api/applications/1/submit"),
        ("POST", "/api/users"),
        ("POST", "/api/transactions"),
        ("POST", "/api/reservations"),
        ("GET", "/api/patients/1"),
    ] {
        let body = (method == "POST").then_some("{}");
        for token in [None, Some("garbage"), Some(foreign.as_str())] {
            let r = send(a, method, path, token, body).await;
            assert_eq!(r.status, 401, "{method} {path} {token:?}");
            assert!(r.json()["error"].is_string());
        }
    }
}

#[tokio::test]
async fn unknown_paths_wrong_methods_and_large_bodies() {
    let t = start(TargetConfig::default());
    let a = t.addr;
    let r = get(a, "/nope").await;
    assert_eq!(r.status, 404);
    assert!(r.json()["error"].is_string());
    assert_eq!(get(a, "/api/nope").await.status, 404);
    let r = send(a, "POST", "/api/ping", None, Some("{}")).await;
    assert_eq!(r.status, 405);
    assert_eq!(r.header("allow"), Some("GET"));
    assert_eq!(send(a, "DELETE", "/health", None, None).await.status, 405);
    assert_eq!(get(a, "/api/auth/signin").await.status, 405);

    let raw = format!(
        "POST /api/auth/signin HTTP/1.1\r\nHost: {a}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        2 * 1024 * 1024
    );
    let r = send_raw(a, &raw).await;
    assert_eq!(r[0].status, 413);
}

#[tokio::test]
async fn workers_limit_concurrency() {
    let t = start(TargetConfig {
        workers: Some(2),
        service_time: Duration::from_millis(50),
        service_dist: ServiceDist::Fixed,
        ..TargetConfig::default()
    });
    let lat = concurrent_pings(t.addr, 4).await;
    assert!(lat.iter().all(|&(s, _)| s == 200), "{lat:?}");
    let ms = |i: usize| lat[i].1.as_millis();
    // Two are served at once (~50 ms), two wait for them (~100 ms).
    assert!(
        (48..95).contains(&ms(0)) && (48..95).contains(&ms(1)),
        "{lat:?}"
    );
    assert!(
        (98..200).contains(&ms(2)) && (98..200).contains(&ms(3)),
        "{lat:?}"
    );
}

#[tokio::test]
async fn unlimited_workers_serve_everything_at_once() {
    let t = start(TargetConfig {
        service_time: Duration::from_millis(50),
        ..TargetConfig::default()
    });
    let lat = concurrent_pings(t.addr, 6).await;
    assert!(
        lat.iter()
            .all(|&(s, d)| s == 200 && (48..98).contains(&d.as_millis())),
        "{lat:?}"
    );
}

#[tokio::test]
async fn full_queue_answers_503_at_once_and_health_stays_up() {
    let service_time = Duration::from_millis(300);
    let t = start(TargetConfig {
        workers: Some(1),
        queue_limit: Some(1),
        service_time,
        ..TargetConfig::default()
    });
    let a = t.addr;
    let first = tokio::spawn(async move { get(a, "/api/ping").await.status });
    tokio::time::sleep(Duration::from_millis(50)).await;
    let second = tokio::spawn(async move { get(a, "/api/ping").await.status });
    tokio::time::sleep(Duration::from_millis(50)).await;

    let started = Instant::now();
    let third = get(a, "/api/ping").await;
    assert_eq!(third.status, 503, "{third:?}");
    assert!(third.json()["error"].is_string());
    let health = get(a, "/health").await;
    assert_eq!(health.status, 200);
    // "At once" from the plan itself: an answer that waited for the worker would come when
    // the first request's service ends, 300 ms after it began, 100 ms of which passed above.
    let waited_for_the_worker = service_time - Duration::from_millis(100);
    assert!(
        started.elapsed() < waited_for_the_worker,
        "{:?}: as late as waiting for the worker ({waited_for_the_worker:?})",
        started.elapsed()
    );

    assert_eq!(first.await.expect("task"), 200);
    assert_eq!(second.await.expect("task"), 200);
}

#[tokio::test]
async fn error_rate_one_always_fails() {
    let t = start(TargetConfig {
        error_rate: 1.0,
        ..TargetConfig::default()
    });
    for _ in 0..5 {
        let r = get(t.addr, "/api/ping").await;
        assert_eq!(r.status, 500);
        assert_eq!(r.json()["error"], "injected error");
    }
    assert_eq!(get(t.addr, "/health").await.status, 200);
}

#[tokio::test]
async fn exponential_service_time_runs_end_to_end() {
    let t = start(TargetConfig {
        service_time: Duration::from_millis(5),
        service_dist: ServiceDist::Exp,
        ..TargetConfig::default()
    });
    let lat = concurrent_pings(t.addr, 20).await;
    assert!(lat.iter().all(|&(s, _)| s == 200));
}

#[tokio::test]
async fn metrics_and_server_timing_show_what_the_target_did() {
    let t = start(TargetConfig {
        workers: Some(1),
        service_time: Duration::from_millis(20),
        ..TargetConfig::default()
    });
    let ping = get(t.addr, "/api/ping").await;
    let timing = ping
        .header("server-timing")
        .expect("Server-Timing on /api/*");
    let ms: f64 = timing
        .strip_prefix("app;dur=")
        .and_then(|d| d.parse().ok())
        .unwrap_or_else(|| panic!("{timing}"));
    assert!((19.0..1000.0).contains(&ms), "{timing}");
    assert_eq!(get(t.addr, "/health").await.header("server-timing"), None);
    // Two at once on one worker: the second queues behind the first.
    let lat = concurrent_pings(t.addr, 2).await;
    assert!(lat.iter().all(|&(s, _)| s == 200));
    assert_eq!(get(t.addr, "/nope").await.status, 404);

    let m = get(t.addr, "/metrics").await;
    assert_eq!(m.status, 200);
    assert_eq!(
        m.header("content-type"),
        Some("text/plain; version=0.0.4; charset=utf-8")
    );
    for line in [
        "http_requests_total{route=\"/api/ping\",code=\"200\"} 3\n",
        "http_requests_total{route=\"/health\",code=\"200\"} 1\n",
        "http_requests_total{route=\"other\",code=\"404\"} 1\n",
        "http_requests_in_flight 0\n",
        "loadlab_target_queue_length 0\n",
        "http_request_duration_seconds_count 5\n",
        "loadlab_target_service_time_seconds_count 3\n",
        "loadlab_target_service_time_seconds_bucket{le=\"0.01\"} 0\n",
        "loadlab_target_threads 1\n",
    ] {
        assert!(m.body.contains(line), "{line:?} in\n{}", m.body);
    }
    // The queued request waited ~20 ms: the handling time exceeds the service time.
    let sum = |name: &str| -> f64 {
        m.body
            .lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
            .unwrap_or_else(|| panic!("{name} in {}", m.body))
    };
    assert!(sum("loadlab_target_service_time_seconds_sum") >= 0.059);
    assert!(
        sum("http_request_duration_seconds_sum")
            >= sum("loadlab_target_service_time_seconds_sum") + 0.015
    );
    assert!(sum("process_resident_memory_bytes") > 1e6);
    assert!(sum("loadlab_target_cpu_seconds_total") > 0.0);
}

#[test]
fn address_in_use_is_reported_with_advice() {
    let first = start(TargetConfig::default());
    let err = spawn(TargetConfig {
        listen: first.addr,
        ..TargetConfig::default()
    })
    .expect_err("second bind fails");
    assert!(matches!(err, TargetError::Bind { addr, .. } if addr == first.addr));
    let msg = err.to_string();
    assert_eq!(
        msg,
        format!(
            "cannot listen on {}: address already in use (choose another --listen address, or port 0)",
            first.addr
        )
    );
}

#[test]
fn invalid_settings_are_rejected_before_binding() {
    let err = spawn(TargetConfig {
        listen: loopback(),
        workers: Some(0),
        ..TargetConfig::default()
    })
    .expect_err("invalid");
    assert!(
        err.to_string().contains("workers must be at least 1"),
        "{err}"
    );
}

#[test]
fn shutdown_stops_listening_and_multi_thread_runtime_works() {
    let t = start(TargetConfig {
        threads: 2,
        ..TargetConfig::default()
    });
    let addr = t.addr;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    assert_eq!(rt.block_on(get(addr, "/api/ping")).status, 200);
    let started = Instant::now();
    t.shutdown();
    assert!(started.elapsed() < Duration::from_secs(1));
    assert!(std::net::TcpStream::connect(addr).is_err());
}
