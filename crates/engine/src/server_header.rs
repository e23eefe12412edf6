//! Which response header carries the server's own time for a request, and reading it while
//! the HTTP client walks the response headers it parses anyway.

/// The response header read for the server's time (`defaults.server_latency_header`), as the
/// HTTP client compares it: by name, case-insensitively, while it walks the headers it parses
/// anyway — no allocation, nothing read when the header is absent.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum ServerHeader {
    #[default]
    ServerTiming,
    Named(std::sync::Arc<str>),
    Off,
}

impl ServerHeader {
    pub fn of(s: &loadlab_scenario::ServerLatency) -> Self {
        match s {
            loadlab_scenario::ServerLatency::ServerTiming => ServerHeader::ServerTiming,
            loadlab_scenario::ServerLatency::Header(h) => ServerHeader::Named(h.as_str().into()),
            loadlab_scenario::ServerLatency::Off => ServerHeader::Off,
        }
    }

    /// The server's time in µs, when `name: value` is the header this reads.
    #[inline]
    pub fn read(&self, name: &str, value: &[u8]) -> Option<u64> {
        match self {
            ServerHeader::ServerTiming if name.eq_ignore_ascii_case("server-timing") => {
                loadlab_metrics::server_timing_micros(value)
            }
            ServerHeader::Named(h) if name.eq_ignore_ascii_case(h) => {
                loadlab_metrics::parse_duration_header(value)
                    .map(|d| d.as_micros().min(u128::from(u64::MAX)) as u64)
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_only_its_header() {
        let st = ServerHeader::ServerTiming;
        assert_eq!(
            st.read("Server-Timing", b"db;dur=3, app;dur=12.5"),
            Some(12_500)
        );
        assert_eq!(
            st.read("server-timing", b"total;dur=20, app;dur=12"),
            Some(20_000)
        );
        assert_eq!(st.read("Server-Timing", b"cache;desc=hit"), None);
        assert_eq!(st.read("X-Response-Time", b"12ms"), None);
        let named = ServerHeader::of(&loadlab_scenario::ServerLatency::Header(
            "X-Response-Time".into(),
        ));
        assert_eq!(named.read("x-response-time", b"12.5ms"), Some(12_500));
        assert_eq!(named.read("x-response-time", b"0.002s"), Some(2_000));
        assert_eq!(named.read("Server-Timing", b"app;dur=1"), None);
        assert_eq!(ServerHeader::Off.read("Server-Timing", b"app;dur=1"), None);
    }
}
