//! End-to-end fault tests: the real `loadlab` binary against small misbehaving HTTP servers.
//!
//! Every server listens on 127.0.0.1:0, serves each connection on its own std thread, and
//! stops when the test drops it (a shared AtomicBool) or after `SERVER_LIFETIME` at the latest.
//! Every run is ~1 s at a small load and is killed if it takes longer than `RUN_LIMIT`.

use serde_json::Value;
use std::io::{ErrorKind as IoKind, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

const SERVER_LIFETIME: Duration = Duration::from_secs(15);
const RUN_LIMIT: Duration = Duration::from_secs(20);
const POLL: Duration = Duration::from_millis(50);

// ---------------------------------------------------------------------------------------------
// Fault servers

#[derive(Default)]
struct Stats {
    /// TCP connections accepted (includes the binary's pre-flight connect probe).
    accepted: AtomicU64,
    /// Connections on which at least one request head arrived.
    conns_with_request: AtomicU64,
    /// Request heads read.
    requests: AtomicU64,
    /// Complete responses written.
    responses: AtomicU64,
    /// Source addresses of the accepted connections.
    peers: Mutex<std::collections::BTreeSet<std::net::IpAddr>>,
}

impl Stats {
    fn get(v: &AtomicU64) -> u64 {
        v.load(Ordering::SeqCst)
    }
}

/// One accepted connection, handed to a server's handler.
struct Conn {
    stream: TcpStream,
    buf: Vec<u8>,
    stop: Arc<AtomicBool>,
    stats: Arc<Stats>,
    deadline: Instant,
    had_request: bool,
}

impl Conn {
    fn stopped(&self) -> bool {
        self.stop.load(Ordering::SeqCst) || Instant::now() >= self.deadline
    }

    /// Reads one request head (GET, no body); false on end of stream, error or stop.
    fn read_request(&mut self) -> bool {
        let mut tmp = [0u8; 4096];
        loop {
            if let Some(pos) = self.buf.windows(4).position(|w| w == b"\r\n\r\n") {
                self.buf.drain(..pos + 4);
                self.stats.requests.fetch_add(1, Ordering::SeqCst);
                if !self.had_request {
                    self.had_request = true;
                    self.stats.conns_with_request.fetch_add(1, Ordering::SeqCst);
                }
                return true;
            }
            if self.stopped() {
                return false;
            }
            match self.stream.read(&mut tmp) {
                Ok(0) => return false,
                Ok(n) => self.buf.extend_from_slice(&tmp[..n]),
                Err(e)
                    if matches!(
                        e.kind(),
                        IoKind::WouldBlock | IoKind::TimedOut | IoKind::Interrupted
                    ) => {}
                Err(_) => return false,
            }
        }
    }

    fn write(&mut self, bytes: &[u8]) -> bool {
        self.stream
            .write_all(bytes)
            .and_then(|_| self.stream.flush())
            .is_ok()
    }

    /// Writes a whole response and counts it.
    fn respond(&mut self, bytes: &[u8]) -> bool {
        let ok = self.write(bytes);
        if ok {
            self.stats.responses.fetch_add(1, Ordering::SeqCst);
        }
        ok
    }

    fn sleep_until_stopped(&self) {
        while !self.stopped() {
            std::thread::sleep(POLL);
        }
    }
}

struct Server {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    stats: Arc<Stats>,
    accept: Option<JoinHandle<()>>,
    conns: Arc<Mutex<Vec<JoinHandle<()>>>>,
}

impl Server {
    fn start(handler: fn(&mut Conn)) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().unwrap();
        assert!(addr.ip().is_loopback());
        listener.set_nonblocking(true).unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let stats = Arc::new(Stats::default());
        let conns: Arc<Mutex<Vec<JoinHandle<()>>>> = Arc::new(Mutex::new(Vec::new()));
        let deadline = Instant::now() + SERVER_LIFETIME;
        let accept = {
            let (stop, stats, conns) = (stop.clone(), stats.clone(), conns.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::SeqCst) && Instant::now() < deadline {
                    match listener.accept() {
                        Ok((stream, peer)) => {
                            stats.accepted.fetch_add(1, Ordering::SeqCst);
                            stats.peers.lock().unwrap().insert(peer.ip());
                            let _ = stream.set_nonblocking(false);
                            let _ = stream.set_read_timeout(Some(POLL));
                            let _ = stream.set_nodelay(true);
                            let mut conn = Conn {
                                stream,
                                buf: Vec::new(),
                                stop: stop.clone(),
                                stats: stats.clone(),
                                deadline,
                                had_request: false,
                            };
                            let h = std::thread::spawn(move || handler(&mut conn));
                            let mut list = conns.lock().unwrap();
                            list.retain(|h| !h.is_finished());
                            list.push(h);
                        }
                        Err(e) if e.kind() == IoKind::WouldBlock => {
                            std::thread::sleep(Duration::from_millis(2))
                        }
                        Err(_) => std::thread::sleep(Duration::from_millis(2)),
                    }
                }
            })
        };
        Server {
            addr,
            stop,
            stats,
            accept: Some(accept),
            conns,
        }
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{}", self.addr, path)
    }

    fn accepted(&self) -> u64 {
        Stats::get(&self.stats.accepted)
    }
    fn conns_with_request(&self) -> u64 {
        Stats::get(&self.stats.conns_with_request)
    }
    fn requests(&self) -> u64 {
        Stats::get(&self.stats.requests)
    }
    fn responses(&self) -> u64 {
        Stats::get(&self.stats.responses)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(h) = self.accept.take() {
            let _ = h.join();
        }
        let handles: Vec<_> = std::mem::take(&mut *self.conns.lock().unwrap());
        for h in handles {
            let _ = h.join();
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Running the binary

struct Run {
    status: ExitStatus,
    stderr: String,
    stdout: String,
    json: Option<Value>,
    elapsed: Duration,
}

impl Run {
    fn code(&self) -> i32 {
        self.status.code().unwrap_or(-1)
    }
    fn json(&self) -> &Value {
        self.json
            .as_ref()
            .unwrap_or_else(|| panic!("no JSON result written\n{}", self.describe()))
    }
    fn u(&self, pointer: &str) -> u64 {
        self.json()
            .pointer(pointer)
            .and_then(Value::as_u64)
            .unwrap_or(0)
    }
    fn f(&self, pointer: &str) -> f64 {
        self.json()
            .pointer(pointer)
            .and_then(Value::as_f64)
            .unwrap_or_else(|| panic!("no number at {pointer}\n{}", self.describe()))
    }
    fn total(&self) -> u64 {
        self.u("/requests/total")
    }
    fn ok(&self) -> u64 {
        self.u("/requests/ok")
    }
    fn failed(&self) -> u64 {
        self.u("/requests/failed")
    }
    fn err(&self, kind: &str) -> u64 {
        self.u(&format!("/errors/{kind}"))
    }
    fn error_sum(&self) -> u64 {
        self.json()
            .get("errors")
            .and_then(Value::as_object)
            .map(|m| m.values().filter_map(Value::as_u64).sum())
            .unwrap_or(0)
    }
    fn describe(&self) -> String {
        let short = |v: &Value, k: &str| v.get(k).map(|x| x.to_string()).unwrap_or_default();
        let summary = match &self.json {
            Some(v) => format!(
                "requests={} errors={} examples={} status_codes={} service_time_ms={} valid={} invalid_reasons={}",
                short(v, "requests"),
                short(v, "errors"),
                short(v, "error_examples"),
                short(v, "status_codes"),
                short(v, "service_time_ms"),
                short(v, "valid"),
                short(v, "invalid_reasons"),
            ),
            None => "no JSON".into(),
        };
        format!(
            "exit={:?} elapsed={:?}\n{summary}\n--- stderr ---\n{}\n--- stdout ---\n{}",
            self.status.code(),
            self.elapsed,
            self.stderr,
            self.stdout
        )
    }
    fn assert_no_panic(&self) {
        assert!(
            !self.stderr.contains("panicked"),
            "the binary panicked\n{}",
            self.describe()
        );
    }
}

fn json_path(test: &str) -> PathBuf {
    std::env::temp_dir().join(format!("loadlab-faults-{}-{test}.json", std::process::id()))
}

/// Runs `loadlab run --url URL <load> --duration 1s ... --json <unique file>`.
fn run_loadlab(test: &str, url: &str, load: &[&str], timeout: &str) -> Run {
    let json = json_path(test);
    let _ = std::fs::remove_file(&json);
    let mut args: Vec<String> = vec!["run".into(), "--url".into(), url.into()];
    args.extend(load.iter().map(|s| s.to_string()));
    args.extend(
        [
            "--duration",
            "1s",
            "--timeout",
            timeout,
            "--no-progress",
            "--allow-saturated",
            "--json",
        ]
        .iter()
        .map(|s| s.to_string()),
    );
    args.push(json.to_string_lossy().into_owned());
    let started = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_loadlab"))
        .args(&args)
        .env(
            "LOADLAB_RESULTS",
            std::env::temp_dir().join(format!("loadlab-faults-results-{}", std::process::id())),
        )
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn loadlab");
    // Drain the pipes on threads so a chatty child cannot block.
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let out_t = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let err_t = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for loadlab") {
            break status;
        }
        if started.elapsed() > RUN_LIMIT {
            let _ = child.kill();
            let status = child.wait().unwrap();
            panic!(
                "loadlab {args:?} did not finish within {RUN_LIMIT:?} (killed: {status:?})\nstderr: {}",
                err_t.join().unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let elapsed = started.elapsed();
    let stdout = out_t.join().unwrap_or_default();
    let stderr = err_t.join().unwrap_or_default();
    let json_value = std::fs::read_to_string(&json).ok().map(|text| {
        serde_json::from_str::<Value>(&text)
            .unwrap_or_else(|e| panic!("result JSON does not parse: {e}\n{text}"))
    });
    let _ = std::fs::remove_file(&json);
    let run = Run {
        status,
        stderr,
        stdout,
        json: json_value,
        elapsed,
    };
    run.assert_no_panic();
    if let Some(v) = &run.json {
        assert_eq!(
            v.get("schema").and_then(Value::as_str),
            Some("loadlab.run.v1"),
            "{}",
            run.describe()
        );
    }
    run
}

/// Checks the bookkeeping every valid run must satisfy.
fn assert_consistent(run: &Run) {
    assert_eq!(
        run.ok() + run.failed(),
        run.total(),
        "ok + failed != total\n{}",
        run.describe()
    );
    assert_eq!(
        run.error_sum(),
        run.failed(),
        "sum of error kinds != failed\n{}",
        run.describe()
    );
}

// ---------------------------------------------------------------------------------------------
// Handlers

const OK_2: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";

/// Reads the request, then closes without writing a byte.
fn reset_handler(c: &mut Conn) {
    c.read_request();
}

/// Reads the request, then aborts the connection with a real RST (SO_LINGER 0). `libc` is a
/// dependency of the package, so integration tests may use it.
fn rst_handler(c: &mut Conn) {
    if c.read_request() {
        use std::os::fd::AsRawFd;
        let linger = libc::linger {
            l_onoff: 1,
            l_linger: 0,
        };
        // SAFETY: setsockopt reads `linger` for the given length on a socket we own.
        let rc = unsafe {
            libc::setsockopt(
                c.stream.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_LINGER,
                &linger as *const libc::linger as *const libc::c_void,
                std::mem::size_of::<libc::linger>() as libc::socklen_t,
            )
        };
        assert_eq!(rc, 0, "setsockopt(SO_LINGER)");
    }
}

/// Accepts, reads the request and never answers.
fn stall_handler(c: &mut Conn) {
    c.read_request();
    c.sleep_until_stopped();
}

fn garbage_handler(c: &mut Conn) {
    while c.read_request() {
        if !c.respond(b"garbage\r\n\r\n") {
            return;
        }
    }
}

fn slow_body_handler(c: &mut Conn) {
    while c.read_request() {
        if !c.write(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n") {
            return;
        }
        for b in b"0123456789" {
            std::thread::sleep(Duration::from_millis(20));
            if !c.write(&[*b]) {
                return;
            }
        }
        c.stats.responses.fetch_add(1, Ordering::SeqCst);
    }
}

fn chunked_handler(c: &mut Conn) {
    let parts: [&[u8]; 5] = [
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: text/plain\r\n\r\n5\r\nhel",
        b"lo\r\n7;ext=1\r\n wor",
        b"ld!\r\n10\r\n0123456789abcdef\r",
        b"\n0\r\nX-Trailer: yes\r",
        b"\n\r\n",
    ];
    while c.read_request() {
        for (i, p) in parts.iter().enumerate() {
            if i > 0 {
                std::thread::sleep(Duration::from_millis(2));
            }
            if !c.write(p) {
                return;
            }
        }
        c.stats.responses.fetch_add(1, Ordering::SeqCst);
    }
}

fn close_handler(c: &mut Conn) {
    if c.read_request() {
        c.respond(b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok");
    }
}

/// Keep-alive without saying anything, but closes the connection right after every 3rd response.
fn stale_handler(c: &mut Conn) {
    for _ in 0..3 {
        if !c.read_request() || !c.respond(OK_2) {
            return;
        }
    }
}

fn huge_length_handler(c: &mut Conn) {
    while c.read_request() {
        if !c.respond(b"HTTP/1.1 200 OK\r\nContent-Length: 100000000\r\n\r\n") {
            return;
        }
    }
}

fn status_503_handler(c: &mut Conn) {
    while c.read_request() {
        if !c.respond(
            b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 4\r\nRetry-After: 1\r\n\r\nbusy",
        ) {
            return;
        }
    }
}

fn status_404_handler(c: &mut Conn) {
    while c.read_request() {
        if !c.respond(b"HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\n\r\nnot found") {
            return;
        }
    }
}

/// A response head that never ends and grows past 64 KiB.
fn huge_head_handler(c: &mut Conn) {
    if !c.read_request() {
        return;
    }
    let mut head = b"HTTP/1.1 200 OK\r\nX-Filler: ".to_vec();
    head.extend(std::iter::repeat_n(b'a', 80 * 1024));
    if c.write(&head) {
        c.sleep_until_stopped();
    }
}

/// HTTP/1.0 style: no length, the body ends when the server closes.
fn until_close_handler(c: &mut Conn) {
    if c.read_request() && c.write(b"HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nhello ") {
        std::thread::sleep(Duration::from_millis(5));
        if c.write(b"world") {
            c.stats.responses.fetch_add(1, Ordering::SeqCst);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Tests

#[test]
fn reset_before_any_response_byte_is_reset() {
    let server = Server::start(reset_handler);
    let run = run_loadlab("reset", &server.url("/r"), &["--rate", "50/s"], "500ms");
    assert_eq!(
        run.code(),
        0,
        "a valid run with only errors exits 0\n{}",
        run.describe()
    );
    assert_consistent(&run);
    assert!(run.err("reset") > 0, "{}", run.describe());
    assert_eq!(run.ok(), 0, "{}", run.describe());
    assert_eq!(
        run.err("reset"),
        run.total(),
        "every request should fail as reset\n{}",
        run.describe()
    );
    assert!(
        server.requests() >= run.total(),
        "server saw {} requests\n{}",
        server.requests(),
        run.describe()
    );
}

#[test]
fn rst_after_request_is_reset() {
    let server = Server::start(rst_handler);
    let run = run_loadlab("rst", &server.url("/rst"), &["--rate", "50/s"], "500ms");
    assert_eq!(
        run.code(),
        0,
        "a valid run with only errors exits 0\n{}",
        run.describe()
    );
    assert_consistent(&run);
    assert!(run.err("reset") > 0, "{}", run.describe());
    assert_eq!(run.ok(), 0, "{}", run.describe());
    assert_eq!(
        run.err("reset"),
        run.total(),
        "every request should fail as reset\n{}",
        run.describe()
    );
}

#[test]
fn stalled_server_times_out_and_run_still_ends() {
    let server = Server::start(stall_handler);
    let run = run_loadlab("stall", &server.url("/stall"), &["--vus", "2"], "300ms");
    assert!(
        run.elapsed < Duration::from_secs(3),
        "run took {:?}\n{}",
        run.elapsed,
        run.describe()
    );
    assert_eq!(run.code(), 0, "{}", run.describe());
    assert_consistent(&run);
    assert!(run.err("timeout") >= 1, "{}", run.describe());
    assert_eq!(run.ok(), 0, "{}", run.describe());
    assert_eq!(run.err("timeout"), run.total(), "{}", run.describe());
    // 2 VUs × 1 s / 300 ms ≈ 6-8 timeouts; well under one per millisecond.
    assert!(run.total() <= 12, "{}", run.describe());
    assert!(
        server.requests() >= 2,
        "server saw {} requests",
        server.requests()
    );
}

#[test]
fn garbage_response_is_protocol_error() {
    let server = Server::start(garbage_handler);
    let run = run_loadlab("garbage", &server.url("/bad"), &["--rate", "50/s"], "500ms");
    assert_eq!(run.code(), 0, "{}", run.describe());
    assert_consistent(&run);
    assert!(run.err("protocol") > 0, "{}", run.describe());
    assert_eq!(run.err("protocol"), run.total(), "{}", run.describe());
    assert_eq!(run.ok(), 0, "{}", run.describe());
}

#[test]
fn slow_body_counts_in_service_time() {
    let server = Server::start(slow_body_handler);
    let run = run_loadlab("slow_body", &server.url("/slow"), &["--vus", "2"], "2s");
    assert_eq!(run.code(), 0, "{}", run.describe());
    assert_consistent(&run);
    assert!(run.ok() > 0, "{}", run.describe());
    assert_eq!(run.failed(), 0, "{}", run.describe());
    assert_eq!(run.error_sum(), 0, "{}", run.describe());
    let p50 = run.f("/service_time_ms/p50");
    assert!(
        p50 >= 150.0,
        "service time p50 {p50} ms < 150 ms\n{}",
        run.describe()
    );
    assert!(
        p50 < 1000.0,
        "service time p50 {p50} ms implausible\n{}",
        run.describe()
    );
    // 2 VUs, ~200 ms each, for 1 s.
    assert!(run.total() <= 14, "{}", run.describe());
    assert_eq!(run.u("/status_codes/200"), run.ok(), "{}", run.describe());
}

#[test]
fn chunked_keep_alive_split_across_writes() {
    let server = Server::start(chunked_handler);
    let vus = 2u64;
    let run = run_loadlab("chunked", &server.url("/chunked"), &["--vus", "2"], "1s");
    assert_eq!(run.code(), 0, "{}", run.describe());
    assert_consistent(&run);
    assert_eq!(run.failed(), 0, "{}", run.describe());
    assert!(run.total() > 5, "{}", run.describe());
    assert_eq!(
        run.u("/status_codes/200"),
        run.total(),
        "{}",
        run.describe()
    );
    // Keep-alive: one connection per VU (+1 for the pre-flight connect probe).
    assert!(
        server.accepted() <= vus + 1,
        "accepted {} connections for {vus} VUs (conns with a request: {})\n{}",
        server.accepted(),
        server.conns_with_request(),
        run.describe()
    );
    assert!(
        server.conns_with_request() <= vus,
        "{} connections carried requests",
        server.conns_with_request()
    );
    assert!(server.responses() >= run.total());
}

#[test]
fn connection_close_opens_one_connection_per_request() {
    let server = Server::start(close_handler);
    let run = run_loadlab("close", &server.url("/close"), &["--rate", "50/s"], "500ms");
    assert_eq!(run.code(), 0, "{}", run.describe());
    assert_consistent(&run);
    assert!(run.total() >= 30, "{}", run.describe());
    assert_eq!(run.ok(), run.total(), "{}", run.describe());
    assert_eq!(run.failed(), 0, "{}", run.describe());
    // One request per connection; a few may be cut at the end of the run.
    // Warm-up requests are excluded from `total` but reach the server.
    let conns = server.conns_with_request();
    let sent = run.total() + run.u("/requests/warmup");
    assert!(
        conns >= sent && conns <= sent + 3,
        "{conns} connections carried requests for {} counted requests\n{}",
        run.total(),
        run.describe()
    );
    assert_eq!(server.requests(), conns, "a closed connection was reused");
}

#[test]
fn stale_keep_alive_connection_is_retried() {
    let server = Server::start(stale_handler);
    let run = run_loadlab("stale", &server.url("/stale"), &["--vus", "2"], "500ms");
    assert_eq!(run.code(), 0, "{}", run.describe());
    assert_consistent(&run);
    assert!(run.total() >= 30, "{}", run.describe());
    let reset = run.err("reset");
    assert!(
        reset * 100 <= run.total(),
        "{reset} resets in {} requests: the stale-connection retry did not hide the server's idle close\n{}",
        run.total(),
        run.describe()
    );
    assert!(run.failed() * 100 <= run.total(), "{}", run.describe());
    // The server really did close connections under the client.
    assert!(
        server.conns_with_request() * 3 >= server.responses(),
        "conns {} responses {}",
        server.conns_with_request(),
        server.responses()
    );
    assert!(
        server.conns_with_request() >= 10,
        "only {} connections",
        server.conns_with_request()
    );
}

#[test]
fn stale_keep_alive_connection_is_retried_open_model() {
    // Open model: connections wait idle in the pool, so the server's FIN has arrived by the time
    // a connection is reused.
    let server = Server::start(stale_handler);
    let run = run_loadlab(
        "stale_open",
        &server.url("/stale"),
        &["--rate", "100/s"],
        "500ms",
    );
    assert_eq!(run.code(), 0, "{}", run.describe());
    assert_consistent(&run);
    assert!(run.total() >= 60, "{}", run.describe());
    let reset = run.err("reset");
    assert!(
        reset * 100 <= run.total(),
        "{reset} resets in {} requests\n{}",
        run.total(),
        run.describe()
    );
    assert!(run.failed() * 100 <= run.total(), "{}", run.describe());
}

#[test]
fn huge_content_length_is_body_too_large() {
    let server = Server::start(huge_length_handler);
    let run = run_loadlab(
        "body_too_large",
        &server.url("/big"),
        &["--rate", "20/s"],
        "500ms",
    );
    assert_eq!(run.code(), 0, "{}", run.describe());
    assert_consistent(&run);
    assert!(run.err("body_too_large") > 0, "{}", run.describe());
    assert_eq!(run.err("body_too_large"), run.total(), "{}", run.describe());
    assert_eq!(run.ok(), 0, "{}", run.describe());
}

#[test]
fn status_503_is_http_5xx() {
    let server = Server::start(status_503_handler);
    let run = run_loadlab("s503", &server.url("/busy"), &["--vus", "2"], "500ms");
    assert_eq!(run.code(), 0, "{}", run.describe());
    assert_consistent(&run);
    let total = run.total();
    assert!(total > 5, "{}", run.describe());
    assert_eq!(run.err("http_5xx"), total, "{}", run.describe());
    assert_eq!(run.u("/status_codes/503"), total, "{}", run.describe());
    assert_eq!(run.ok(), 0, "{}", run.describe());
    // Error statuses do not cost the keep-alive connection.
    assert!(server.accepted() <= 3, "accepted {}", server.accepted());
}

#[test]
fn status_404_is_http_4xx() {
    let server = Server::start(status_404_handler);
    let run = run_loadlab("s404", &server.url("/missing"), &["--vus", "2"], "500ms");
    assert_eq!(run.code(), 0, "{}", run.describe());
    assert_consistent(&run);
    let total = run.total();
    assert!(total > 5, "{}", run.describe());
    assert_eq!(run.err("http_4xx"), total, "{}", run.describe());
    assert_eq!(run.err("http_5xx"), 0, "{}", run.describe());
    assert_eq!(run.u("/status_codes/404"), total, "{}", run.describe());
    assert_eq!(run.ok(), 0, "{}", run.describe());
}

#[test]
fn response_head_over_64k_is_protocol_error() {
    let server = Server::start(huge_head_handler);
    let run = run_loadlab("huge_head", &server.url("/head"), &["--rate", "20/s"], "1s");
    assert_eq!(run.code(), 0, "{}", run.describe());
    assert_consistent(&run);
    assert!(run.err("protocol") > 0, "{}", run.describe());
    assert_eq!(run.err("protocol"), run.total(), "{}", run.describe());
    assert_eq!(run.err("timeout"), 0, "{}", run.describe());
}

#[test]
fn body_until_close_is_ok() {
    let server = Server::start(until_close_handler);
    let run = run_loadlab(
        "until_close",
        &server.url("/h10"),
        &["--rate", "50/s"],
        "500ms",
    );
    assert_eq!(run.code(), 0, "{}", run.describe());
    assert_consistent(&run);
    assert!(run.total() >= 30, "{}", run.describe());
    assert_eq!(run.ok(), run.total(), "{}", run.describe());
    assert_eq!(
        server.requests(),
        server.conns_with_request(),
        "a closed connection was reused"
    );
}

#[test]
fn nothing_listening_exits_3_before_load() {
    let port = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let url = format!("http://127.0.0.1:{port}/");
    let run = run_loadlab("refused", &url, &["--vus", "2"], "500ms");
    assert_eq!(run.code(), 3, "{}", run.describe());
    assert!(
        run.elapsed < Duration::from_secs(5),
        "took {:?}",
        run.elapsed
    );
    assert!(run.stderr.contains("cannot connect"), "{}", run.describe());
    assert!(!run.stderr.contains("panicked"), "{}", run.describe());
}

#[test]
fn connections_are_spread_over_source_addresses() {
    let server = Server::start(close_handler);
    let run = run_loadlab(
        "sources",
        &server.url("/sources"),
        &["--rate", "50/s", "--source-addrs", "127.0.0.2-127.0.0.3"],
        "500ms",
    );
    assert_eq!(run.code(), 0, "{}", run.describe());
    assert_eq!(run.failed(), 0, "{}", run.describe());
    let peers = server.stats.peers.lock().unwrap().clone();
    for ip in ["127.0.0.2", "127.0.0.3"] {
        assert!(
            peers.contains(&ip.parse().unwrap()),
            "no connection came from {ip}: {peers:?}"
        );
    }
}
