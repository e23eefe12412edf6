//! The scenario language: what a load test does, parsed from YAML or built from CLI flags.
//!
//! Every entry point (a scenario file, `loadlab run --url ...`) ends up as one [`Scenario`];
//! every load shape becomes a [`Plan`]. Parsing reports errors as `file:line:column: field:
//! message` with a fix, so a user never has to read a stack trace.
//!
//! Crates chosen: `serde` + `serde_yaml_ng` (the maintained fork of `serde_yaml`) for typed
//! deserialization with line/column errors; `yaml-rust2` for an event stream with positions so
//! that checks made after deserialization can still name the line; `strsim` for "did you
//! mean" suggestions; `url` to validate targets; `regex` for regex captures and monitor
//! patterns (checked here, compiled again by the engine and the monitor); `base64` and
//! `percent-encoding` for credentials written in URLs (see `credentials`); `sha2` for the
//! plan fingerprint (see `describe`). JSONPath and CSV are small subsets written in this
//! crate (see `jsonpath` and `data` for why). `loadlab-metrics` for the names of what is
//! measured that a threshold may refer to (the request phases), so both read one type.
//! For `grpc:` steps: `protox` compiles `.proto` files at load time in pure Rust (no
//! `protoc`), `prost-reflect` holds the descriptors and checks a message against its type by
//! the canonical protobuf JSON mapping (see `grpc`), and `miette` (protox's own diagnostic
//! trait) gives the `line:column` of a `.proto` compile error.
//!
//! Every bound on what a file or a flag may ask for lives in [`limits`] and is checked when
//! the scenario is loaded, for files and flags alike (`validate::resolved`).

mod addresses;
mod check_templates;
pub mod credentials;
mod data;
mod describe;
mod error;
pub mod grpc;
pub mod jsonpath;
pub mod limits;
mod load_flags;
mod locate;
mod mistake;
mod model;
pub mod monitor;
mod output;
mod parse;
pub mod plan;
mod prescan;
mod raw;
mod raw_grpc;
mod raw_stream;
mod raw_values;
mod raw_ws;
mod segment;
pub mod steer;
mod step_parts;
pub mod stream;
pub mod study;
mod suggest;
pub mod template;
pub mod threshold;
mod threshold_live;
pub mod units;
mod url_env;
mod validate;
pub mod ws;

pub use addresses::{check_target, check_target_credentials, is_loopback, parse_addresses};
pub use credentials::Credentials;
pub use data::parse_csv;
pub use describe::redact_url;
pub use error::{ErrorLocation, ScenarioError};
pub use load_flags::LoadFlags;
pub use model::{
    collect_requests, collect_ws, step_captures, Body, BurstLoad, Capture, CaptureSource, Check,
    ClosedLoad, ConnectionPolicy, DataSet, Defaults, Flow, Http2Client, HttpConfig, HttpVersion,
    Load, Method, OpenLoad, Pick, RateStage, RequestStep, Scenario, ServerLatency, Step, ThinkTime,
    VuStage, DEFAULT_MAX_BODY, DEFAULT_MAX_STREAMS, DEFAULT_TIMEOUT,
};
pub use monitor::{parse_monitor_flag, MonitorConfig, MonitorFlag};
pub use output::{OutputKind, OutputSpec};
pub use parse::{parse_monitor_section, UrlTest, STDIN_NAME};
pub use plan::Plan;
pub use threshold::Threshold;
pub use ws::{WsAction, WsExpect, WsMatch, WsMessage, WsStep, DEFAULT_WS_MAX_MESSAGE};
