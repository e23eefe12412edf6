//! Opening connections: TCP from a chosen source address, then TLS when the origin asks for
//! it, with ALPN offering what the origin's HTTP version allows; says which protocol the
//! connection will speak.

use super::classify::classify_io;
use super::deferred::DeferredIo;
use super::stream::Stream;
use crate::origin::Origin;
use crate::transport::{ConnectTiming, Failure};
use loadlab_metrics::micros;
use loadlab_metrics::{ErrorKind, Protocol};
use loadlab_scenario::HttpVersion;
use rustls::pki_types::ServerName;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use tokio::net::TcpSocket;
use tokio::time::Instant;
use tokio_rustls::TlsConnector;

const ALPN_H2: &[u8] = b"h2";
const ALPN_HTTP1: &[u8] = b"http/1.1";

/// TLS client configurations, one per set of protocols ALPN offers.
#[derive(Clone)]
pub struct TlsConnectors {
    http1: TlsConnector,
    http2: TlsConnector,
    auto: TlsConnector,
}

impl TlsConnectors {
    pub fn new(insecure: bool) -> Self {
        Self {
            http1: tls_connector(insecure, &[ALPN_HTTP1]),
            http2: tls_connector(insecure, &[ALPN_H2]),
            auto: tls_connector(insecure, &[ALPN_H2, ALPN_HTTP1]),
        }
    }

    fn for_version(&self, version: HttpVersion) -> &TlsConnector {
        match version {
            HttpVersion::Http1 => &self.http1,
            HttpVersion::Http2 => &self.http2,
            HttpVersion::Auto => &self.auto,
        }
    }
}

/// Connects to `addr` (the origin's address), says which protocol to speak on it and how
/// long the TCP connect and the TLS handshake took. A plain (not TLS) connection joins
/// `deferred` when there is one: the caller passes it only for clients that read stamps.
pub async fn open(
    origin: &Origin,
    addr: SocketAddr,
    source: Option<IpAddr>,
    tls: Option<&TlsConnectors>,
    deferred: Option<&Arc<DeferredIo>>,
) -> Result<(Stream, Protocol, ConnectTiming), Failure> {
    let connect_failure =
        |e: std::io::Error| Failure::new(classify_io(&e, true), format!("connect to {addr}: {e}"));
    let socket = if addr.is_ipv4() {
        TcpSocket::new_v4()
    } else {
        TcpSocket::new_v6()
    }
    .map_err(connect_failure)?;
    if let Some(ip) = source {
        socket
            .bind(SocketAddr::new(ip, 0))
            .map_err(|e| bind_failure(ip, &e))?;
    }
    let connecting = Instant::now();
    let tcp = socket.connect(addr).await.map_err(connect_failure)?;
    let connected = Instant::now();
    let mut timing = ConnectTiming {
        connect_us: micros(connected - connecting),
        tls_us: None,
    };
    let _ = tcp.set_nodelay(true);
    if !origin.tls {
        let protocol = if origin.version == HttpVersion::Http2 {
            Protocol::H2c
        } else {
            Protocol::Http1
        };
        let stream =
            match deferred {
                Some(io) => Stream::Deferred(io.adopt(tcp).map_err(|e| {
                    Failure::new(ErrorKind::Io, format!("connection to {addr}: {e}"))
                })?),
                _ => Stream::Plain(tcp),
            };
        return Ok((stream, protocol, timing));
    }
    let connector = tls
        .ok_or_else(|| Failure::new(ErrorKind::Tls, "TLS is not configured"))?
        .for_version(origin.version);
    let name = ServerName::try_from(origin.host.clone()).map_err(|e| {
        Failure::new(
            ErrorKind::Tls,
            format!("invalid TLS server name {}: {e}", origin.host),
        )
    })?;
    let stream = connector.connect(name, tcp).await.map_err(|e| {
        Failure::new(
            ErrorKind::Tls,
            format!("TLS handshake with {}: {e}", origin.host),
        )
    })?;
    timing.tls_us = Some(micros(connected.elapsed()));
    let protocol = negotiated(origin.version, stream.get_ref().1.alpn_protocol())?;
    Ok((Stream::Tls(Box::new(stream)), protocol, timing))
}

/// What to speak after ALPN chose `alpn` (or nothing) for an origin of `version`.
fn negotiated(version: HttpVersion, alpn: Option<&[u8]>) -> Result<Protocol, Failure> {
    match (version, alpn) {
        (HttpVersion::Http1, _) => Ok(Protocol::Http1),
        (_, Some(ALPN_H2)) => Ok(Protocol::H2),
        (HttpVersion::Auto, _) => Ok(Protocol::Http1),
        (HttpVersion::Http2, chosen) => Err(Failure::new(
            ErrorKind::Protocol,
            format!(
                "the server did not agree to HTTP/2 over TLS (ALPN offered h2, it chose {}): it speaks HTTP/1.1 only here; use `http.version: auto` or \"1.1\"",
                chosen.map_or("nothing".to_string(), |p| format!("`{}`", String::from_utf8_lossy(p)))
            ),
        )),
    }
}

/// A source address that cannot be bound. EADDRNOTAVAIL from `bind` means the address is not
/// this machine's (checked before the run, so only if an interface went away): that is not
/// port exhaustion, whose hint would mislead. EADDRINUSE from `bind` is: the address's
/// ephemeral ports are all taken.
fn bind_failure(ip: IpAddr, e: &std::io::Error) -> Failure {
    let kind = match e.raw_os_error() {
        Some(libc::EADDRINUSE) => ErrorKind::AddrUnavailable,
        _ => ErrorKind::Io,
    };
    Failure::new(kind, format!("bind to source address {ip}: {e}"))
}

/// A client configuration that verifies certificates against the Mozilla roots, or not at
/// all, and offers `alpn`.
pub fn tls_connector(insecure: bool, alpn: &[&[u8]]) -> TlsConnector {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .expect("ring supports the default protocol versions");
    let mut config = if insecure {
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(NoVerification(provider)))
            .with_no_client_auth()
    } else {
        let roots = rustls::RootCertStore {
            roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
        };
        builder.with_root_certificates(roots).with_no_client_auth()
    };
    config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    TlsConnector::from(Arc::new(config))
}

/// `--insecure`: accept any certificate (for test servers with self-signed certificates).
#[derive(Debug)]
struct NoVerification(Arc<rustls::crypto::CryptoProvider>);

impl rustls::client::danger::ServerCertVerifier for NoVerification {
    fn verify_server_cert(
        &self,
        _end_entity: &rustls::pki_types::CertificateDer<'_>,
        _intermediates: &[rustls::pki_types::CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp: &[u8],
        _now: rustls::pki_types::UnixTime,
    ) -> Result<rustls::client::danger::ServerCertVerified, rustls::Error> {
        Ok(rustls::client::danger::ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &rustls::pki_types::CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &rustls::pki_types::CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_source_address_that_is_not_local_is_not_port_exhaustion() {
        let ip: IpAddr = "10.0.0.1".parse().unwrap();
        let f = bind_failure(ip, &std::io::Error::from_raw_os_error(libc::EADDRNOTAVAIL));
        assert_eq!(f.kind, ErrorKind::Io);
        assert!(
            f.message.contains("source address 10.0.0.1"),
            "{}",
            f.message
        );
        let f = bind_failure(ip, &std::io::Error::from_raw_os_error(libc::EADDRINUSE));
        assert_eq!(f.kind, ErrorKind::AddrUnavailable);
    }

    #[test]
    fn alpn_decides_the_protocol() {
        use HttpVersion::*;
        assert_eq!(negotiated(Auto, Some(b"h2")).unwrap(), Protocol::H2);
        assert_eq!(
            negotiated(Auto, Some(b"http/1.1")).unwrap(),
            Protocol::Http1
        );
        assert_eq!(negotiated(Auto, None).unwrap(), Protocol::Http1);
        assert_eq!(negotiated(Http1, None).unwrap(), Protocol::Http1);
        assert_eq!(negotiated(Http2, Some(b"h2")).unwrap(), Protocol::H2);
        let refused = negotiated(Http2, None).unwrap_err();
        assert_eq!(refused.kind, ErrorKind::Protocol);
        assert!(
            refused.message.contains("chose nothing"),
            "{}",
            refused.message
        );
    }
}
