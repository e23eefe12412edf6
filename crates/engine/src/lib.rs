//! The load engine: runs a scenario's plan against real targets and records every outcome.
//!
//! Like wrk, each worker is an OS thread with its own single-threaded tokio runtime and its
//! own recorder, so the hot path takes no locks; recorders merge exactly at the end (wrk2's
//! model). The schedule comes from the pure functions of `loadlab_scenario::plan`; latency in
//! the open model is measured from the intended send time, never from when we got round to it.
//!
//! The transport seam (`Transport`) takes a rendered request — method, target, header fields,
//! body — and gives back status, header fields and, when a step needs it, the body; HTTP/1.1
//! and HTTP/2 framing live inside `http`.
//!
//! Crates chosen: `tokio` (the standard async runtime; current-thread flavour per worker),
//! `httparse` (the zero-copy HTTP/1.1 parser under hyper) for a purpose-built HTTP/1.1 client
//! that writes pre-encoded requests and discards bodies without allocation — hyper's client
//! costs several times wrk's CPU per request; `h2` (the HTTP/2 implementation under hyper,
//! hyperium's, with flow control, SETTINGS and GOAWAY handled) driven directly rather than
//! through hyper's client, which adds a dispatch task and body types per request for no
//! gain here (measured in `bench/h2-clients.md`); `rustls` + `tokio-rustls` for TLS and
//! ALPN with `webpki-roots`, so no system OpenSSL is needed. `tokio-tungstenite` (the
//! WebSocket library most of the Rust ecosystem builds on, over `tungstenite`, which the
//! report's tests already use) for WebSocket sessions: it runs over any byte stream, so a
//! session uses the engine's own TCP and TLS connections (`Transport::open_stream`), it
//! answers pings and enforces frame and message size limits; `futures-util` for its
//! `Stream`/`Sink` methods, `base64` for binary messages written as text.

mod acquire;
mod cancel;
mod coordinator;
mod exchange;
mod executor;
mod flow;
mod flow_picker;
pub mod grpc;
mod grpc_reply;
mod health;
pub mod http;
mod idle_pool;
mod inspect;
mod limits;
mod origin;
mod prepare;
mod record_meta;
mod render;
mod request;
mod resources;
mod run;
mod server_header;
mod steering;
pub mod stream;
mod trace;
mod transport;
mod vu;
mod ws;

pub use cancel::{Cancel, StopCause};
pub use coordinator::{Progress, ProgressCallback};
pub use health::GeneratorUsage;
pub use prepare::{PreparedRequest, PreparedScenario};
pub use record_meta::load_info;
pub use request::{RenderedRequest, RequestParts};
pub use run::{run, EngineError, RunOptions, RunOutput};
pub use server_header::ServerHeader;
pub use steering::Steering;
pub use transport::{Failure, Response, ResponseData, Transport};
