//! Host names resolved when connecting, not before the run: a worker asks the system resolver
//! (`getaddrinfo`, off the worker's thread) at its first connection to an origin and again
//! once the answer is a minute old, so a run follows DNS changes (a blue/green switch, pods
//! behind a service) without a lookup per connection. IP literals are never looked up.

use crate::origin::Origin;
use crate::transport::Failure;
use loadlab_metrics::ErrorKind;
use std::cell::RefCell;
use std::net::{IpAddr, SocketAddr};
use tokio::time::{Duration, Instant};

/// How long an answer is used before the next connection asks again.
const REUSE_FOR: Duration = Duration::from_secs(60);

#[derive(Default)]
pub struct Resolver {
    /// Per origin: the address and when it was looked up.
    cache: RefCell<Vec<Option<(SocketAddr, Instant)>>>,
}

impl Resolver {
    /// The address to connect to for origin `index`.
    pub async fn addr(&self, index: usize, origin: &Origin) -> Result<SocketAddr, Failure> {
        if let Ok(ip) = origin.host.parse::<IpAddr>() {
            return Ok(SocketAddr::new(ip, origin.port));
        }
        if let Some(Some((addr, at))) = self.cache.borrow().get(index) {
            if at.elapsed() < REUSE_FOR {
                return Ok(*addr);
            }
        }
        let addr = lookup(&origin.host, origin.port)
            .await
            .map_err(|e| Failure::new(ErrorKind::Dns, e))?;
        let mut cache = self.cache.borrow_mut();
        if cache.len() <= index {
            cache.resize(index + 1, None);
        }
        cache[index] = Some((addr, Instant::now()));
        Ok(addr)
    }
}

/// The first address `host` resolves to; the message says why not.
pub async fn lookup(host: &str, port: u16) -> Result<SocketAddr, String> {
    match tokio::net::lookup_host((host, port)).await {
        Ok(mut addrs) => addrs
            .next()
            .ok_or_else(|| format!("cannot resolve host `{host}`: no address found")),
        Err(e) => Err(format!("cannot resolve host `{host}`: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use loadlab_scenario::HttpVersion;

    fn origin(host: &str) -> Origin {
        Origin {
            tls: false,
            host: host.into(),
            port: 8080,
            host_header: format!("{host}:8080"),
            version: HttpVersion::Auto,
            shared: None,
        }
    }

    #[tokio::test]
    async fn literals_and_names_resolve_and_failures_are_dns_errors() {
        let r = Resolver::default();
        assert_eq!(
            r.addr(0, &origin("127.0.0.1")).await.unwrap(),
            "127.0.0.1:8080".parse().unwrap()
        );
        assert_eq!(
            r.addr(1, &origin("::1")).await.unwrap(),
            "[::1]:8080".parse().unwrap()
        );
        let local = r.addr(2, &origin("localhost")).await.unwrap();
        assert!(local.ip().is_loopback());
        assert_eq!(r.addr(2, &origin("localhost")).await.unwrap(), local);
        let f = r
            .addr(3, &origin("no-such-host.invalid"))
            .await
            .unwrap_err();
        assert_eq!(f.kind, ErrorKind::Dns);
        assert!(f.message.contains("no-such-host.invalid"), "{}", f.message);
    }
}
