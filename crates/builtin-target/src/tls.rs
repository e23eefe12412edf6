//! HTTPS for the target: a certificate (a given PEM pair, or a self-signed one made at start
//! for `localhost`, 127.0.0.1, ::1 and the listen address) and ALPN offering `h2` and
//! `http/1.1`, so clients negotiate HTTP/2 as they would with a real service.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio_rustls::TlsAcceptor;

use crate::error::TargetError;

/// Where the target's certificate comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TargetTls {
    /// Made at start, valid for `localhost`, 127.0.0.1, ::1 and the listen address; clients
    /// need `--insecure` (or to trust it).
    SelfSigned,
    /// A certificate chain and its private key, PEM files.
    Files { cert: PathBuf, key: PathBuf },
}

/// The TLS acceptor for `tls`, listening on `listen`.
pub fn acceptor(tls: &TargetTls, listen: SocketAddr) -> Result<TlsAcceptor, TargetError> {
    let (chain, key) = match tls {
        TargetTls::SelfSigned => self_signed(listen)?,
        TargetTls::Files { cert, key } => from_files(cert, key)?,
    };
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| TargetError::Tls(e.to_string()))?
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .map_err(|e| TargetError::Tls(format!("the certificate and key do not fit: {e}")))?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(TlsAcceptor::from(Arc::new(config)))
}

type Pair = (Vec<CertificateDer<'static>>, PrivateKeyDer<'static>);

fn self_signed(listen: SocketAddr) -> Result<Pair, TargetError> {
    let mut names = vec!["localhost".to_string(), "127.0.0.1".into(), "::1".into()];
    if !listen.ip().is_unspecified() {
        names.push(listen.ip().to_string());
    }
    names.dedup();
    let made = rcgen::generate_simple_self_signed(names)
        .map_err(|e| TargetError::Tls(format!("cannot make a certificate: {e}")))?;
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(made.signing_key.serialize_der()));
    Ok((vec![made.cert.der().clone()], key))
}

fn from_files(cert: &PathBuf, key: &PathBuf) -> Result<Pair, TargetError> {
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(cert)
        .and_then(|certs| certs.collect::<Result<_, _>>())
        .map_err(|e| {
            TargetError::Tls(format!(
                "cannot read certificates from {}: {e}",
                cert.display()
            ))
        })?;
    if chain.is_empty() {
        return Err(TargetError::Tls(format!(
            "{} holds no PEM certificate",
            cert.display()
        )));
    }
    let key = PrivateKeyDer::from_pem_file(key).map_err(|e| {
        TargetError::Tls(format!(
            "cannot read a private key from {}: {e}",
            key.display()
        ))
    })?;
    Ok((chain, key))
}
