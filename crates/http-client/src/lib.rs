//! The one HTTP client of loadlab outside the load itself: Prometheus scrapes (monitor), live
//! outputs (remote write, OTLP) and `loadlab control` all call through here.
//!
//! Library chosen: `reqwest`'s blocking client. object_store already builds reqwest (for
//! S3/GCS/Azure), so these plain-thread calls use it too instead of a second client (ureq
//! before). It is built without a bundled TLS provider: [`client`] installs the *ring* one
//! the workspace builds. The load's own HTTP client is the engine's, measured for the job.

use std::io::Read;
use std::time::Duration;

pub use reqwest::blocking::{Client, RequestBuilder, Response};

/// A blocking client with this timeout for a whole exchange; the error says why none could be
/// made. Make it on a plain thread, not inside an async runtime (reqwest runs its own).
pub fn client(timeout: Duration, user_agent: &str) -> Result<Client, String> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    Client::builder()
        .timeout(timeout)
        .user_agent(user_agent)
        .build()
        .map_err(|e| format!("cannot make an HTTP client: {}", error_chain(&e)))
}

/// An error with its causes ("error sending request for url (…): … Connection refused"):
/// reqwest's own message does not say why.
pub fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        let more = cause.to_string();
        if !text.contains(&more) {
            text.push_str(": ");
            text.push_str(&more);
        }
        source = cause.source();
    }
    text
}

/// Sends a request; the error is [`error_chain`]'s text.
pub fn send(request: RequestBuilder) -> Result<Response, String> {
    request.send().map_err(|e| error_chain(&e))
}

/// A body as text, refused when it is longer than `limit` bytes (a scrape that large is not
/// an exposition to parse whole).
pub fn text_within(response: Response, limit: u64) -> Result<String, String> {
    let mut text = String::new();
    response
        .take(limit + 1)
        .read_to_string(&mut text)
        .map_err(|e| error_chain(&e))?;
    if text.len() as u64 > limit {
        return Err(format!("the body is longer than {limit} bytes"));
    }
    Ok(text)
}

/// The first `limit` bytes of a body as text (to quote a refusal), empty if unreadable.
pub fn text_prefix(response: Response, limit: u64) -> String {
    let mut text = String::new();
    let _ = response.take(limit).read_to_string(&mut text);
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::net::TcpListener;

    /// A refused connection names the refusal, not only "error sending request".
    #[test]
    fn a_refused_connection_says_so() {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let c = client(Duration::from_secs(2), "test").unwrap();
        let e = send(c.get(format!("http://127.0.0.1:{port}/"))).unwrap_err();
        assert!(e.to_lowercase().contains("refused"), "{e}");
    }

    /// A body over the limit is refused; one within it is read whole.
    #[test]
    fn bodies_are_read_within_a_limit() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let server = std::thread::spawn(move || {
            for body in ["short", "longer than ten"] {
                let (mut s, _) = listener.accept().unwrap();
                let mut buf = [0u8; 1024];
                let _ = std::io::Read::read(&mut s, &mut buf);
                let _ = write!(
                    s,
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
            }
        });
        let c = client(Duration::from_secs(2), "test").unwrap();
        let url = format!("http://{addr}/");
        assert_eq!(
            text_within(send(c.get(&url)).unwrap(), 10).unwrap(),
            "short"
        );
        let e = text_within(send(c.get(&url)).unwrap(), 10).unwrap_err();
        assert!(e.contains("longer than 10 bytes"), "{e}");
        server.join().unwrap();
    }
}
