//! What the tests' own async servers (HTTPS in tls.rs, HTTP/2 in faults/h2server.rs) are
//! set up with: a one-worker runtime listening on a free loopback port, and a fresh
//! self-signed certificate for 127.0.0.1.

use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use std::net::SocketAddr;
use std::sync::Arc;

/// A one-worker tokio runtime (dropping it stops the server it runs) and a listener on a
/// free port of 127.0.0.1, with that port's address.
pub fn loopback_runtime() -> (tokio::runtime::Runtime, tokio::net::TcpListener, SocketAddr) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let addr = listener.local_addr().unwrap();
    (runtime, listener, addr)
}

/// A server TLS configuration with a fresh self-signed certificate for 127.0.0.1 (no
/// client certificates).
pub fn self_signed_config() -> rustls::ServerConfig {
    let key = rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_string()]).unwrap();
    let cert: CertificateDer<'static> = key.cert.der().clone();
    let private = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.signing_key.serialize_der()));
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![cert], private)
        .unwrap()
}
