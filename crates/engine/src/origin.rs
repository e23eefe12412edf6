//! Where requests go: scheme, host, port and HTTP version, found before the run. Host names
//! are resolved when connecting (see `http::resolve`), not here.

use loadlab_scenario::HttpVersion;

/// Shared, multiplexed connections to one origin (`http.connections`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SharedConnections {
    /// Connections to keep open (of the whole plan before `run` splits it over workers).
    pub connections: u32,
    /// Streams at once on one of them, capped by the server's `SETTINGS_MAX_CONCURRENT_STREAMS`.
    pub max_streams: u32,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    pub tls: bool,
    pub host: String,
    pub port: u16,
    /// Value of the `Host` header and of `:authority` (port omitted when it is the scheme's
    /// default).
    pub host_header: String,
    /// The HTTP version its requests ask for; steps with another version are another origin.
    pub version: HttpVersion,
    /// `None`: each VU (or request, by `connections:`) holds its own connection.
    pub shared: Option<SharedConnections>,
}

impl Origin {
    /// Its connections speak HTTP/1.1 over plain TCP (no TLS, and HTTP/2 not asked for: with
    /// no ALPN to offer it, `auto` speaks HTTP/1.1), the ones whose reads can be deferred.
    pub fn plain_http1(&self) -> bool {
        !self.tls && self.version != HttpVersion::Http2
    }

    /// Whether its connections can be read at the open model's wake-ups: plain HTTP/1.1, and
    /// h2c with the own HTTP/2 client, whose driver times each response from the kernel's
    /// receive stamps (the `h2` crate sees a response only when it reads it, up to a wake-up
    /// late; TLS records are read through rustls).
    pub fn reads_at_wakeups(&self, client: loadlab_scenario::Http2Client) -> bool {
        self.plain_http1() || (!self.tls && client == loadlab_scenario::Http2Client::Wire)
    }

    pub fn key(&self) -> (bool, &str, u16, HttpVersion) {
        (self.tls, &self.host, self.port, self.version)
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
