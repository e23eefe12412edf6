//! HTTP/2 end to end against real servers: nginx (installed by scripts/install-test-deps.sh)
//! over h2c with prior knowledge and over TLS with ALPN — request counts agree with nginx's
//! own — and the built-in target (h2c, and ALPN with `--tls`).

mod common;

use common::undisturbed::until_undisturbed;
use common::{exclusive, Target, BIN};
use serde_json::Value;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// An nginx with `http2` on a plain port (h2c) and a TLS port, and `stub_status` on a third,
/// started from a generated config in a temporary directory; stopped on drop.
struct Nginx {
    child: Child,
    h2c: u16,
    tls: u16,
    status: u16,
    _dir: tempfile::TempDir,
}

fn nginx_binary() -> Option<PathBuf> {
    ["/usr/sbin/nginx", "/usr/bin/nginx", "/usr/local/sbin/nginx"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl Nginx {
    /// `None` (with the reason printed) when nginx is not installed.
    fn start() -> Option<Nginx> {
        let Some(bin) = nginx_binary() else {
            eprintln!("skipped: nginx is not installed (scripts/install-test-deps.sh installs it)");
            return None;
        };
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().display();
        let made = rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_string()]).unwrap();
        std::fs::write(dir.path().join("cert.pem"), made.cert.pem()).unwrap();
        std::fs::write(dir.path().join("key.pem"), made.signing_key.serialize_pem()).unwrap();
        let (h2c, tls, status) = (free_port(), free_port(), free_port());
        let conf = format!(
            "worker_processes 1;\ndaemon off;\nmaster_process off;\npid {d}/nginx.pid;\nerror_log {d}/error.log warn;\nevents {{ worker_connections 1024; }}\nhttp {{\n  access_log off;\n  client_body_temp_path {d}/body;\n  proxy_temp_path {d}/proxy;\n  fastcgi_temp_path {d}/fastcgi;\n  uwsgi_temp_path {d}/uwsgi;\n  scgi_temp_path {d}/scgi;\n  keepalive_requests 1000000;\n  server {{ listen 127.0.0.1:{h2c} http2; location / {{ return 200 \"ok\"; }} }}\n  server {{ listen 127.0.0.1:{tls} ssl http2; ssl_certificate {d}/cert.pem; ssl_certificate_key {d}/key.pem; location / {{ return 200 \"ok\"; }} }}\n  server {{ listen 127.0.0.1:{status}; location /status {{ stub_status; }} }}\n}}\n"
        );
        let conf_path = dir.path().join("nginx.conf");
        std::fs::write(&conf_path, conf).unwrap();
        let child = Command::new(bin)
            .arg("-p")
            .arg(dir.path())
            .arg("-e")
            .arg(dir.path().join("error.log"))
            .arg("-c")
            .arg(&conf_path)
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start nginx");
        let nginx = Nginx {
            child,
            h2c,
            tls,
            status,
            _dir: dir,
        };
        let started = Instant::now();
        while nginx.try_requests().is_none() {
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "nginx did not start: {}",
                std::fs::read_to_string(nginx._dir.path().join("error.log")).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        Some(nginx)
    }

    /// nginx's own count of requests served (stub_status), this request included.
    fn try_requests(&self) -> Option<u64> {
        use std::io::{Read, Write};
        let mut s = std::net::TcpStream::connect(("127.0.0.1", self.status)).ok()?;
        s.write_all(b"GET /status HTTP/1.0\r\nHost: x\r\n\r\n")
            .ok()?;
        let mut text = String::new();
        s.read_to_string(&mut text).ok()?;
        // "... server accepts handled requests\n 1 1 1 \n..."
        let counts = text.split("requests").nth(1)?.lines().nth(1)?;
        counts.split_whitespace().nth(2)?.parse().ok()
    }

    fn requests(&self) -> u64 {
        self.try_requests().expect("nginx stub_status answers")
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `loadlab run <args> --json ...`; the parsed result.
fn run(args: &[&str]) -> Value {
    run_counting(args, || 0).0
}

/// `loadlab run <args> --json ...`, made again while the host disturbs it: the last attempt's
/// parsed result, and how far `count` (a server's own request count) rose during it, less
/// the one request that reads the count.
fn run_counting(args: &[&str], count: impl Fn() -> u64) -> (Value, u64) {
    let what = format!("loadlab {args:?}");
    let (code, result, (stderr, served)) = until_undisturbed(&what, || {
        let dir = tempfile::tempdir().unwrap();
        let json = dir.path().join("run.json");
        let before = count();
        let out = Command::new(BIN)
            .arg("run")
            .args(args)
            .args(["--no-progress", "--quiet", "--json"])
            .arg(&json)
            .env("LOADLAB_RESULTS", dir.path().join("results"))
            .output()
            .expect("run loadlab");
        let served = count().saturating_sub(before + 1);
        let result = std::fs::read_to_string(&json)
            .ok()
            .and_then(|t| serde_json::from_str::<Value>(&t).ok())
            .unwrap_or(Value::Null);
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        (out.status.code(), result, (stderr, served))
    });
    assert_eq!(
        code,
        Some(0),
        "{what}\n{stderr}\nvalidity: {}",
        result["validity"]
    );
    (result, served)
}

fn scenario(dir: &Path, yaml: &str) -> String {
    let path = dir.join("s.yaml");
    std::fs::write(&path, yaml).unwrap();
    path.to_string_lossy().into_owned()
}

fn n(v: &Value, pointer: &str) -> u64 {
    v.pointer(pointer).and_then(Value::as_u64).unwrap_or(0)
}

/// Every request answered 200, each with its own latency, and the origin spoke `protocol`.
fn assert_clean(r: &Value, protocol: &str) {
    let total = n(r, "/requests/total");
    assert!(total > 0, "{r}");
    assert_eq!(n(r, "/requests/failed"), 0, "{}", r["error_examples"]);
    assert_eq!(n(r, "/status_codes/200"), total);
    assert_eq!(n(r, "/latency_ms/count"), total);
    assert_eq!(n(r, "/service_time_ms/count"), total);
    assert_eq!(r["origins"][0]["protocol"], protocol, "{}", r["origins"]);
}

#[test]
fn h2c_and_tls_alpn_against_nginx_agree_with_its_count() {
    nginx_counts("h2");
}

#[test]
fn h2c_and_tls_alpn_against_nginx_agree_with_its_count_with_the_wire_client() {
    nginx_counts("wire");
}

/// Per-VU h2c and TLS connections, and shared ones over TLS, with HTTP/2 client `client`:
/// nginx served every request the run counted.
fn nginx_counts(client: &str) {
    let _serial = exclusive();
    let Some(nginx) = Nginx::start() else { return };
    let h2c = format!("http://127.0.0.1:{}/", nginx.h2c);
    let tls = format!("https://127.0.0.1:{}/", nginx.tls);
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            vec![
                h2c.clone(),
                "--http2".into(),
                "--rate".into(),
                "300/s".into(),
            ],
            "h2c",
        ),
        (
            vec![
                tls.clone(),
                "--insecure".into(),
                "--rate".into(),
                "300/s".into(),
            ],
            "h2",
        ),
    ];
    for (args, protocol) in cases {
        let mut full = vec![
            "--url",
            &args[0],
            "--duration",
            "1s",
            "--http2-client",
            client,
        ];
        full.extend(args[1..].iter().map(String::as_str));
        let (r, served) = run_counting(&full, || nginx.requests());
        assert_clean(&r, protocol);
        assert_eq!(
            n(&r, "/requests/total"),
            served,
            "{protocol}: nginx served {served}"
        );
    }
    // Shared, multiplexed connections over TLS: 2 connections, 16 streams each (paced: a
    // closed model at full speed over TLS keeps the generator's worker busy, which its
    // validity judgement rightly calls a disturbed measurement).
    let dir = tempfile::tempdir().unwrap();
    let file = scenario(
        dir.path(),
        &format!("target: {tls}\ninsecure: true\nhttp: {{ version: \"2\", connections: 2, max_streams: 16 }}\nload: {{ model: open, rate: 400/s, duration: 1s }}\nsteps: [ {{ get: / }} ]\n"),
    );
    let (r, served) = run_counting(&[&file, "--http2-client", client], || nginx.requests());
    assert_clean(&r, "h2");
    assert_eq!(n(&r, "/requests/total"), served);
    // The pool takes the least busy connection, and equally busy ones in turn: both open,
    // never more than the two configured.
    let opened = n(&r, "/origins/0/connections/h2");
    assert_eq!(opened, 2, "{opened} h2 connections opened");
}

/// Every `/api/ping` answer's `Server-Timing` was read: the HTTP/2 client keeps that one
/// header of each response.
fn assert_server_time_read(r: &Value) {
    let step = &r["steps"][0];
    assert_eq!(
        step["server_latency_ms"]["count"], step["requests"],
        "every answer's server time was read: {step}"
    );
}

#[test]
fn the_built_in_target_speaks_h2c_and_alpn() {
    let _serial = exclusive();
    let plain = Target::start(&[]);
    let r = run(&[
        "--url",
        &format!("{}/api/ping", plain.url),
        "--http2",
        "--rate",
        "300/s",
        "--duration",
        "1s",
    ]);
    assert_clean(&r, "h2c");
    assert_server_time_read(&r);
    // HTTP/1.1 still answers on the same port.
    let r = run(&[
        "--url",
        &format!("{}/api/ping", plain.url),
        "--rate",
        "300/s",
        "--duration",
        "1s",
    ]);
    assert_clean(&r, "http/1.1");
    let tls = Target::start(&["--tls"]);
    assert!(tls.url.starts_with("https://"), "{}", tls.url);
    let r = run(&[
        "--url",
        &format!("{}/api/ping", tls.url),
        "--insecure",
        "--rate",
        "300/s",
        "--duration",
        "1s",
    ]);
    assert_clean(&r, "h2");
    assert_server_time_read(&r);
    // Paced: two closed VUs against an answer in microseconds keep both cores busy (generator
    // and target), and the generator honestly waits for a CPU: such a run is invalid
    // (docs/http2.md, "Why the mixed-version test is paced").
    let dir = tempfile::tempdir().unwrap();
    let file = scenario(
        dir.path(),
        &format!("target: {}\ninsecure: true\nhttp: {{ version: \"1.1\" }}\nload: {{ model: open, stages: [{{ duration: 1s, rate: 200/s }}], max_in_flight: 50 }}\nsteps:\n  - get: /api/ping\n  - get: /health\n    http: {{ version: \"2\" }}\n", tls.url),
    );
    let r = run(&[&file]);
    assert_eq!(n(&r, "/requests/failed"), 0, "{}", r["error_examples"]);
    let protocols: Vec<&str> = r["origins"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["protocol"].as_str().unwrap())
        .collect();
    assert_eq!(
        protocols,
        ["http/1.1", "h2"],
        "a step chose its own version"
    );
}

#[test]
fn two_shared_connections_both_carry_requests_at_a_concurrency_of_one() {
    let _serial = exclusive();
    let target = Target::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    // 40/s of requests answered in well under a millisecond: one at a time, so every request
    // finds both connections idle. Ties go to
    // the connections in turn, so both open and both carry requests (the first one took
    // them all before).
    for version in ["1.1", "2"] {
        let file = scenario(
            dir.path(),
            &format!("target: {}\nhttp: {{ version: \"{version}\", connections: 2 }}\nload: {{ model: open, rate: 40/s, duration: 500ms }}\nsteps: [ {{ get: /api/ping }} ]\n", target.url),
        );
        let r = run(&[&file]);
        let protocol = if version == "2" { "h2c" } else { "http/1.1" };
        assert_clean(&r, protocol);
        assert!(n(&r, "/requests/total") >= 4, "{}", r["requests"]);
        // A JSON pointer writes the `/` of `http/1.1` as `~1`.
        let opened = n(
            &r,
            &format!("/origins/0/connections/{}", protocol.replace('/', "~1")),
        );
        assert_eq!(opened, 2, "{version}: {}", r["origins"]);
    }
}
