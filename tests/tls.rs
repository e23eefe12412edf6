//! TLS end to end: certificates are verified by default, and `--insecure` skips that for test
//! servers with self-signed certificates.

#[path = "common/local_server.rs"]
mod local_server;

use local_server::{loopback_runtime, self_signed_config};
use serde_json::Value;
use std::net::SocketAddr;
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// An HTTPS server on 127.0.0.1 with a fresh self-signed certificate; stops when dropped.
struct TlsServer {
    addr: SocketAddr,
    _runtime: tokio::runtime::Runtime,
}

impl TlsServer {
    fn start() -> TlsServer {
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(self_signed_config()));
        let (runtime, listener, addr) = loopback_runtime();
        runtime.spawn(async move {
            loop {
                let Ok((tcp, _)) = listener.accept().await else {
                    return;
                };
                let acceptor = acceptor.clone();
                tokio::spawn(async move {
                    let Ok(mut tls) = acceptor.accept(tcp).await else {
                        return;
                    };
                    let mut buf = Vec::new();
                    let mut chunk = [0u8; 4096];
                    loop {
                        // One response per request head (GET requests, no bodies).
                        while let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                            buf.drain(..end + 4);
                            if tls
                                .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
                                .await
                                .is_err()
                            {
                                return;
                            }
                        }
                        match tokio::time::timeout(Duration::from_secs(10), tls.read(&mut chunk))
                            .await
                        {
                            Ok(Ok(n)) if n > 0 => buf.extend_from_slice(&chunk[..n]),
                            _ => return,
                        }
                    }
                });
            }
        });
        TlsServer {
            addr,
            _runtime: runtime,
        }
    }
}

fn run(url: &str, extra: &[&str], name: &str) -> (i32, Value) {
    // The JSON result and the stored runs, removed when this function returns.
    let dir = tempfile::Builder::new()
        .prefix("loadlab-tls-")
        .tempdir()
        .unwrap();
    let json = dir.path().join(format!("{name}.json"));
    let out = Command::new(env!("CARGO_BIN_EXE_loadlab"))
        .args([
            "run",
            "--url",
            url,
            "--rate",
            "20/s",
            "--duration",
            "1s",
            "--timeout",
            "2s",
            "--no-progress",
            "--retry-invalid",
            "2",
        ])
        .args(extra)
        .arg("--json")
        .arg(&json)
        .env("LOADLAB_RESULTS", dir.path().join("results"))
        .output()
        .unwrap();
    let text = std::fs::read_to_string(&json)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    let _ = std::fs::remove_file(&json);
    (
        out.status.code().unwrap_or(-1),
        serde_json::from_str(&text).unwrap(),
    )
}

#[test]
fn self_signed_certificates_fail_unless_insecure() {
    let server = TlsServer::start();
    let url = format!("https://{}/", server.addr);

    let (code, verified) = run(&url, &[], "verified");
    assert_eq!(code, 0);
    let total = verified["requests"]["total"].as_u64().unwrap();
    assert!(total >= 15, "{verified}");
    assert_eq!(
        verified["errors"]["tls"].as_u64(),
        Some(total),
        "{}",
        verified["errors"]
    );
    assert!(verified["error_examples"]["tls"]
        .as_str()
        .unwrap()
        .contains("TLS handshake"));

    let (code, insecure) = run(&url, &["--insecure"], "insecure");
    assert_eq!(code, 0);
    let total = insecure["requests"]["total"].as_u64().unwrap();
    assert!(total >= 15, "{insecure}");
    assert_eq!(
        insecure["requests"]["ok"].as_u64(),
        Some(total),
        "{}",
        insecure["errors"]
    );
    assert_eq!(insecure["status_codes"]["200"].as_u64(), Some(total));
}
