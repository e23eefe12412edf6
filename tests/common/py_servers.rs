//! The protocol tests' servers from other implementations: Python `websockets`
//! (scripts/ws_server.py) and Python `grpcio` with reflection (scripts/grpc_server.py), both
//! installed by scripts/setup-test-deps.sh. Each runs on free loopback ports, answers its own
//! counts as JSON on plain HTTP, and is killed on drop. Without the Python package a test
//! says "skipped" (a fresh machine runs the setup script first).
#![allow(dead_code)] // each test binary uses its own subset

use crate::run_json::{http_get, n};
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// scripts/ws_server.py on a free loopback port; killed on drop.
pub struct PyServer {
    child: Child,
    pub addr: String,
}

impl PyServer {
    pub fn start() -> Option<PyServer> {
        let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".into());
        let has = Command::new(&python)
            .args(["-c", "import websockets"])
            .output();
        if !has.is_ok_and(|o| o.status.success()) {
            eprintln!("skipped: Python `websockets` is not installed (scripts/setup-test-deps.sh installs it)");
            return None;
        }
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/ws_server.py");
        let mut child = Command::new(python)
            .arg(script)
            .arg(port.to_string())
            .stdout(Stdio::piped())
            .spawn()
            .expect("start scripts/ws_server.py");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert!(line.starts_with("listening"), "ws_server.py said {line:?}");
        Some(PyServer {
            child,
            addr: format!("127.0.0.1:{port}"),
        })
    }

    pub fn counts(&self) -> Value {
        serde_json::from_str(&http_get(&self.addr, "/counts")).unwrap()
    }
}

impl Drop for PyServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Waits until the server has seen every session end (its close is asynchronous).
pub fn settled(server: &PyServer, sessions: u64) -> Value {
    let until = Instant::now() + Duration::from_secs(5);
    loop {
        let c = server.counts();
        let closed: u64 = c["close_codes"].as_object().unwrap().values().map(n).sum();
        if closed >= sessions || Instant::now() > until {
            return c;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// scripts/grpc_server.py on free loopback ports; killed on drop.
pub struct PyGrpc {
    child: Child,
    pub addr: String,
    pub counts_addr: String,
}

impl PyGrpc {
    pub fn start(flags: &[&str]) -> Option<PyGrpc> {
        let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".into());
        let has = Command::new(&python)
            .args(["-c", "import grpc, grpc_reflection, grpc_tools"])
            .output();
        if !has.is_ok_and(|o| o.status.success()) {
            eprintln!(
                "skipped: Python grpcio is not installed (scripts/setup-test-deps.sh installs it)"
            );
            return None;
        }
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/grpc_server.py");
        let mut child = Command::new(python)
            .arg(script)
            .arg(port.to_string())
            .args(flags)
            .stdout(Stdio::piped())
            .spawn()
            .expect("start scripts/grpc_server.py");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let words: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(
            words.first(),
            Some(&"listening"),
            "grpc_server.py said {line:?}"
        );
        Some(PyGrpc {
            child,
            addr: format!("127.0.0.1:{}", words[1]),
            counts_addr: format!("127.0.0.1:{}", words[2]),
        })
    }

    pub fn counts(&self) -> Value {
        serde_json::from_str(&http_get(&self.counts_addr, "/counts")).unwrap()
    }
}

impl Drop for PyGrpc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
