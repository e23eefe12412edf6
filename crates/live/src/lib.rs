//! What watches a run while it goes: one [`frame::LiveFrame`] per interval, built from the
//! run record's interval (the same numbers the summary and the reports are derived from), for
//! the dashboard and the live outputs.
//!
//! No tokio and no engine here: observers run on the engine coordinator's thread through
//! [`loadlab_record::LiveObserver`], and hand frames to their own threads.
//!
//! Crates chosen: `serde`/`serde_json` for the frame's documented JSON form and the `json`
//! output;
//! `loadlab-analysis` to judge the scenario's thresholds on the summary so far. The dashboard's
//! HTTP server is std (`TcpListener`, a thread per connection): four GET routes and one
//! server-sent-event stream need no HTTP crate and no async runtime, and the crate must stay
//! off tokio. `libc` reads the coordinator thread's CPU clock, to measure the dashboard's cost.
//! For the outputs: `prost` to encode the protobuf of Prometheus remote write and OTLP from message
//! structs declared by hand (no protoc, no gRPC stack); `snap` for the snappy block format
//! remote write requires; `loadlab-http-client` (reqwest's blocking client, the workspace's
//! one HTTP client outside the load) for the outputs and the control API's client: each output sends from its own plain
//! thread, and this crate's code stays synchronous (reqwest runs its runtime on a thread of
//! its own). `loadlab-scenario` for the output specs (`--out`, `outputs:`).

pub mod control_client;
pub mod dashboard;
pub mod frame;
pub mod outputs;
pub mod tap;

pub use frame::{FrameBuilder, LiveFrame, Quantiles, StepFrame};
pub use outputs::{open_all, OutputOptions, OutputReport, OutputTap};
pub use tap::LiveTap;
