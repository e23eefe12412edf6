//! A rendered request as the purpose-built client's HPACK header block, by the same rules as
//! the `h2` crate's heads (`http/h2/request.rs`: its `target`, `fields` and `content_length`).

use crate::http::h2 as http2;
use crate::http::h2wire::{HeaderBlock, KeepHeaders};
use crate::request::RenderedRequest;
use crate::server_header::ServerHeader;
use crate::transport::Failure;
use bytes::Bytes;
use http::uri::Authority;
use loadlab_metrics::ErrorKind;

/// A request's encoded head and its body; cloning shares both.
#[derive(Debug, Clone)]
pub struct WireHead {
    pub block: HeaderBlock,
    pub body: Option<Bytes>,
    /// The response header the server's own time is read from, the only one kept unless
    /// the step keeps them all.
    pub server_header: KeepHeaders,
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
    let server_header = match &req.server {
        ServerHeader::Off => KeepHeaders::None,
        ServerHeader::ServerTiming => KeepHeaders::named("server-timing"),
        ServerHeader::Named(name) => KeepHeaders::named(name),
    };
    Ok(WireHead {
        block,
        body,
        server_header,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use loadlab_scenario::Method;

    /// The fields a block decodes to, as (name, value) text.
    fn decoded(block: &[u8]) -> Vec<(String, String)> {
        let pairs = loona_hpack::Decoder::new().decode(block).unwrap();
        pairs
            .into_iter()
            .map(|(n, v)| (String::from_utf8(n).unwrap(), String::from_utf8(v).unwrap()))
            .collect()
    }

    #[test]
    fn heads_follow_the_h2_heads_rules() {
        let authority = Authority::from_static("127.0.0.1:8080");
        let p = http2::parts(
            "/a?b=1",
            &[
                ("User-Agent", "loadlab"),
                ("Connection", "keep-alive"),
                ("TE", "trailers"),
                ("Content-Length", "99"),
            ],
            Some("{}"),
        );
        let req = http2::rendered(&p, Method::Post);
        let head = build(&req, false, &authority).unwrap();
        let want = [
            (":method", "POST"),
            (":scheme", "http"),
            (":authority", "127.0.0.1:8080"),
            (":path", "/a?b=1"),
            ("user-agent", "loadlab"),
            ("te", "trailers"),
            ("content-length", "2"),
        ];
        let got = decoded(head.block.as_bytes());
        assert_eq!(got.len(), want.len(), "{got:?}");
        for ((n, v), (wn, wv)) in got.iter().zip(want) {
            assert_eq!((n.as_str(), v.as_str()), (wn, wv));
        }
        // The same header fields as the `h2` crate's head, in the same order.
        let h2 = http2::build(&req, false, &authority).unwrap().request();
        let names: Vec<&str> = h2.headers().keys().map(|k| k.as_str()).collect();
        let regular: Vec<&str> = got[4..].iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, regular);
        assert_eq!(head.body.as_deref(), Some(&b"{}"[..]));
        // The scenario's Host is the authority; an empty POST says its length.
        let p = http2::parts("/", &[("Host", "api.example:443")], None);
        let head = build(&http2::rendered(&p, Method::Post), true, &authority).unwrap();
        let got = decoded(head.block.as_bytes());
        assert!(got.contains(&(":authority".into(), "api.example:443".into())));
        assert!(got.contains(&(":scheme".into(), "https".into())));
        assert!(got.contains(&("content-length".into(), "0".into())));
        // A name HTTP/2 cannot carry fails the request, never the run.
        let p = http2::parts("/", &[("Bad Name", "x")], None);
        let err = build(&http2::rendered(&p, Method::Get), true, &authority).unwrap_err();
        assert_eq!(err.kind, ErrorKind::InvalidRequest);
    }
}
