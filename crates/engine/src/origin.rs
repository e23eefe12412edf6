//! Where requests go: scheme, host and port resolved once, before the run starts.

use std::net::{SocketAddr, ToSocketAddrs};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    pub tls: bool,
    pub host: String,
    pub port: u16,
    /// Value of the `Host` header (port omitted when it is the scheme's default).
    pub host_header: String,
    pub addr: SocketAddr,
}

impl Origin {
    pub fn key(&self) -> (bool, &str, u16) {
        (self.tls, &self.host, self.port)
    }

    pub fn url(&self) -> String {
        format!(
            "{}://{}",
            if self.tls { "https" } else { "http" },
            self.host_header
        )
    }
}

/// Splits an absolute URL into its origin parts and the request target (`/path?query`).
pub fn split_url(text: &str) -> Result<(bool, String, u16, String), String> {
    let url = url::Url::parse(text).map_err(|e| format!("invalid URL `{text}`: {e}"))?;
    let tls = match url.scheme() {
        "http" => false,
        "https" => true,
        other => return Err(format!("unsupported scheme `{other}` in `{text}`")),
    };
    let host = url
        .host_str()
        .ok_or_else(|| format!("URL `{text}` has no host"))?;
    let host = host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_string();
    let port = url
        .port_or_known_default()
        .unwrap_or(if tls { 443 } else { 80 });
    let mut target = url.path().to_string();
    if let Some(q) = url.query() {
        target.push('?');
        target.push_str(q);
    }
    Ok((tls, host, port, target))
}

/// Resolves `host:port` (once per run) to the first address.
pub fn resolve(host: &str, port: u16) -> Result<SocketAddr, std::io::Error> {
    (host, port)
        .to_socket_addrs()?
        .next()
        .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::NotFound, "no address found"))
}

pub fn host_header(host: &str, port: u16, tls: bool) -> String {
    let host = if host.contains(':') {
        format!("[{host}]")
    } else {
        host.to_string()
    };
    if (tls && port == 443) || (!tls && port == 80) {
        host
    } else {
        format!("{host}:{port}")
    }
}
