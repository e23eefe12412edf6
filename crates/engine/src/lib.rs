//! The load engine: runs a scenario's plan against real targets and records every outcome.
//!
//! Like wrk, each worker is an OS thread with its own single-threaded tokio runtime and its
//! own recorder, so the hot path takes no locks; recorders merge exactly at the end (wrk2's
//! model). The schedule comes from the pure functions of `loadlab_scenario::plan`; latency in
//! the open model is measured from the intended send time, never from when we got round to it.
//!
//! Crates chosen: `tokio` (the standard async runtime; current-thread flavour per worker),
//! `httparse` (the zero-copy HTTP/1.1 parser under hyper) for a purpose-built HTTP/1.1 client
//! that writes pre-serialized requests and discards bodies without allocation — hyper's client
//! costs several times wrk's CPU per request; `rustls` + `tokio-rustls` for TLS with
//! `webpki-roots`, so no system OpenSSL is needed.

mod cancel;
mod coordinator;
mod exchange;
mod executor;
mod flow;
mod health;
pub mod http;
mod limits;
mod origin;
mod prepare;
mod record_meta;
mod render;
mod resources;
mod run;
mod server_header;
mod trace;
mod transport;
mod vu;

pub use cancel::Cancel;
pub use coordinator::{Progress, ProgressCallback};
pub use health::GeneratorUsage;
pub use prepare::{PreparedRequest, PreparedScenario};
pub use record_meta::load_info;
pub use run::{run, EngineError, RunOptions, RunOutput};
pub use transport::{Failure, Response, ResponseData, Transport};
