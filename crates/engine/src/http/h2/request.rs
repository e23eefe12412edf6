//! A rendered request as an HTTP/2 request head: pseudo-headers from the method, the origin
//! (or the scenario's `Host`) and the target; header names in lower case; the fields HTTP/2
//! forbids (connection-specific ones) left out, as curl does.

use crate::request::RenderedRequest;
use crate::transport::Failure;
use bytes::Bytes;
use http::header::{HeaderName, HeaderValue, CONTENT_LENGTH};
use http::uri::{Authority, PathAndQuery, Scheme, Uri};
use loadlab_metrics::ErrorKind;
use loadlab_scenario::Method;

/// Everything an HTTP/2 request needs; built once for a request without templates.
#[derive(Debug, Clone)]
pub struct Head {
    method: http::Method,
    uri: Uri,
    headers: http::HeaderMap,
    body: Option<Bytes>,
}

impl Head {
    /// The request head to send (a clone: `h2` takes it by value).
    pub fn request(&self) -> http::Request<()> {
        let mut r = http::Request::new(());
        *r.method_mut() = self.method.clone();
        *r.uri_mut() = self.uri.clone();
        *r.version_mut() = http::Version::HTTP_2;
        *r.headers_mut() = self.headers.clone();
        r
    }

    pub fn body(&self) -> Option<Bytes> {
        self.body.clone()
    }
}

/// Header fields that describe an HTTP/1.1 connection, not a request: HTTP/2 forbids them
/// (RFC 9113 §8.2.2). `Host` becomes `:authority`.
fn connection_specific(name: &[u8], value: &[u8]) -> bool {
    const DROPPED: [&[u8]; 6] = [
        b"connection",
        b"keep-alive",
        b"proxy-connection",
        b"transfer-encoding",
        b"upgrade",
        b"host",
    ];
    if name.eq_ignore_ascii_case(b"te") {
        return !value.trim_ascii().eq_ignore_ascii_case(b"trailers");
    }
    DROPPED.iter().any(|d| name.eq_ignore_ascii_case(d))
}

fn invalid(what: String) -> Failure {
    Failure::new(ErrorKind::InvalidRequest, what)
}

/// The `:authority` (the scenario's `Host`, or the origin's `authority`) and `:path` of `req`.
pub fn target(
    req: &RenderedRequest<'_>,
    authority: &Authority,
) -> Result<(Authority, PathAndQuery), Failure> {
    let authority = match req.host() {
        Some(host) => Authority::try_from(host.trim_ascii()).map_err(|e| {
            invalid(format!(
                "the Host header `{}` cannot be an HTTP/2 :authority: {e}",
                String::from_utf8_lossy(host)
            ))
        })?,
        None => authority.clone(),
    };
    let path = PathAndQuery::try_from(req.parts.target()).map_err(|e| {
        invalid(format!(
            "`{}` is not a valid request target: {e}",
            String::from_utf8_lossy(req.parts.target())
        ))
    })?;
    Ok((authority, path))
}

/// The scenario's header fields HTTP/2 sends: connection-specific ones left out, and any
/// `content-length` (the transport frames the body: see [`content_length`]).
pub fn fields<'r>(req: &'r RenderedRequest<'_>) -> impl Iterator<Item = (&'r [u8], &'r [u8])> {
    req.parts.headers().filter(|(name, value)| {
        !connection_specific(name, value) && !name.eq_ignore_ascii_case(b"content-length")
    })
}

/// The `content-length` to send with `body`: its length, or 0 for an empty body of a method
/// that expects one.
pub fn content_length(req: &RenderedRequest<'_>, body: Option<&[u8]>) -> Option<usize> {
    match body {
        Some(b) => Some(b.len()),
        None if req.expects_body() => Some(0),
        None => None,
    }
}

/// Builds the head of `req`; `tls` chooses the `:scheme`, `authority` is the origin's.
pub fn build(req: &RenderedRequest<'_>, tls: bool, authority: &Authority) -> Result<Head, Failure> {
    let (authority, path) = target(req, authority)?;
    let mut uri = http::uri::Parts::default();
    uri.scheme = Some(if tls { Scheme::HTTPS } else { Scheme::HTTP });
    uri.authority = Some(authority);
    uri.path_and_query = Some(path);
    let uri = Uri::from_parts(uri).map_err(|e| invalid(format!("invalid request URI: {e}")))?;
    let mut headers = http::HeaderMap::with_capacity(req.parts.headers().len() + 1);
    for (name, value) in fields(req) {
        let name = HeaderName::from_bytes(name).map_err(|e| {
            invalid(format!(
                "`{}` is not a valid header name: {e}",
                String::from_utf8_lossy(name)
            ))
        })?;
        let value = HeaderValue::from_bytes(value)
            .map_err(|e| invalid(format!("the value of header `{name}` is not valid: {e}")))?;
        headers.append(name, value);
    }
    let body = req.parts.body().map(Bytes::copy_from_slice);
    if let Some(n) = content_length(req, body.as_deref()) {
        headers.insert(CONTENT_LENGTH, HeaderValue::from(n));
    }
    Ok(Head {
        method: method(req.method),
        uri,
        headers,
        body,
    })
}

fn method(m: Method) -> http::Method {
    match m {
        Method::Get => http::Method::GET,
        Method::Post => http::Method::POST,
        Method::Put => http::Method::PUT,
        Method::Patch => http::Method::PATCH,
        Method::Delete => http::Method::DELETE,
        Method::Head => http::Method::HEAD,
        Method::Options => http::Method::OPTIONS,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::request::RequestParts;

    /// Request parts of `target`, `headers` and `body`, as a scenario renders them.
    pub(crate) fn parts(
        target: &str,
        headers: &[(&str, &str)],
        body: Option<&str>,
    ) -> RequestParts {
        let mut p = RequestParts::default();
        let ok = Ok::<(), ()>(());
        p.write_target(|b| {
            b.extend_from_slice(target.as_bytes());
            ok
        })
        .unwrap();
        for (n, v) in headers {
            p.write_header(n.as_bytes(), |b| {
                b.extend_from_slice(v.as_bytes());
                ok
            })
            .unwrap();
        }
        if let Some(body) = body {
            p.write_body(|b| {
                b.extend_from_slice(body.as_bytes());
                ok
            })
            .unwrap();
        }
        p
    }

    pub(crate) fn rendered(p: &RequestParts, method: Method) -> RenderedRequest<'_> {
        RenderedRequest {
            step: 0,
            origin: 0,
            method,
            parts: p,
            fixed: true,
            close: false,
            max_body: 1,
            server: &crate::server_header::ServerHeader::Off,
            deadline: tokio::time::Instant::now(),
            grpc: false,
        }
    }

    #[test]
    fn heads_follow_http2_rules() {
        let authority = Authority::from_static("127.0.0.1:8080");
        let p = parts(
            "/a?b=1",
            &[
                ("User-Agent", "loadlab"),
                ("Connection", "keep-alive"),
                ("X-Trace", "1"),
                ("TE", "trailers"),
                ("Content-Length", "99"),
            ],
            Some("{}"),
        );
        let head = build(&rendered(&p, Method::Post), false, &authority).unwrap();
        let r = head.request();
        assert_eq!(r.uri().to_string(), "http://127.0.0.1:8080/a?b=1");
        assert_eq!(r.method(), http::Method::POST);
        let names: Vec<&str> = r.headers().keys().map(|k| k.as_str()).collect();
        assert_eq!(names, ["user-agent", "x-trace", "te", "content-length"]);
        assert_eq!(r.headers()["content-length"], "2");
        assert_eq!(head.body().as_deref(), Some(&b"{}"[..]));
        // The scenario's Host is the authority; an empty POST says its length.
        let p = parts("/", &[("Host", "api.example:443")], None);
        let head = build(&rendered(&p, Method::Post), true, &authority).unwrap();
        assert_eq!(head.request().uri().to_string(), "https://api.example:443/");
        assert_eq!(head.request().headers()["content-length"], "0");
        // A name HTTP/2 cannot carry fails the request, never the run.
        let p = parts("/", &[("Bad Name", "x")], None);
        let err = build(&rendered(&p, Method::Get), true, &authority).unwrap_err();
        assert_eq!(err.kind, ErrorKind::InvalidRequest);
    }
}
