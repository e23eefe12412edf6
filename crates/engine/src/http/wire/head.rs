//! A rendered request as the purpose-built client's HPACK header block, by the same rules as
//! the `h2` crate's heads (`http/h2/request.rs`: its `target`, `fields` and `content_length`).

use crate::http::h2 as http2;
use crate::http::h2wire::HeaderBlock;
use crate::request::RenderedRequest;
use crate::transport::Failure;
use bytes::Bytes;
use http::uri::Authority;
use loadlab_metrics::ErrorKind;

/// A request's encoded head and its body; cloning shares both.
#[derive(Debug, Clone)]
pub struct WireHead {
    pub block: HeaderBlock,
    pub body: Option<Bytes>,
}

/// Builds the head of `req`; `tls` chooses the `:scheme`, `authority` is the origin's.
pub fn build(
    req: &RenderedRequest<'_>,
    tls: bool,
    authority: &Authority,
) -> Result<WireHead, Failure> {
    let invalid = |what: String| Failure::new(ErrorKind::InvalidRequest, what);
    let (authority, path) = http2::target(req, authority)?;
    let body = req.parts.body().map(Bytes::copy_from_slice);
    let length = http2::content_length(req, body.as_deref()).map(|n| n.to_string());
    let mut fields = Vec::with_capacity(req.parts.headers().len() + 1);
    for (name, value) in http2::fields(req) {
        let name = std::str::from_utf8(name).map_err(|_| {
            invalid(format!(
                "`{}` is not a valid header name",
                String::from_utf8_lossy(name)
            ))
        })?;
        fields.push((name, value));
    }
    if let Some(n) = &length {
        fields.push(("content-length", n.as_bytes()));
    }
    let scheme = if tls { "https" } else { "http" };
    let block = HeaderBlock::new(
        req.method.as_str(),
        scheme,
        authority.as_str(),
        path.as_str(),
        fields,
    )
    .map_err(|e| invalid(format!("the request cannot be sent as HTTP/2: {e}")))?;
    Ok(WireHead { block, body })
}
