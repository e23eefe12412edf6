//! A `grpc:` step prepared for the run: its message types, its deadline sent as
//! `grpc-timeout`, and its message encoded once when it holds no template.

use super::PrepareError;
use crate::grpc::{encode_rendered, PreparedGrpc};
use crate::request::RequestParts;
use loadlab_scenario::grpc::expected_statuses;
use loadlab_scenario::RequestStep;
use std::sync::Arc;
use std::time::Duration;

/// The step's call as the engine runs it; `None` for an HTTP step.
pub(super) fn prepared_call(r: &RequestStep) -> Result<Option<PreparedGrpc>, PrepareError> {
    let Some(call) = &r.grpc else {
        return Ok(None);
    };
    let method = call
        .descriptor
        .as_ref()
        .ok_or_else(|| PrepareError::Template {
            step: r.name.clone(),
            message: format!(
                "the types of `{}` are unknown (no .proto, and reflection did not run)",
                call.full_name()
            ),
        })?;
    Ok(Some(PreparedGrpc {
        input: method.input(),
        output: method.output(),
        server_streaming: method.is_server_streaming(),
        expected: expected_statuses(&r.checks),
        fixed_payload: None,
    }))
}

/// The `grpc-timeout` header telling the server the call's deadline (the step's timeout), in
/// milliseconds: the spec allows at most 8 digits.
pub(super) fn timeout_header(timeout: Duration) -> (String, String) {
    let ms = timeout.as_millis().clamp(1, 99_999_999);
    ("grpc-timeout".into(), format!("{ms}m"))
}

/// Replaces the JSON body of a request rendered once by its encoded message.
pub(super) fn encode_fixed(
    r: &RequestStep,
    call: &mut PreparedGrpc,
    parts: &mut RequestParts,
) -> Result<(), PrepareError> {
    let payload = encode_rendered(call, parts).map_err(|message| PrepareError::Template {
        step: r.name.clone(),
        message,
    })?;
    call.fixed_payload = Some(payload);
    Ok(())
}

pub(super) fn shared(call: Option<PreparedGrpc>) -> Option<Arc<PreparedGrpc>> {
    call.map(Arc::new)
}
