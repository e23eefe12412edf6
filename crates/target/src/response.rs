//! Building JSON responses in one place, so every endpoint answers with the same headers
//! and error shape (`{"error": "..."}`).

use bytes::Bytes;
use http_body_util::Full;
use hyper::header::{HeaderValue, ALLOW, CONTENT_TYPE};
use hyper::{Response, StatusCode};
use serde::Serialize;

/// The response type of every endpoint.
pub type Resp = Response<Full<Bytes>>;

const JSON: HeaderValue = HeaderValue::from_static("application/json");

/// A response with a ready-made JSON body.
pub fn raw_json(status: StatusCode, body: impl Into<Bytes>) -> Resp {
    let mut resp = Response::new(Full::new(body.into()));
    *resp.status_mut() = status;
    resp.headers_mut().insert(CONTENT_TYPE, JSON);
    resp
}

/// A response serializing `value`.
pub fn json<T: Serialize + ?Sized>(status: StatusCode, value: &T) -> Resp {
    match serde_json::to_vec(value) {
        Ok(body) => raw_json(status, body),
        Err(_) => error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "cannot serialize response",
        ),
    }
}

/// `{"error": message}` with the given status.
pub fn error(status: StatusCode, message: &str) -> Resp {
    let body = serde_json::json!({ "error": message }).to_string();
    raw_json(status, body)
}

/// 405 with the `Allow` header naming the method that works.
pub fn method_not_allowed(allow: &'static str) -> Resp {
    let mut resp = error(
        StatusCode::METHOD_NOT_ALLOWED,
        "method not allowed for this endpoint",
    );
    resp.headers_mut()
        .insert(ALLOW, HeaderValue::from_static(allow));
    resp
}
