//! Opening connections: TCP from a chosen source address, then TLS when the origin asks for it.

use super::classify::classify_io;
use super::stream::Stream;
use crate::origin::Origin;
use crate::transport::Failure;
use loadlab_metrics::ErrorKind;
use rustls::pki_types::ServerName;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use tokio::net::TcpSocket;
use tokio_rustls::TlsConnector;

pub async fn open(
    origin: &Origin,
    source: Option<IpAddr>,
    tls: Option<&TlsConnector>,
) -> Result<Stream, Failure> {
    let connect_failure = |e: std::io::Error| {
        Failure::new(
            classify_io(&e, true),
            format!("connect to {}: {e}", origin.addr),
        )
    };
    let socket = if origin.addr.is_ipv4() {
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
    let tcp = socket.connect(origin.addr).await.map_err(connect_failure)?;
    let _ = tcp.set_nodelay(true);
    if !origin.tls {
        return Ok(Stream::Plain(tcp));
    }
    let connector = tls.ok_or_else(|| Failure::new(ErrorKind::Tls, "TLS is not configured"))?;
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
    Ok(Stream::Tls(Box::new(stream)))
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

/// A client configuration that verifies certificates against the Mozilla roots, or not at all.
pub fn tls_connector(insecure: bool) -> TlsConnector {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .expect("ring supports the default protocol versions");
    let config = if insecure {
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
}
