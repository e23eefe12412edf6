//! Where requests go and come from: the target base URL and the source addresses.

use crate::credentials::{redact, split_credentials, Credentials};
use crate::limits::MAX_SOURCE_ADDRESSES;
use std::net::{IpAddr, Ipv4Addr};

/// Checks a base URL; returns it without a trailing slash and with its password redacted
/// (`admin:***@`). Use [`check_target_credentials`] to keep the credentials.
pub fn check_target(text: &str) -> Result<String, String> {
    check_target_credentials(text).map(|(url, _)| url)
}

/// Checks a base URL; returns it as [`check_target`] does, and the credentials written in it.
pub fn check_target_credentials(text: &str) -> Result<(String, Option<Credentials>), String> {
    let text = &crate::url_env::with_env_origin(text.trim())?;
    let text = &crate::credentials::with_userinfo_env(text)?;
    check_url(text)?;
    let (url, credentials) = split_credentials(text.trim().trim_end_matches('/'));
    Ok((url, credentials))
}

/// Checks an absolute http(s) URL; messages quote it with its password redacted.
pub(crate) fn check_url(text: &str) -> Result<(), String> {
    let shown = redact(text);
    let url = url::Url::parse(text.trim())
        .map_err(|e| format!("invalid URL `{shown}`: {e}; expected e.g. http://127.0.0.1:8080"))?;
    if url.scheme() != "http" && url.scheme() != "https" {
        return Err(format!(
            "unsupported scheme `{}` in `{shown}`: use http:// or https://",
            url.scheme()
        ));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(format!("URL `{shown}` has no host"));
    }
    Ok(())
}

/// Whether `url` names this machine: `127.0.0.0/8`, `::1` or `localhost` (what a pod, a
/// monitored endpoint or a target on this host is told apart by).
pub fn is_loopback(url: &url::Url) -> bool {
    match url.host() {
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        Some(url::Host::Domain(name)) => name == "localhost" || name.ends_with(".localhost"),
        None => false,
    }
}

/// Expands `127.0.0.1-127.0.0.16` ranges and single addresses.
pub fn parse_addresses(items: &[String]) -> Result<Vec<IpAddr>, String> {
    let mut out = Vec::new();
    for item in items.iter().flat_map(|s| s.split(',')) {
        let item = item.trim();
        if let Some((a, b)) = item.split_once('-') {
            let bad =
                || format!("invalid address range `{item}`: expected e.g. 127.0.0.1-127.0.0.16");
            let a: Ipv4Addr = a.trim().parse().map_err(|_| bad())?;
            let b: Ipv4Addr = b.trim().parse().map_err(|_| bad())?;
            let (a, b) = (u32::from(a), u32::from(b));
            if b < a || b - a > 65_535 {
                return Err(bad());
            }
            out.extend((a..=b).map(|x| IpAddr::V4(Ipv4Addr::from(x))));
        } else {
            out.push(item.parse().map_err(|_| {
                format!("invalid address `{item}`: expected an IP such as 127.0.0.2")
            })?);
        }
        if out.len() > MAX_SOURCE_ADDRESSES {
            return Err(format!(
                "more than {MAX_SOURCE_ADDRESSES} source addresses: use fewer or shorter ranges"
            ));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    #[test]
    fn loopback_urls_are_told_apart() {
        for (url, loopback) in [
            ("http://127.0.0.1:8080", true),
            ("http://127.8.0.1/", true),
            ("http://[::1]:80", true),
            ("http://localhost:3000", true),
            ("http://api.localhost", true),
            ("http://10.0.0.1", false),
            ("http://api.perf.svc:8080", false),
            ("http://localhost.example.com", false),
        ] {
            let parsed = url::Url::parse(url).unwrap();
            assert_eq!(super::is_loopback(&parsed), loopback, "{url}");
        }
    }
}
