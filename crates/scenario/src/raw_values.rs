//! The values the scenario file's sections share as written (sizes, scalars, captures, think
//! times): their own module, so that the HTTP, gRPC, WebSocket and stream sections
//! (`raw`, `raw_grpc`, `raw_ws`, `raw_stream`) use them without depending on each other.

use serde::Deserialize;

#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum ByteSize {
    Bytes(u64),
    Text(String),
}

/// A YAML scalar written where text is expected (`page: 2`, `debug: true`).
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum Scalar {
    Bool(bool),
    Int(i64),
    Float(f64),
    Text(String),
}

impl Scalar {
    pub fn into_text(self) -> String {
        match self {
            Scalar::Bool(b) => b.to_string(),
            Scalar::Int(i) => i.to_string(),
            Scalar::Float(f) => f.to_string(),
            Scalar::Text(t) => t,
        }
    }
}

/// `"$.token"`, `{header: X}` or `{regex: "...", group: 1}`.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum RawCapture {
    JsonPath(String),
    Header { header: String },
    Regex { regex: String, group: Option<usize> },
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum ThinkSpec {
    Seconds(f64),
    Text(String),
}
