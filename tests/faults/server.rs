//! Misbehaving HTTP servers on 127.0.0.1:0: each connection on its own thread, counted.

use std::io::{ErrorKind as IoKind, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

const SERVER_LIFETIME: Duration = Duration::from_secs(15);
pub const POLL: Duration = Duration::from_millis(50);

#[derive(Default)]
pub struct Stats {
    /// TCP connections accepted (includes the binary's pre-flight connect probe).
    pub accepted: AtomicU64,
    /// Connections on which at least one request head arrived.
    pub conns_with_request: AtomicU64,
    /// Request heads read.
    pub requests: AtomicU64,
    /// Complete responses written.
    pub responses: AtomicU64,
    /// Source addresses of the accepted connections.
    pub peers: Mutex<std::collections::BTreeSet<std::net::IpAddr>>,
    /// The first request heads received, as text (for what the client sent).
    pub heads: Mutex<Vec<String>>,
}

/// Request heads kept per server.
const KEPT_HEADS: usize = 16;

impl Stats {
    pub fn get(v: &AtomicU64) -> u64 {
        v.load(Ordering::SeqCst)
    }

    /// Back to a server that has seen nothing (before a run is made again).
    fn clear(&self) {
        for v in [
            &self.accepted,
            &self.conns_with_request,
            &self.requests,
            &self.responses,
        ] {
            v.store(0, Ordering::SeqCst);
        }
        self.peers.lock().unwrap().clear();
        self.heads.lock().unwrap().clear();
    }
}

thread_local! {
    /// How to clear the counts of the servers started on this thread (a test's).
    static SERVERS_STARTED_HERE: std::cell::RefCell<Vec<Box<dyn Fn()>>> =
        std::cell::RefCell::new(Vec::new());
}

/// Registers how to clear a server's counts with the others started on this thread.
pub fn clear_with_servers_started_here(clear: impl Fn() + 'static) {
    SERVERS_STARTED_HERE.with(|c| c.borrow_mut().push(Box::new(clear)));
}

/// Clears the counts of every server this thread (a test) started: before a run is made
/// again, so they count the last attempt only.
pub fn clear_servers_started_here() {
    SERVERS_STARTED_HERE.with(|c| c.borrow().iter().for_each(|clear| clear()));
}

/// One accepted connection, handed to a server's handler.
pub struct Conn {
    pub stream: TcpStream,
    pub buf: Vec<u8>,
    pub stop: Arc<AtomicBool>,
    pub stats: Arc<Stats>,
    pub deadline: Instant,
    pub had_request: bool,
    /// The head of the last request read.
    pub head: String,
}

impl Conn {
    pub fn stopped(&self) -> bool {
        self.stop.load(Ordering::SeqCst) || Instant::now() >= self.deadline
    }

    /// Reads one request head (GET, no body); false on end of stream, error or stop.
    pub fn read_request(&mut self) -> bool {
        let mut tmp = [0u8; 4096];
        loop {
            if let Some(pos) = self.buf.windows(4).position(|w| w == b"\r\n\r\n") {
                let head: Vec<u8> = self.buf.drain(..pos + 4).collect();
                self.head = String::from_utf8_lossy(&head).into_owned();
                let mut heads = self.stats.heads.lock().unwrap();
                if heads.len() < KEPT_HEADS {
                    heads.push(self.head.clone());
                }
                drop(heads);
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

    pub fn write(&mut self, bytes: &[u8]) -> bool {
        self.stream
            .write_all(bytes)
            .and_then(|_| self.stream.flush())
            .is_ok()
    }

    /// Writes a whole response and counts it.
    pub fn respond(&mut self, bytes: &[u8]) -> bool {
        let ok = self.write(bytes);
        if ok {
            self.stats.responses.fetch_add(1, Ordering::SeqCst);
        }
        ok
    }

    pub fn sleep_until_stopped(&self) {
        while !self.stopped() {
            std::thread::sleep(POLL);
        }
    }
}

pub struct Server {
    pub addr: SocketAddr,
    pub stop: Arc<AtomicBool>,
    pub stats: Arc<Stats>,
    pub accept: Option<JoinHandle<()>>,
    pub conns: Arc<Mutex<Vec<JoinHandle<()>>>>,
}

impl Server {
    pub fn start(handler: fn(&mut Conn)) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().unwrap();
        assert!(addr.ip().is_loopback());
        listener.set_nonblocking(true).unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let stats = Arc::new(Stats::default());
        let to_clear = stats.clone();
        clear_with_servers_started_here(move || to_clear.clear());
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
                                head: String::new(),
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

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{}", self.addr, path)
    }

    pub fn accepted(&self) -> u64 {
        Stats::get(&self.stats.accepted)
    }
    pub fn conns_with_request(&self) -> u64 {
        Stats::get(&self.stats.conns_with_request)
    }
    pub fn requests(&self) -> u64 {
        Stats::get(&self.stats.requests)
    }
    pub fn responses(&self) -> u64 {
        Stats::get(&self.stats.responses)
    }
    /// The first request heads the server received.
    pub fn heads(&self) -> Vec<String> {
        self.stats.heads.lock().unwrap().clone()
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
