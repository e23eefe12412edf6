//! The local addresses connections are spread over (`source_addresses`), checked before any
//! load: an address that cannot be bound would fail every connection of a long run at once.

use super::PrepareError;
use std::net::{IpAddr, SocketAddr};

/// Every source address must be an address of this machine, of the family of every target:
/// otherwise each connection would fail to bind at once, all run long. Checked by binding it.
pub fn check_source_addresses(
    sources: &[IpAddr],
    targets: &[SocketAddr],
) -> Result<(), PrepareError> {
    const NOT_LOCAL: &str = "give addresses of this machine's interfaces (`ip addr` lists them; on Linux all of 127.0.0.0/8 is local: --source-addrs 127.0.0.1-127.0.0.16)";
    for &addr in sources {
        if let Some(t) = targets.iter().find(|t| t.is_ipv4() != addr.is_ipv4()) {
            return Err(PrepareError::SourceAddress {
                addr,
                reason: format!(
                    "is {} but the target {t} is {}: a connection cannot go from one to the other",
                    family(addr.is_ipv4()),
                    family(t.is_ipv4())
                ),
                hint: "give source addresses of the target's family",
            });
        }
        if addr.is_unspecified() || addr.is_multicast() {
            return Err(PrepareError::SourceAddress {
                addr,
                reason: "is not the address of one interface".into(),
                hint: NOT_LOCAL,
            });
        }
        if let Err(e) = std::net::UdpSocket::bind(SocketAddr::new(addr, 0)) {
            let reason = if e.raw_os_error() == Some(libc::EADDRNOTAVAIL) {
                "is not an address of this machine".to_string()
            } else {
                format!("cannot be bound: {e}")
            };
            return Err(PrepareError::SourceAddress {
                addr,
                reason,
                hint: NOT_LOCAL,
            });
        }
    }
    Ok(())
}

fn family(v4: bool) -> &'static str {
    if v4 {
        "IPv4"
    } else {
        "IPv6"
    }
}
