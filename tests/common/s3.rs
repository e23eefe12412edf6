//! A real S3-compatible server for the tests: moto in server mode (PyPI `moto[server]`,
//! installed by scripts/setup-test-deps.sh), on a free loopback port, killed on drop.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct Moto {
    child: Child,
    pub endpoint: String,
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

impl Moto {
    pub fn start() -> Moto {
        let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".into());
        let port = free_port();
        let child = Command::new(&python)
            .args(["-m", "moto.server", "-H", "127.0.0.1", "-p", &port.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start `{python} -m moto.server`: {e} (scripts/setup-test-deps.sh installs moto[server])"));
        let moto = Moto {
            child,
            endpoint: format!("http://127.0.0.1:{port}"),
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        while moto.request("GET", "/").is_none() {
            assert!(
                Instant::now() < deadline,
                "moto did not answer on port {port} within 30 s (is moto[server] installed? scripts/setup-test-deps.sh)"
            );
            std::thread::sleep(Duration::from_millis(200));
        }
        moto
    }

    /// One plain HTTP request; the status code, `None` when nothing answers.
    fn request(&self, method: &str, path: &str) -> Option<u16> {
        let addr = self.endpoint.trim_start_matches("http://");
        let mut s = TcpStream::connect(addr).ok()?;
        s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
        write!(
            s,
            "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        )
        .ok()?;
        let mut text = String::new();
        s.read_to_string(&mut text).ok()?;
        text.split_whitespace().nth(1)?.parse().ok()
    }

    pub fn create_bucket(&self, name: &str) {
        let status = self.request("PUT", &format!("/{name}"));
        assert_eq!(status, Some(200), "create bucket {name}");
    }

    /// The environment a pod gets from its Secret and `--env`: credentials, endpoint, HTTP.
    pub fn env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("AWS_ACCESS_KEY_ID", "test".into()),
            ("AWS_SECRET_ACCESS_KEY", "test".into()),
            ("AWS_REGION", "us-east-1".into()),
            ("AWS_ENDPOINT_URL", self.endpoint.clone()),
            ("AWS_ALLOW_HTTP", "true".into()),
        ]
    }
}

impl Drop for Moto {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
