//! The `grpc:` step exactly as written: serde types that reject unknown keys with a position.

use crate::raw_values::Scalar;
use crate::units::de_opt_duration;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::time::Duration;

/// `grpc: {proto: ..., call: pkg.Service/Method, message: {...}, metadata: {...}, target: URL,
/// timeout: 2s}`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawGrpc {
    pub proto: Option<String>,
    pub call: Option<String>,
    pub message: Option<serde_json::Value>,
    #[serde(default)]
    pub metadata: BTreeMap<String, Scalar>,
    pub target: Option<String>,
    #[serde(default, deserialize_with = "de_opt_duration")]
    pub timeout: Option<Duration>,
}

/// `grpc_status: OK`, `grpc_status: 14`, `grpc_status: [OK, not_found]`.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum RawGrpcStatus {
    One(Scalar),
    Many(Vec<Scalar>),
}
