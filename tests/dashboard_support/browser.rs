//! Headless Chromium driven over the Chrome DevTools Protocol, for the dashboard's page test
//! (the same way `crates/report/tests/report_browser.rs` drives it).

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn chromium() -> PathBuf {
    let path = std::env::var_os("CHROMIUM")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/chromium"));
    assert!(
        path.exists(),
        "{} not found: run `scripts/install-test-deps.sh` or set CHROMIUM",
        path.display()
    );
    path
}

pub fn http_get(port: u16, path: &str) -> Option<String> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    loop {
        let n = s.read(&mut chunk).ok()?;
        if n == 0 {
            break;
        }
        buf.extend_from_slice(&chunk[..n]);
        let text = String::from_utf8_lossy(&buf);
        if let Some((head, body)) = text.split_once("\r\n\r\n") {
            let len = head.lines().find_map(|l| {
                let (k, v) = l.split_once(':')?;
                k.eq_ignore_ascii_case("content-length")
                    .then(|| v.trim().parse::<usize>().ok())?
            });
            if len.is_some_and(|n| body.len() >= n) {
                return Some(body.to_string());
            }
        }
    }
    let text = String::from_utf8_lossy(&buf).to_string();
    text.split_once("\r\n\r\n").map(|(_, b)| b.to_string())
}

pub struct Browser {
    child: Child,
    /// Removed when the browser is dropped, after the browser is killed (fields drop after
    /// `drop` runs).
    _profile: tempfile::TempDir,
    ws: tungstenite::WebSocket<TcpStream>,
    next_id: u64,
    events: Vec<Value>,
}

impl Drop for Browser {
    /// Kills Chromium's whole process group: killed alone, its renderer and GPU processes
    /// went on writing into the profile for a moment after the profile was removed, and left
    /// it behind in /tmp.
    fn drop(&mut self) {
        // SAFETY: a plain signal to the group this Chromium leads (`process_group(0)`).
        unsafe {
            libc::kill(-(self.child.id() as libc::pid_t), libc::SIGKILL);
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Browser {
    pub fn launch(profile: tempfile::TempDir) -> Browser {
        let mut child = Command::new(chromium())
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-dev-shm-usage",
                "--remote-debugging-port=0",
                "--window-size=1280,900",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("about:blank")
            // Chromium's own temporary files (its `org.chromium.Chromium.*` singleton socket
            // directory) go in the profile too: killed, it would leave them in /tmp.
            .env("TMPDIR", profile.path())
            // Its own process group, so that all of its processes are killed with it.
            .process_group(0)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("chromium starts");
        let stderr = child.stderr.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(url) = line.strip_prefix("DevTools listening on ") {
                    let _ = tx.send(url.trim().to_string());
                }
            }
        });
        let browser_url = rx
            .recv_timeout(Duration::from_secs(30))
            .expect("chromium prints its DevTools address within 30 s");
        let port: u16 = browser_url
            .trim_start_matches("ws://127.0.0.1:")
            .split('/')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        let page_url = loop {
            let list: Value = http_get(port, "/json/list")
                .and_then(|b| serde_json::from_str(&b).ok())
                .unwrap_or(Value::Null);
            if let Some(u) = list.as_array().and_then(|a| {
                a.iter()
                    .find(|t| t["type"] == "page")
                    .and_then(|t| t["webSocketDebuggerUrl"].as_str())
            }) {
                break u.to_string();
            }
            assert!(Instant::now() < deadline, "chromium lists no page");
            std::thread::sleep(Duration::from_millis(100));
        };
        let stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .unwrap();
        let (ws, _) = tungstenite::client::client(page_url.as_str(), stream).expect("CDP connects");
        let mut b = Browser {
            child,
            _profile: profile,
            ws,
            next_id: 0,
            events: Vec::new(),
        };
        for domain in ["Page.enable", "Runtime.enable", "Log.enable"] {
            b.call(domain, json!({}));
        }
        b
    }

    pub fn call(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let text = json!({"id": id, "method": method, "params": params}).to_string();
        self.ws
            .send(tungstenite::Message::Text(text.into()))
            .expect("CDP send");
        loop {
            let msg = self.ws.read().expect("CDP message");
            let Ok(v) = serde_json::from_str::<Value>(msg.to_text().unwrap_or("")) else {
                continue;
            };
            if v["id"] == json!(id) {
                assert!(v.get("error").is_none(), "{method}: {v}");
                return v["result"].clone();
            }
            self.events.push(v);
        }
    }

    pub fn eval(&mut self, expr: &str) -> Value {
        let r = self.call(
            "Runtime.evaluate",
            json!({"expression": expr, "returnByValue": true, "awaitPromise": true}),
        );
        assert!(r.get("exceptionDetails").is_none(), "{expr}: {r}");
        r["result"]["value"].clone()
    }

    /// Console errors, uncaught exceptions and browser-logged errors.
    pub fn errors(&self) -> Vec<String> {
        self.events
            .iter()
            .filter_map(|e| match e["method"].as_str()? {
                "Runtime.consoleAPICalled" if e["params"]["type"] == "error" => {
                    Some(format!("console.error: {}", e["params"]["args"]))
                }
                "Runtime.exceptionThrown" => Some(format!("exception: {}", e["params"])),
                "Log.entryAdded" if e["params"]["entry"]["level"] == "error" => {
                    Some(format!("log: {}", e["params"]["entry"]["text"]))
                }
                _ => None,
            })
            .collect()
    }

    /// The page's request count (`#total-requests`) once it is above `above`, within 10 s.
    pub fn count_above(&mut self, above: u64) -> u64 {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let n = self
                // Null-safe: right after the navigation the old document may still be there.
                .eval("Number((document.getElementById('total-requests') || {}).textContent || 0)")
                .as_u64()
                .unwrap_or(0);
            if n > above || Instant::now() > deadline {
                return n;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}
