//! Before the load, each origin is resolved, reached and asked what it speaks, so a wrong
//! host, a target that is down, or a server without HTTP/2 is one clear message instead of a
//! wall of errors — and the run can state what was negotiated.

use super::connect::{open, TlsConnectors};
use super::h2::H2Conn;
use super::resolve::lookup;
use crate::origin::Origin;
use loadlab_metrics::{ErrorKind, Protocol};
use loadlab_scenario::HttpVersion;
use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

/// How long the check waits for each step (connect, TLS, HTTP/2 handshake).
const PATIENCE: Duration = Duration::from_secs(3);

#[derive(Debug)]
pub enum ProbeError {
    /// The host name did not resolve.
    Dns(String),
    /// Nothing answered (refused, timed out, unroutable).
    Unreachable(String),
    /// The scenario asks for HTTP/2 and the server does not speak it there.
    NoHttp2(String),
}

/// What the check found: the address used, and the protocol negotiated (`None`: the TLS
/// handshake failed; the run will count and explain `tls` errors).
#[derive(Debug, Clone, Copy)]
pub struct Probed {
    pub addr: SocketAddr,
    pub protocol: Option<Protocol>,
}

pub async fn probe(origin: &Origin, tls: Option<&TlsConnectors>) -> Result<Probed, ProbeError> {
    let addr = match origin.host.parse::<IpAddr>() {
        Ok(ip) => SocketAddr::new(ip, origin.port),
        Err(_) => lookup(&origin.host, origin.port)
            .await
            .map_err(ProbeError::Dns)?,
    };
    let opened = tokio::time::timeout(PATIENCE, open(origin, addr, None, tls, None))
        .await
        .map_err(|_| ProbeError::Unreachable(format!("no answer from {addr} within 3 s")))?;
    let (stream, protocol, _) = match opened {
        Ok(x) => x,
        Err(f) if f.kind == ErrorKind::Tls => {
            return Ok(Probed {
                addr,
                protocol: None,
            })
        }
        Err(f) if f.kind == ErrorKind::Protocol => return Err(ProbeError::NoHttp2(f.message)),
        Err(f) if f.kind == ErrorKind::ConnectRefused => {
            return Err(ProbeError::Unreachable(format!(
                "connection refused at {addr}"
            )))
        }
        Err(f) => return Err(ProbeError::Unreachable(f.message)),
    };
    if protocol == Protocol::H2c {
        // Prior knowledge: only a PING answered over HTTP/2 shows the server speaks it.
        let handshake = H2Conn::handshake(stream, protocol, true);
        match tokio::time::timeout(PATIENCE, handshake).await {
            Ok(Ok(_)) => {}
            Ok(Err(f)) => {
                return Err(ProbeError::NoHttp2(format!(
                    "{addr} does not speak HTTP/2 over plain TCP (h2c with prior knowledge): {}",
                    f.message
                )))
            }
            Err(_) => {
                return Err(ProbeError::NoHttp2(format!(
                    "{addr} did not answer the HTTP/2 connection preface within 3 s: it does not speak h2c with prior knowledge"
                )))
            }
        }
    }
    debug_assert!(origin.version != HttpVersion::Http2 || protocol.is_http2());
    Ok(Probed {
        addr,
        protocol: Some(protocol),
    })
}
