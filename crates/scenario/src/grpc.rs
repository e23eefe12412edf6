//! The `grpc:` step: one gRPC call (unary or server streaming) by its full method name, with
//! its message written as YAML/JSON. It becomes a request step — `POST /package.Service/Method`
//! over HTTP/2 (h2c on `http://`, ALPN `h2` on `https://`) whose JSON body is the message —
//! carrying a [`GrpcCall`], so templates, checks, captures, timeouts and the record work as
//! for HTTP, and the engine encodes the message to protobuf and reads `grpc-status`.
//!
//! Message types come from the `.proto` file named by `proto:` (relative to the scenario file),
//! compiled at load time by `protox` (pure Rust, no `protoc`) into a `prost-reflect`
//! descriptor pool; with no `proto:` they are asked of the server's reflection service before
//! the run. Why these crates: `protox` is the maintained pure-Rust protobuf compiler (used by
//! `tonic-build` users to drop `protoc`), and `prost-reflect` is its companion for dynamic
//! messages with the canonical protobuf JSON mapping (serde), on the `prost` the workspace
//! already uses.

use loadlab_metrics::GrpcCode;

/// The gRPC side of a request step made from a `grpc:` step.
#[derive(Debug, Clone, PartialEq)]
pub struct GrpcCall {
    /// `package.Service`, e.g. `permits.v1.Permits`.
    pub service: String,
    /// The method's name in its service, e.g. `Create`.
    pub method: String,
    /// The method and its message types, from the `.proto` file; `None` when they are to be
    /// asked of the server's reflection service before the run.
    pub descriptor: Option<prost_reflect::MethodDescriptor>,
    /// The `.proto` file as the scenario names it (for messages); `None`: reflection.
    pub proto: Option<String>,
}

impl GrpcCall {
    /// The request's `:path`: `/package.Service/Method`.
    pub fn path(&self) -> String {
        format!("/{}/{}", self.service, self.method)
    }

    /// `package.Service/Method`, as the scenario writes `call:`.
    pub fn full_name(&self) -> String {
        format!("{}/{}", self.service, self.method)
    }

    /// Whether the server answers with a stream of messages (known once the descriptor is).
    pub fn server_streaming(&self) -> Option<bool> {
        self.descriptor.as_ref().map(|m| m.is_server_streaming())
    }
}

/// The statuses a call must end with to pass, from `check: { grpc_status: ... }`; `OK` when
/// the step has no such check.
pub fn expected_statuses(checks: &[crate::Check]) -> Vec<GrpcCode> {
    checks
        .iter()
        .find_map(|c| match c {
            crate::Check::GrpcStatus(codes) => Some(codes.clone()),
            _ => None,
        })
        .unwrap_or_else(|| vec![GrpcCode::Ok])
}
