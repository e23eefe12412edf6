//! A small HTTP/2 server (the `h2` crate's server side) that misbehaves on purpose: it limits
//! concurrent streams, resets streams, sends GOAWAY, or never opens its flow-control window.
//! Over plain TCP (h2c, prior knowledge) or TLS with ALPN `h2`; counts what it saw.

use bytes::Bytes;
use h2::Reason;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};

/// What the server does with each stream.
#[derive(Debug, Clone, Copy)]
pub enum Mode {
    /// Answers `200 ok` after `delay`.
    Answer,
    /// Resets every stream with this error code instead of answering.
    Reset(Reason),
    /// Answers, and after this many streams on a connection sends a graceful GOAWAY
    /// (NO_ERROR): the streams it took are answered, the connection then closes.
    GoAwayAfter(u64),
    /// After this many streams on a connection, GOAWAY with this error code at once.
    GoAwayError(u64, Reason),
}

#[derive(Debug, Clone, Copy)]
pub struct Behaviour {
    pub mode: Mode,
    /// SETTINGS_MAX_CONCURRENT_STREAMS.
    pub max_streams: Option<u32>,
    /// SETTINGS_INITIAL_WINDOW_SIZE; 0 and request bodies are never read: a stalled window.
    pub window: Option<u32>,
    /// How long each answer takes.
    pub delay: Duration,
    pub tls: bool,
}

impl Default for Behaviour {
    fn default() -> Self {
        Behaviour {
            mode: Mode::Answer,
            max_streams: None,
            window: None,
            delay: Duration::ZERO,
            tls: false,
        }
    }
}

#[derive(Default)]
pub struct H2Stats {
    pub connections: AtomicU64,
    /// Streams opened by the client (requests received).
    pub requests: AtomicU64,
    /// Complete answers sent.
    pub responses: AtomicU64,
    pub active: AtomicU64,
    /// Most streams open at once on one connection.
    pub most_active: AtomicU64,
    /// Each connection's bytes, as the server's h2 read and wrote them.
    pub wire: std::sync::Mutex<Vec<Arc<ConnWire>>>,
}

impl H2Stats {
    /// Back to a server that has seen nothing (before a run is made again).
    fn clear(&self) {
        for v in [
            &self.connections,
            &self.requests,
            &self.responses,
            &self.most_active,
        ] {
            v.store(0, Ordering::SeqCst);
        }
        self.wire.lock().unwrap().clear();
    }
}

/// One connection's plaintext HTTP/2 bytes, and the streams it carried.
#[derive(Default)]
pub struct ConnWire {
    pub received: AtomicU64,
    pub sent: AtomicU64,
    pub streams: AtomicU64,
}

/// `io`, counting what passes into a [`ConnWire`].
struct Counting<S> {
    io: S,
    wire: Arc<ConnWire>,
}

impl<S: AsyncRead + Unpin> AsyncRead for Counting<S> {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = std::pin::Pin::new(&mut self.io).poll_read(cx, buf);
        let n = (buf.filled().len() - before) as u64;
        self.wire.received.fetch_add(n, Ordering::SeqCst);
        polled
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Counting<S> {
    fn poll_write(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        let polled = std::pin::Pin::new(&mut self.io).poll_write(cx, buf);
        if let std::task::Poll::Ready(Ok(n)) = polled {
            self.wire.sent.fetch_add(n as u64, Ordering::SeqCst);
        }
        polled
    }

    fn poll_flush(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.io).poll_shutdown(cx)
    }
}

pub struct H2Server {
    pub addr: SocketAddr,
    pub stats: Arc<H2Stats>,
    tls: bool,
    _runtime: tokio::runtime::Runtime,
}

impl H2Server {
    pub fn start(b: Behaviour) -> H2Server {
        let (runtime, listener, addr) = crate::local_server::loopback_runtime();
        let stats = Arc::new(H2Stats::default());
        let to_clear = stats.clone();
        crate::server::clear_with_servers_started_here(move || to_clear.clear());
        let acceptor = b.tls.then(tls_acceptor);
        let s = stats.clone();
        runtime.spawn(async move {
            while let Ok((tcp, _)) = listener.accept().await {
                let (s, acceptor) = (s.clone(), acceptor.clone());
                tokio::spawn(async move {
                    match acceptor {
                        None => serve(tcp, b, s).await,
                        Some(a) => {
                            if let Ok(tls) = a.accept(tcp).await {
                                serve(tls, b, s).await
                            }
                        }
                    }
                });
            }
        });
        H2Server {
            addr,
            stats,
            tls: b.tls,
            _runtime: runtime,
        }
    }

    pub fn url(&self, path: &str) -> String {
        let scheme = if self.tls { "https" } else { "http" };
        format!("{scheme}://{}{path}", self.addr)
    }

    pub fn requests(&self) -> u64 {
        self.stats.requests.load(Ordering::SeqCst)
    }

    pub fn responses(&self) -> u64 {
        self.stats.responses.load(Ordering::SeqCst)
    }

    pub fn connections(&self) -> u64 {
        self.stats.connections.load(Ordering::SeqCst)
    }

    pub fn most_active(&self) -> u64 {
        self.stats.most_active.load(Ordering::SeqCst)
    }

    /// (received, sent) bytes of the connections that carried streams (not the check before
    /// the load, which only shakes hands).
    pub fn wire_bytes(&self) -> (u64, u64) {
        let wire = self.stats.wire.lock().unwrap();
        let used = wire.iter().filter(|w| w.streams.load(Ordering::SeqCst) > 0);
        used.fold((0, 0), |(r, s), w| {
            (
                r + w.received.load(Ordering::SeqCst),
                s + w.sent.load(Ordering::SeqCst),
            )
        })
    }
}

fn tls_acceptor() -> tokio_rustls::TlsAcceptor {
    let mut config = crate::local_server::self_signed_config();
    config.alpn_protocols = vec![b"h2".to_vec()];
    tokio_rustls::TlsAcceptor::from(Arc::new(config))
}

async fn serve<S>(io: S, b: Behaviour, stats: Arc<H2Stats>)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let mut builder = h2::server::Builder::new();
    if let Some(n) = b.max_streams {
        builder.max_concurrent_streams(n);
    }
    if let Some(w) = b.window {
        builder.initial_window_size(w);
    }
    let wire = Arc::new(ConnWire::default());
    stats.wire.lock().unwrap().push(wire.clone());
    let io = Counting {
        io,
        wire: wire.clone(),
    };
    let Ok(mut conn) = builder.handshake::<Counting<S>, Bytes>(io).await else {
        return;
    };
    stats.connections.fetch_add(1, Ordering::SeqCst);
    let mut taken = 0u64;
    let lifetime = tokio::time::sleep(Duration::from_secs(15));
    tokio::pin!(lifetime);
    loop {
        let next = tokio::select! {
            next = conn.accept() => next,
            _ = &mut lifetime => return,
        };
        let Some(Ok((req, mut respond))) = next else {
            return;
        };
        taken += 1;
        wire.streams.fetch_add(1, Ordering::SeqCst);
        stats.requests.fetch_add(1, Ordering::SeqCst);
        match b.mode {
            Mode::Reset(reason) => {
                respond.send_reset(reason);
                continue;
            }
            Mode::GoAwayAfter(n) if taken == n => conn.graceful_shutdown(),
            Mode::GoAwayError(n, reason) if taken == n => {
                conn.abrupt_shutdown(reason);
            }
            _ => {}
        }
        let stats = stats.clone();
        tokio::spawn(async move {
            let now = stats.active.fetch_add(1, Ordering::SeqCst) + 1;
            stats.most_active.fetch_max(now, Ordering::SeqCst);
            let mut body = req.into_body();
            if b.window == Some(0) {
                // A stalled window: wait for a body that cannot come (its capacity is never
                // given back), until the client gives up on the stream.
                while let Some(Ok(_)) = body.data().await {}
            }
            drop(body);
            tokio::time::sleep(b.delay).await;
            stats.active.fetch_sub(1, Ordering::SeqCst);
            let response = http::Response::builder().status(200).body(()).unwrap();
            if let Ok(mut send) = respond.send_response(response, false) {
                if send.send_data(Bytes::from_static(b"ok"), true).is_ok() {
                    stats.responses.fetch_add(1, Ordering::SeqCst);
                }
            }
        });
    }
}
