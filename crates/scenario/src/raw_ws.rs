//! The `ws:` step exactly as written: serde types that reject unknown keys with a position.

use crate::raw_values::{ByteSize, RawCapture, Scalar, ThinkSpec};
use crate::units::de_opt_duration;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::time::Duration;

/// `ws: {url: /ws/echo, headers: {...}, steps: [...], close_after: 10s}`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawWs {
    pub url: Option<String>,
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    #[serde(default)]
    pub steps: Vec<RawWsAction>,
    #[serde(default, deserialize_with = "de_opt_duration")]
    pub close_after: Option<Duration>,
    #[serde(default, deserialize_with = "de_opt_duration")]
    pub timeout: Option<Duration>,
    pub max_message: Option<ByteSize>,
    #[serde(default)]
    pub tags: BTreeMap<String, Scalar>,
}

/// One action of a session: exactly one of its keys.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawWsAction {
    pub send: Option<RawWsSend>,
    pub expect: Option<RawWsExpect>,
    pub capture: Option<BTreeMap<String, RawCapture>>,
    pub think: Option<ThinkSpec>,
}

/// `send: 'text'`, `send: {text: ...}`, `send: {binary: <base64>}` or `send: {json: {...}}`.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum RawWsSend {
    Text(String),
    Form(RawWsSendForm),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawWsSendForm {
    pub text: Option<String>,
    pub binary: Option<String>,
    pub json: Option<serde_json::Value>,
}

/// `expect: {json: "$.status", equals: "received", within: 2s}`, `{contains: "..."}`, `{}`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawWsExpect {
    pub json: Option<String>,
    pub equals: Option<serde_json::Value>,
    pub contains: Option<String>,
    #[serde(default, deserialize_with = "de_opt_duration")]
    pub within: Option<Duration>,
}
