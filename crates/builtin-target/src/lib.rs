//! `loadlab-builtin-target`: the built-in system under test, so that the demo, the examples and
//! the end-to-end tests of loadlab have a realistic service to load without any setup.
//!
//! It offers a health check, a ping, a sign-in that issues bearer tokens (new at each sign-in)
//! and a few small CRUD endpoints (an application is readable by its creator only, so a
//! replayed token or another user's id fails and scenarios must correlate; docs/target.md),
//! all behind a tunable capacity model (workers, bounded queue, fixed or exponential service
//! time, injected errors) so that it saturates like a real service: latency grows with
//! queueing, and overload turns into 503s.
//!
//! It also shows what it is doing, as a real service would: `GET /metrics` in the
//! Prometheus text format (requests by route and status, in flight, queue length, handling
//! and service-time histograms, process and own-thread CPU and memory), and a
//! `Server-Timing: app;dur=<ms>` header on every `/api/*` response, so loadlab's monitor
//! and its client-vs-server latency split can be shown without any other service.
//!
//! WebSocket endpoints (`/ws/echo`, `/ws/subscribe`: see `ws`) count their sessions and
//! messages in `/metrics`; `tokio-tungstenite` runs them on hyper's upgraded connections.
//!
//! gRPC (`permits.v1.Permits` of examples/proto/permits.proto, and server reflection) is
//! served on the same port over HTTP/2, without tonic: `prost` (derive) for the messages,
//! which are few and fixed, and the 5-byte framing and trailers by hand on hyper's bodies
//! (`grpc`), so the target adds no second HTTP/2 server; `protox` compiles the embedded
//! .proto at start for reflection, with no `protoc` to install. Calls, statuses and
//! messages are counted in `/metrics`.
//!
//! It speaks HTTP/1.1 and HTTP/2 on the same port: h2c with prior knowledge over plain TCP
//! (hyper-util's `auto` server tells them apart by the connection preface), and, with TLS
//! (`TargetConfig::tls`: a given certificate or a self-signed one made at start), whatever
//! ALPN settles (`h2` or `http/1.1`).
//!
//! Why hyper and tokio: the target must never be the bottleneck of a measurement, so it
//! uses the same proven, zero-copy HTTP/1.1 and HTTP/2 implementations (hyper 1.x with
//! keep-alive and pipelining, `h2` underneath) that production Rust services run on, driven
//! by tokio whose timers and fair semaphore give the capacity model exact, cheap building
//! blocks; `rustls` for TLS and `rcgen` for the self-signed certificate. A single thread
//! serves tens of thousands of requests per second on loopback.
//!
//! ```no_run
//! let target = loadlab_builtin_target::spawn(loadlab_builtin_target::TargetConfig {
//!     listen: "127.0.0.1:0".parse().unwrap(),
//!     workers: Some(4),
//!     service_time: std::time::Duration::from_millis(20),
//!     ..Default::default()
//! })?;
//! println!("serving on {}", target.url());
//! target.shutdown();
//! # Ok::<(), loadlab_builtin_target::TargetError>(())
//! ```

mod auth;
mod capacity;
mod config;
mod error;
mod grpc;
mod handlers;
mod llm;
mod metrics;
mod request_body;
mod response;
mod routes;
mod server;
mod signups;
mod store;
mod tls;
mod ws;

pub use capacity::sample_service_time;
pub use config::{
    Degrade, ParseServiceDistError, ServiceDist, Stall, TargetConfig, DEFAULT_LISTEN,
    DEFAULT_THREADS,
};
pub use error::TargetError;
pub use llm::LlmConfig;
pub use request_body::MAX_BODY_BYTES;
pub use server::{run_until_ctrl_c, spawn, TargetHandle};
pub use store::MAX_APPLICATIONS;
pub use tls::TargetTls;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_grpc;
