//! Errors of starting and running the target, worded for the person who typed the command.

use std::io;
use std::net::SocketAddr;

/// Everything that can stop the target from starting or running.
#[derive(thiserror::Error, Debug)]
pub enum TargetError {
    /// The listening socket could not be created or bound.
    #[error("cannot listen on {addr}: {hint}", hint = bind_hint(source))]
    Bind {
        addr: SocketAddr,
        #[source]
        source: io::Error,
    },
    /// A setting is out of range.
    #[error("invalid target settings: {0}")]
    InvalidConfig(String),
    /// The tokio runtime (or the server thread) could not be started.
    #[error("cannot start the target's runtime: {0}")]
    Runtime(#[source] io::Error),
    /// The SIGINT/SIGTERM handlers could not be installed.
    #[error("cannot install the Ctrl-C/SIGTERM handler: {0}")]
    Signal(#[source] io::Error),
    /// The TLS certificate or key could not be made or read.
    #[error("TLS: {0}")]
    Tls(String),
    /// The gRPC service's embedded .proto file did not compile (a bug of the build).
    #[error("gRPC: {0}")]
    Proto(String),
}

/// Turns the OS error of a failed bind into advice.
fn bind_hint(err: &io::Error) -> String {
    match err.kind() {
        io::ErrorKind::AddrInUse => {
            "address already in use (choose another --listen address, or port 0)".to_string()
        }
        io::ErrorKind::PermissionDenied => {
            "permission denied (ports below 1024 need privileges; choose a higher port, or port 0)"
                .to_string()
        }
        io::ErrorKind::AddrNotAvailable => {
            "address not available on this machine (try 127.0.0.1 or 0.0.0.0)".to_string()
        }
        _ => err.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bind_message_explains_what_to_do() {
        let e = TargetError::Bind {
            addr: "127.0.0.1:8080".parse().unwrap(),
            source: io::Error::from(io::ErrorKind::AddrInUse),
        };
        assert_eq!(
            e.to_string(),
            "cannot listen on 127.0.0.1:8080: address already in use \
             (choose another --listen address, or port 0)"
        );
    }
}
