//! Where requests go and come from: the target base URL and the source addresses.

use std::net::{IpAddr, Ipv4Addr};

/// Checks a base URL; returns it without a trailing slash.
pub fn check_target(text: &str) -> Result<String, String> {
    let url = url::Url::parse(text.trim())
        .map_err(|e| format!("invalid URL `{text}`: {e}; expected e.g. http://127.0.0.1:8080"))?;
    if url.scheme() != "http" && url.scheme() != "https" {
        return Err(format!(
            "unsupported scheme `{}` in `{text}`: use http:// or https://",
            url.scheme()
        ));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(format!("URL `{text}` has no host"));
    }
    Ok(text.trim().trim_end_matches('/').to_string())
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
    }
    Ok(out)
}
