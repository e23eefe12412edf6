//! Sockets, runtime and lifecycle: binding synchronously (so "address in use" is reported
//! to the caller), serving HTTP/1.1 with keep-alive and HTTP/2 (h2c, or ALPN over TLS) on a
//! dedicated tokio runtime, and stopping gracefully on `TargetHandle::shutdown`, drop, or
//! SIGINT/SIGTERM.

use std::io::Write as _;
use std::net::SocketAddr;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use socket2::{Domain, Protocol, Socket, Type};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinSet;
use tokio_rustls::TlsAcceptor;

use crate::config::TargetConfig;
use crate::error::TargetError;
use crate::handlers::{self, AppState};

/// Pending connections the kernel queues before `accept` (std's default of 128 drops
/// SYNs when a load test opens many connections at once).
const LISTEN_BACKLOG: i32 = 1024;

/// How long in-flight requests may take to finish after shutdown was requested.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);

/// A target server running on its own thread. Dropping it stops the server.
#[derive(Debug)]
pub struct TargetHandle {
    /// The address actually bound (the real port when port 0 was requested).
    pub addr: SocketAddr,
    /// It serves HTTPS.
    pub tls: bool,
    stop: Option<watch::Sender<bool>>,
    thread: Option<JoinHandle<()>>,
}

impl TargetHandle {
    /// Base URL of the server, e.g. `http://127.0.0.1:41234`.
    pub fn url(&self) -> String {
        format!(
            "{}://{}",
            if self.tls { "https" } else { "http" },
            self.addr
        )
    }

    /// Stops accepting connections, lets in-flight requests finish (for at most a couple
    /// of seconds) and joins the server thread.
    pub fn shutdown(mut self) {
        self.stop_and_join();
    }

    fn stop_and_join(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(true);
        }
        if let Some(thread) = self.thread.take() {
            // A panic on the server thread has already been reported by the panic hook.
            let _ = thread.join();
        }
    }
}

impl Drop for TargetHandle {
    fn drop(&mut self) {
        self.stop_and_join();
    }
}

/// Starts the target on its own OS thread with its own tokio runtime and returns once the
/// socket is bound (errors such as "address in use" are returned here).
pub fn spawn(config: TargetConfig) -> Result<TargetHandle, TargetError> {
    let Bound {
        state,
        runtime,
        listener,
        addr,
        tls,
    } = bind_target(&config)?;
    let serves_tls = tls.is_some();
    let (stop_tx, stop_rx) = watch::channel(false);
    let thread = std::thread::Builder::new()
        .name("loadlab-target".into())
        .spawn(move || {
            // A current-thread runtime serves on this very thread.
            state.metrics.register_current_thread();
            let result = runtime.block_on(async move {
                let listener = TcpListener::from_std(listener)?;
                // Run the accept loop on a worker so a multi-threaded runtime uses all threads.
                let task = tokio::spawn(serve(listener, state, tls, stop_rx));
                let _ = task.await;
                Ok::<(), std::io::Error>(())
            });
            if let Err(e) = result {
                eprintln!("loadlab target on {addr} stopped: {e}");
            }
        })
        .map_err(TargetError::Runtime)?;
    Ok(TargetHandle {
        addr,
        tls: serves_tls,
        stop: Some(stop_tx),
        thread: Some(thread),
    })
}

/// Binds, prints `loadlab target listening on http://ADDR` on stdout and serves until
/// SIGINT or SIGTERM, then finishes in-flight requests and returns `Ok(())`.
pub fn run_until_ctrl_c(config: TargetConfig) -> Result<(), TargetError> {
    let Bound {
        state,
        runtime,
        listener,
        addr,
        tls,
    } = bind_target(&config)?;
    let scheme = if tls.is_some() { "https" } else { "http" };
    if config.tls == Some(crate::tls::TargetTls::SelfSigned) {
        eprintln!("loadlab target: self-signed certificate: clients need --insecure");
    }
    state.metrics.register_current_thread();
    runtime.block_on(async move {
        let listener = TcpListener::from_std(listener).map_err(|source| TargetError::Bind {
            addr: config.listen,
            source,
        })?;
        // Install the handlers before announcing, so a signal sent right after the line
        // is seen is handled.
        let signal = shutdown_signal()?;
        {
            let mut out = std::io::stdout().lock();
            // The first line ends with the URL (scripts and tests read it from there). A
            // reader that stops after it (`| head -1`) closes the pipe: the target serves on.
            let _ = writeln!(out, "loadlab target listening on {scheme}://{addr}")
                .and_then(|()| writeln!(out, "  capacity: {} (on /api/*)", config.describe()))
                .and_then(|()| {
                    writeln!(out, "  endpoints: {}", crate::routes::ENDPOINTS.join(", "))
                })
                .and_then(|()| writeln!(out, "  stop it with Ctrl-C"))
                .and_then(|()| out.flush());
        }
        let (stop_tx, stop_rx) = watch::channel(false);
        let server = tokio::spawn(serve(listener, state, tls, stop_rx));
        signal.await;
        let _ = stop_tx.send(true);
        let _ = server.await;
        Ok(())
    })
}

/// A target bound and ready to serve: its state, runtime, listening socket (at `addr`, the
/// port actually bound) and TLS acceptor when it serves HTTPS.
struct Bound {
    state: Arc<AppState>,
    runtime: tokio::runtime::Runtime,
    listener: std::net::TcpListener,
    addr: SocketAddr,
    tls: Option<TlsAcceptor>,
}

/// Checks the configuration and binds its socket, so a bad value or an address in use is
/// reported to the caller before anything is served.
fn bind_target(config: &TargetConfig) -> Result<Bound, TargetError> {
    config.validate()?;
    let state = Arc::new(AppState::new(config)?);
    let runtime = build_runtime(config.threads, &state)?;
    let listener = bind(config.listen, config.reuse_port)?;
    let addr = local_addr(&listener, config.listen)?;
    let tls = acceptor(config, addr)?;
    Ok(Bound {
        state,
        runtime,
        listener,
        addr,
        tls,
    })
}

/// The runtime; its threads register with the metrics so `/metrics` can report the CPU of
/// the target's own threads.
fn build_runtime(
    threads: usize,
    state: &Arc<AppState>,
) -> Result<tokio::runtime::Runtime, TargetError> {
    let registry = state.clone();
    let mut builder = if threads <= 1 {
        tokio::runtime::Builder::new_current_thread()
    } else {
        let mut b = tokio::runtime::Builder::new_multi_thread();
        b.worker_threads(threads);
        b
    };
    builder
        .enable_all()
        .on_thread_start(move || registry.metrics.register_current_thread())
        .thread_name("loadlab-target-worker")
        .build()
        .map_err(TargetError::Runtime)
}

/// Creates a non-blocking listening socket with a generous backlog.
fn bind(addr: SocketAddr, reuse_port: bool) -> Result<std::net::TcpListener, TargetError> {
    let err = |source| TargetError::Bind { addr, source };
    let socket =
        Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP)).map_err(err)?;
    #[cfg(unix)]
    socket.set_reuse_address(true).map_err(err)?;
    #[cfg(unix)]
    if reuse_port {
        socket.set_reuse_port(true).map_err(err)?;
    }
    socket.bind(&addr.into()).map_err(err)?;
    socket.listen(LISTEN_BACKLOG).map_err(err)?;
    socket.set_nonblocking(true).map_err(err)?;
    Ok(socket.into())
}

fn local_addr(
    listener: &std::net::TcpListener,
    requested: SocketAddr,
) -> Result<SocketAddr, TargetError> {
    listener.local_addr().map_err(|source| TargetError::Bind {
        addr: requested,
        source,
    })
}

/// The TLS acceptor, when the target serves HTTPS.
fn acceptor(config: &TargetConfig, addr: SocketAddr) -> Result<Option<TlsAcceptor>, TargetError> {
    config
        .tls
        .as_ref()
        .map(|tls| crate::tls::acceptor(tls, addr))
        .transpose()
}

/// Accepts connections until `stop` flips, then lets open connections finish their
/// current request (idle keep-alive connections close at once).
async fn serve(
    listener: TcpListener,
    state: Arc<AppState>,
    tls: Option<TlsAcceptor>,
    mut stop: watch::Receiver<bool>,
) {
    let mut conns = JoinSet::new();
    // HTTP/1.1 and HTTP/2 on one port: the connection preface (or ALPN's choice, which the
    // client follows with the preface) tells them apart.
    let builder = {
        let mut b = auto::Builder::new(TokioExecutor::new());
        b.http1().keep_alive(true).pipeline_flush(true);
        Arc::new(b)
    };
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _peer)) => {
                    let _ = stream.set_nodelay(true);
                    let (state, stop, builder) = (state.clone(), stop.clone(), builder.clone());
                    match tls.clone() {
                        None => conns.spawn(serve_one(builder, stream, state, stop)),
                        Some(acceptor) => conns.spawn(async move {
                            // A client that fails the handshake is its own problem.
                            if let Ok(stream) = acceptor.accept(stream).await {
                                serve_one(builder, stream, state, stop).await;
                            }
                        }),
                    };
                }
                Err(e) => {
                    // Typically out of file descriptors: back off instead of spinning.
                    eprintln!("loadlab target: accept failed: {e}");
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
            },
            Some(_) = conns.join_next(), if !conns.is_empty() => {}
            _ = stop.changed() => break,
        }
    }
    drop(listener);
    let drain = async { while conns.join_next().await.is_some() {} };
    if tokio::time::timeout(SHUTDOWN_GRACE, drain).await.is_err() {
        conns.abort_all();
    }
}

/// Serves one connection (HTTP/1.1 or HTTP/2) until it closes or the target stops.
async fn serve_one<I>(
    builder: Arc<auto::Builder<TokioExecutor>>,
    io: I,
    state: Arc<AppState>,
    mut stop: watch::Receiver<bool>,
) where
    I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let conn = builder
        .serve_connection_with_upgrades(
            TokioIo::new(io),
            service_fn(move |req| handlers::handle(state.clone(), req)),
        )
        .into_owned();
    tokio::pin!(conn);
    tokio::select! {
        _ = conn.as_mut() => {}
        _ = stop.changed() => {
            conn.as_mut().graceful_shutdown();
            let _ = conn.await;
        }
    }
}

/// Resolves on the first SIGINT (Ctrl-C) or SIGTERM.
fn shutdown_signal() -> Result<impl std::future::Future<Output = ()>, TargetError> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let mut int = signal(SignalKind::interrupt()).map_err(TargetError::Signal)?;
        let mut term = signal(SignalKind::terminate()).map_err(TargetError::Signal)?;
        Ok(async move {
            tokio::select! {
                _ = int.recv() => {}
                _ = term.recv() => {}
            }
        })
    }
    #[cfg(not(unix))]
    {
        Ok(async {
            let _ = tokio::signal::ctrl_c().await;
        })
    }
}
