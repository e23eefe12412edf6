//! Why a request failed, as a closed set of kinds (never a free-form string).

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    Timeout,
    ConnectRefused,
    ConnectTimeout,
    Reset,
    AddrUnavailable,
    /// The generator ran out of file descriptors (EMFILE/ENFILE): its limit, not the target's.
    FdExhausted,
    Dns,
    Tls,
    Protocol,
    BodyTooLarge,
    CheckFailed,
    CaptureFailed,
    Http4xx,
    Http5xx,
    /// Any other I/O error; its text is logged once, the kind counted.
    Io,
    /// Sent, but the run stopped (a signal, or the end of the grace period) before its
    /// response came: counted, never hidden, and kept out of the latency histograms.
    Interrupted,
    /// The request rendered from templates was not valid HTTP (a variable put a line break
    /// or another control character into a header value), so it was not sent.
    InvalidRequest,
}

impl ErrorKind {
    pub const ALL: [ErrorKind; 17] = [
        ErrorKind::Timeout,
        ErrorKind::ConnectRefused,
        ErrorKind::ConnectTimeout,
        ErrorKind::Reset,
        ErrorKind::AddrUnavailable,
        ErrorKind::FdExhausted,
        ErrorKind::Dns,
        ErrorKind::Tls,
        ErrorKind::Protocol,
        ErrorKind::BodyTooLarge,
        ErrorKind::CheckFailed,
        ErrorKind::CaptureFailed,
        ErrorKind::Http4xx,
        ErrorKind::Http5xx,
        ErrorKind::Io,
        ErrorKind::Interrupted,
        ErrorKind::InvalidRequest,
    ];

    /// Number of kinds (the length of per-kind counter arrays).
    pub const COUNT: usize = Self::ALL.len();

    pub fn index(self) -> usize {
        self as usize
    }

    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Timeout => "timeout",
            ErrorKind::ConnectRefused => "connect_refused",
            ErrorKind::ConnectTimeout => "connect_timeout",
            ErrorKind::Reset => "reset",
            ErrorKind::AddrUnavailable => "addr_unavailable",
            ErrorKind::FdExhausted => "fd_exhausted",
            ErrorKind::Dns => "dns",
            ErrorKind::Tls => "tls",
            ErrorKind::Protocol => "protocol",
            ErrorKind::BodyTooLarge => "body_too_large",
            ErrorKind::CheckFailed => "check_failed",
            ErrorKind::CaptureFailed => "capture_failed",
            ErrorKind::Http4xx => "http_4xx",
            ErrorKind::Http5xx => "http_5xx",
            ErrorKind::Io => "io",
            ErrorKind::Interrupted => "interrupted",
            ErrorKind::InvalidRequest => "invalid_request",
        }
    }

    /// What the user can do about it, shown beside the count in summaries and reports.
    pub fn hint(self) -> &'static str {
        match self {
            ErrorKind::Timeout => "no complete response within the timeout: the target is overloaded or stalled (raise `defaults.timeout` only if such waits are acceptable)",
            ErrorKind::ConnectRefused => "nothing listens at the target address, or its accept queue overflowed: check the URL and that the service is up",
            ErrorKind::ConnectTimeout => "TCP connect did not complete: the target's accept backlog is full or a firewall drops packets",
            ErrorKind::Reset => "the target closed the connection mid-request (crash, restart, or a keep-alive limit on its side)",
            ErrorKind::AddrUnavailable => "local ephemeral ports are exhausted (EADDRNOTAVAIL, `can't assign requested address`): keep connections alive (`connections: per_vu` or `shared`), or spread them over more source addresses (`source_addresses: 127.0.0.1-127.0.0.16`)",
            ErrorKind::FdExhausted => "the generator ran out of file descriptors (EMFILE, `too many open files`): its own limit, not a target error — raise it (`ulimit -n`, LimitNOFILE) or lower the concurrency",
            ErrorKind::Dns => "the target host name did not resolve",
            ErrorKind::Tls => "TLS handshake failed: wrong certificate or protocol (use --insecure only for test certificates)",
            ErrorKind::Protocol => "the response was not valid HTTP/1.1",
            ErrorKind::BodyTooLarge => "the response body exceeded `defaults.max_body`",
            ErrorKind::CheckFailed => "a response check failed",
            ErrorKind::CaptureFailed => "a capture found nothing in the response, so the rest of the iteration was skipped",
            ErrorKind::Http4xx => "the target answered 4xx: the request is wrong (path, auth, payload) rather than slow",
            ErrorKind::Http5xx => "the target answered 5xx: it failed or shed load",
            ErrorKind::Io => "another I/O error while talking to the target",
            ErrorKind::Interrupted => "the run was stopped while these requests were in flight: they were sent but their responses never came (not in any latency figure)",
            ErrorKind::InvalidRequest => "a template variable (a captured value or data cell) put a line break or another control character into a header value, so the request was not sent: check what the capture or data set holds",
        }
    }

    pub fn from_status(status: u16) -> Option<ErrorKind> {
        match status {
            400..=499 => Some(ErrorKind::Http4xx),
            500..=599 => Some(ErrorKind::Http5xx),
            _ => None,
        }
    }
}

impl std::fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for ErrorKind {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ErrorKind::ALL
            .into_iter()
            .find(|k| k.as_str() == s)
            .ok_or_else(|| format!("unknown error kind `{s}`"))
    }
}
