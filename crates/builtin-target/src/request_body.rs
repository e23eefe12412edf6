//! Reading a request's body, capped at [`MAX_BODY_BYTES`], and a JSON object from it: the
//! REST handlers and the streaming endpoints read bodies the same way and answer a bad one
//! with the same JSON error.

use bytes::Bytes;
use http_body_util::{BodyExt, LengthLimitError, Limited};
use hyper::body::Incoming;
use hyper::header::CONTENT_LENGTH;
use hyper::{Request, StatusCode};
use serde_json::{Map, Value};

use crate::response::{self, Resp};

/// Largest request body accepted; larger ones get 413.
pub const MAX_BODY_BYTES: usize = 1024 * 1024;

/// A request the client got wrong; becomes a JSON error response.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub(crate) struct Reject {
    status: StatusCode,
    message: String,
}

impl Reject {
    fn new(status: StatusCode, message: impl Into<String>) -> Self {
        Reject {
            status,
            message: message.into(),
        }
    }

    pub(crate) fn into_response(self) -> Resp {
        response::error(self.status, &self.message)
    }
}

/// Reads a body that must be a JSON object (a streaming endpoint's request); an error
/// answer otherwise.
pub(crate) async fn read_json_body(req: Request<Incoming>) -> Result<Value, Resp> {
    let body = read_body(req).await.map_err(Reject::into_response)?;
    json_object(&body)
        .map(Value::Object)
        .map_err(Reject::into_response)
}

/// Reads the whole body, at most [`MAX_BODY_BYTES`].
pub(crate) async fn read_body(req: Request<Incoming>) -> Result<Bytes, Reject> {
    let too_large = || {
        Reject::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "request body larger than 1 MiB",
        )
    };
    let declared = req
        .headers()
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > MAX_BODY_BYTES as u64) {
        return Err(too_large());
    }
    match Limited::new(req.into_body(), MAX_BODY_BYTES)
        .collect()
        .await
    {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(e) if e.downcast_ref::<LengthLimitError>().is_some() => Err(too_large()),
        Err(_) => Err(Reject::new(
            StatusCode::BAD_REQUEST,
            "could not read the request body",
        )),
    }
}

/// Parses a body that must be a JSON object.
pub(crate) fn json_object(body: &[u8]) -> Result<Map<String, Value>, Reject> {
    match serde_json::from_slice::<Value>(body) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(Reject::new(
            StatusCode::BAD_REQUEST,
            "request body must be a JSON object",
        )),
        Err(e) => Err(Reject::new(
            StatusCode::BAD_REQUEST,
            format!("request body is not valid JSON: {e}"),
        )),
    }
}
