//! A rendered request as HTTP/1.1 bytes: request line, `Host` (unless the scenario set one),
//! the header fields in order, `Connection: close` when asked, and the body's framing.

use crate::request::RenderedRequest;
use std::io::Write as _;

/// Appends `req` to `out`; `authority` is the origin's `Host` value.
pub fn encode(req: &RenderedRequest<'_>, authority: &[u8], out: &mut Vec<u8>) {
    out.extend_from_slice(req.method.as_str().as_bytes());
    out.push(b' ');
    out.extend_from_slice(req.parts.target());
    out.extend_from_slice(b" HTTP/1.1\r\n");
    if req.host().is_none() {
        out.extend_from_slice(b"Host: ");
        out.extend_from_slice(authority);
        out.extend_from_slice(b"\r\n");
    }
    for (name, value) in req.parts.headers() {
        out.extend_from_slice(name);
        out.extend_from_slice(b": ");
        out.extend_from_slice(value);
        out.extend_from_slice(b"\r\n");
    }
    if req.close {
        out.extend_from_slice(b"Connection: close\r\n");
    }
    match req.parts.body() {
        Some(body) => {
            let _ = write!(out, "Content-Length: {}\r\n\r\n", body.len());
            out.extend_from_slice(body);
        }
        None if req.expects_body() => out.extend_from_slice(b"Content-Length: 0\r\n\r\n"),
        None => out.extend_from_slice(b"\r\n"),
    }
}

#[cfg(test)]
mod tests {
    use crate::prepare::PreparedScenario;
    use loadlab_scenario::Scenario;

    fn wire(yaml: &str) -> Vec<String> {
        let s = Scenario::parse(
            &format!("target: http://127.0.0.1:8080\nload: {{model: closed, vus: 1, duration: 1s}}\n{yaml}"),
            "e.yaml",
        )
        .unwrap();
        let p = PreparedScenario::new(&s).unwrap();
        (0..p.requests.len())
            .map(|i| String::from_utf8(p.render_first(i, 1).unwrap()).unwrap())
            .collect()
    }

    const UA: &str = concat!("User-Agent: loadlab/", env!("CARGO_PKG_VERSION"), "\r\n");

    #[test]
    fn encodes_requests_as_http_1_1() {
        let got = wire(
            "steps:\n  - get: /a?b=1\n  - post: /api/users\n    headers: { Authorization: Bearer x }\n    json: {a: 1}\n  - put: /empty\n  - get: http://h:8081/x\n    headers: { Host: other }\n",
        );
        assert_eq!(
            got[0],
            format!("GET /a?b=1 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n{UA}\r\n")
        );
        assert_eq!(
            got[1],
            format!("POST /api/users HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n{UA}Authorization: Bearer x\r\nContent-Type: application/json\r\nContent-Length: 7\r\n\r\n{{\"a\":1}}")
        );
        assert_eq!(
            got[2],
            format!("PUT /empty HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n{UA}Content-Length: 0\r\n\r\n")
        );
        assert_eq!(
            got[3],
            format!("GET /x HTTP/1.1\r\n{UA}Host: other\r\n\r\n")
        );
        let closing = wire("connections: none\nsteps: [ {get: /} ]\n");
        assert_eq!(
            closing[0],
            format!("GET / HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n{UA}Connection: close\r\n\r\n")
        );
    }
}
