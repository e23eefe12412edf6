//! Opens the HTML reports in headless Chromium (driven over the Chrome DevTools Protocol) and
//! checks what a reader gets: no console error, no network request of any kind, every chart
//! drawn with non-zero size and data marks; saves screenshots (PNG) and a PDF print as test
//! artifacts in `target/report-artifacts/`.
//!
//! Needs `/usr/bin/chromium` (or `$CHROMIUM`): run `scripts/install-test-deps.sh` (CI does).

mod common;
mod samples;

use base64::Engine;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn chromium() -> PathBuf {
    let path = std::env::var_os("CHROMIUM")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/chromium"));
    assert!(
        path.exists(),
        "{} not found: the HTML report test needs Chromium. Run `scripts/install-test-deps.sh` \
         (as root, or with sudo) to install it, or set CHROMIUM to its path.",
        path.display()
    );
    path
}

fn artifacts() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("target dir")
        .join("report-artifacts");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

struct Browser {
    child: Child,
    profile: PathBuf,
    ws: tungstenite::WebSocket<TcpStream>,
    next_id: u64,
    events: Vec<Value>,
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.profile);
    }
}

fn http_get(port: u16, path: &str) -> Option<String> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    // Read until the body is complete (Content-Length), whether or not the server closes.
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

impl Browser {
    fn launch(name: &str) -> Browser {
        let profile = Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("chromium-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&profile);
        std::fs::create_dir_all(&profile).unwrap();
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
            .arg(format!("--user-data-dir={}", profile.display()))
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("chromium starts");
        // "DevTools listening on ws://127.0.0.1:PORT/devtools/browser/..." on stderr.
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
            profile,
            ws,
            next_id: 0,
            events: Vec::new(),
        };
        for domain in [
            "Page.enable",
            "Runtime.enable",
            "Log.enable",
            "Network.enable",
        ] {
            b.call(domain, json!({}));
        }
        b
    }

    fn read(&mut self) -> Value {
        loop {
            let msg = self.ws.read().expect("CDP message");
            if let Ok(text) = msg.to_text() {
                if let Ok(v) = serde_json::from_str::<Value>(text) {
                    return v;
                }
            }
        }
    }

    fn call(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let text = json!({"id": id, "method": method, "params": params}).to_string();
        self.ws
            .send(tungstenite::Message::Text(text.into()))
            .expect("CDP send");
        loop {
            let v = self.read();
            if v["id"] == json!(id) {
                assert!(v.get("error").is_none(), "{method}: {v}");
                return v["result"].clone();
            }
            self.events.push(v);
        }
    }

    fn wait_for(&mut self, event: &str) {
        if self.events.iter().any(|e| e["method"] == event) {
            return;
        }
        loop {
            let v = self.read();
            let done = v["method"] == event;
            self.events.push(v);
            if done {
                return;
            }
        }
    }

    fn open(&mut self, file: &Path) -> String {
        let url = format!("file://{}", file.canonicalize().unwrap().display());
        self.events.clear();
        self.call("Page.navigate", json!({ "url": url }));
        self.wait_for("Page.loadEventFired");
        // Let late console messages and fetches arrive.
        self.call(
            "Runtime.evaluate",
            json!({"expression": "new Promise(r => setTimeout(r, 300))", "awaitPromise": true}),
        );
        url
    }

    fn eval(&mut self, expr: &str) -> Value {
        let r = self.call(
            "Runtime.evaluate",
            json!({"expression": expr, "returnByValue": true}),
        );
        assert!(r.get("exceptionDetails").is_none(), "{expr}: {r}");
        r["result"]["value"].clone()
    }

    /// Console errors, uncaught exceptions and browser-logged errors (CSP violations, failed loads).
    fn errors(&self) -> Vec<String> {
        self.events
            .iter()
            .filter_map(|e| match e["method"].as_str()? {
                "Runtime.consoleAPICalled" if e["params"]["type"] == "error" => {
                    Some(format!("console.error: {}", e["params"]["args"]))
                }
                "Runtime.exceptionThrown" => {
                    Some(format!("exception: {}", e["params"]["exceptionDetails"]))
                }
                "Log.entryAdded" if e["params"]["entry"]["level"] == "error" => {
                    Some(format!("log: {}", e["params"]["entry"]["text"]))
                }
                _ => None,
            })
            .collect()
    }

    /// Every request the page made besides loading itself.
    fn requests(&self, page: &str) -> Vec<String> {
        self.events
            .iter()
            .filter(|e| e["method"] == "Network.requestWillBeSent")
            .filter_map(|e| e["params"]["request"]["url"].as_str())
            .filter(|u| *u != page)
            .map(String::from)
            .collect()
    }

    /// Lays the page out as a window `width` CSS pixels wide.
    fn resize(&mut self, width: u32) {
        self.call(
            "Emulation.setDeviceMetricsOverride",
            json!({"width": width, "height": 900, "deviceScaleFactor": 1, "mobile": false}),
        );
    }

    /// Tables (by their first header cells) whose columns do not fit the page at the current
    /// width: a reader would have to find a scrollbar to see them.
    fn clipped_tables(&mut self) -> Vec<String> {
        let v = self.eval(CLIPPED_TABLES);
        v.as_array()
            .expect("a list")
            .iter()
            .map(|t| t.as_str().unwrap_or_default().to_string())
            .collect()
    }

    fn screenshot(&mut self, width: u32, path: &Path) {
        self.resize(width);
        let m = self.call("Page.getLayoutMetrics", json!({}));
        let height = m["cssContentSize"]["height"]
            .as_f64()
            .unwrap_or(900.0)
            .min(16_000.0);
        let shot = self.call(
            "Page.captureScreenshot",
            json!({"format": "png", "captureBeyondViewport": true,
                   "clip": {"x": 0, "y": 0, "width": width, "height": height, "scale": 1}}),
        );
        let png = base64::engine::general_purpose::STANDARD
            .decode(shot["data"].as_str().unwrap())
            .unwrap();
        assert!(png.starts_with(b"\x89PNG"), "a PNG");
        std::fs::write(path, png).unwrap();
    }
}

const CHART_PROBE: &str = r#"Array.from(document.querySelectorAll('svg.chart')).map(s => {
  const r = s.getBoundingClientRect();
  const g = s.querySelector('g[clip-path]');
  return { id: s.dataset.chart, width: r.width, height: r.height,
           marks: g ? g.querySelectorAll('path, circle, rect').length : 0,
           nodata: Array.from(s.querySelectorAll('text')).some(t => t.textContent === 'no data') };
})"#;

/// A table is clipped when its wrapper scrolls sideways, or the page itself does.
const CLIPPED_TABLES: &str = r#"(() => {
  const out = Array.from(document.querySelectorAll('.table-wrap'))
    .filter(w => w.scrollWidth > w.clientWidth + 1)
    .map(w => Array.from(w.querySelectorAll('th')).slice(0, 3).map(t => t.textContent).join(' | ')
      + ` (${w.scrollWidth} px in ${w.clientWidth})`);
  if (document.documentElement.scrollWidth > window.innerWidth + 1) {
    out.push(`the page (${document.documentElement.scrollWidth} px in ${window.innerWidth})`);
  }
  return out;
})()"#;

/// Widths readers commonly open a report at: a laptop and a desktop monitor.
const WIDTHS: [u32; 2] = [1280, 1920];

fn check_report(name: &str, doc: &loadlab_report::ReportDoc) {
    let dir = artifacts();
    let html = dir.join(format!("{name}.html"));
    std::fs::write(&html, loadlab_report::render_html(doc)).unwrap();
    let mut b = Browser::launch(name);
    let page = b.open(&html);
    assert_eq!(b.errors(), Vec::<String>::new(), "{name}: console errors");
    assert_eq!(
        b.requests(&page),
        Vec::<String>::new(),
        "{name}: network requests"
    );
    assert_eq!(b.eval("document.title"), json!(doc.title));
    assert_eq!(
        b.eval("document.querySelectorAll('#verdict li').length"),
        json!(doc.verdicts.len())
    );
    assert_eq!(
        b.eval("document.querySelectorAll('section h2').length"),
        json!(doc.sections.len())
    );
    let charts = b.eval(CHART_PROBE);
    let charts = charts.as_array().expect("chart list");
    let want: Vec<&str> = doc.charts().iter().map(|c| c.id.as_str()).collect();
    let got: Vec<&str> = charts.iter().map(|c| c["id"].as_str().unwrap()).collect();
    assert_eq!(got, want, "{name}: charts in the page");
    for c in charts {
        assert!(c["width"].as_f64().unwrap() > 300.0, "{name}: {c}");
        assert!(c["height"].as_f64().unwrap() > 80.0, "{name}: {c}");
        assert!(
            c["marks"].as_u64().unwrap() > 0,
            "{name}: chart without data marks: {c}"
        );
        assert_eq!(c["nodata"], json!(false), "{name}: {c}");
    }
    for width in WIDTHS {
        b.resize(width);
        assert_eq!(
            b.clipped_tables(),
            Vec::<String>::new(),
            "{name}: tables clipped at {width} px"
        );
        b.screenshot(width, &dir.join(format!("{name}-{width}.png")));
    }
    // Printed on A4 or Letter in portrait: about 700 CSS pixels between the margins.
    b.call("Emulation.setEmulatedMedia", json!({"media": "print"}));
    b.resize(700);
    assert_eq!(
        b.clipped_tables(),
        Vec::<String>::new(),
        "{name}: tables clipped in print"
    );
    b.call("Emulation.setEmulatedMedia", json!({"media": ""}));
    let pdf = b.call("Page.printToPDF", json!({"printBackground": true}));
    let pdf = base64::engine::general_purpose::STANDARD
        .decode(pdf["data"].as_str().unwrap())
        .unwrap();
    assert!(
        pdf.starts_with(b"%PDF") && pdf.len() > 10_000,
        "{name}: printable"
    );
    std::fs::write(dir.join(format!("{name}.pdf")), pdf).unwrap();
    // No error appeared while printing or taking the screenshot either.
    assert_eq!(b.errors(), Vec::<String>::new(), "{name}: console errors");
    assert_eq!(
        b.requests(&page),
        Vec::<String>::new(),
        "{name}: network requests"
    );
}

#[test]
fn study_report_in_chromium() {
    let (s, runs) = samples::study();
    check_report("study", &loadlab_report::study_report(&s, &runs, None));
}

#[test]
fn run_report_in_chromium() {
    let plan = loadlab_report::PlannedLoad {
        vus: true,
        points: vec![(0.0, 0.0), (10.0, 50.0), (70.0, 50.0)],
    };
    let r = samples::run("checkout", 50, 20.0, 400.0, 3, 1);
    check_report("run", &loadlab_report::run_report(&r, Some(&plan)));
}

#[test]
fn sweep_and_capacity_reports_in_chromium() {
    let (s, runs) = samples::sweep();
    check_report("sweep", &loadlab_report::study_report(&s, &runs, None));
    check_report(
        "capacity",
        &loadlab_report::capacity_report(&samples::capacity(), &Default::default()),
    );
}

/// The checks above can fail: a page with a console error and a fetch is caught.
#[test]
fn the_browser_checks_catch_errors_and_requests() {
    let dir = artifacts();
    let bad = dir.join("negative-control.html");
    std::fs::write(
        &bad,
        "<!DOCTYPE html><html><head><title>bad</title></head><body>\
         <img src=\"http://127.0.0.1:9/missing.png\">\
         <script>console.error('deliberate error')</script></body></html>",
    )
    .unwrap();
    let mut b = Browser::launch("negative");
    let page = b.open(&bad);
    assert!(
        b.errors().iter().any(|e| e.contains("deliberate error")),
        "console error not seen: {:?}",
        b.errors()
    );
    assert!(
        b.requests(&page).iter().any(|u| u.contains("127.0.0.1:9")),
        "request not seen: {:?}",
        b.requests(&page)
    );

    // A table too wide for its page is seen as clipped.
    let wide = dir.join("negative-control-wide.html");
    let cells: String = (0..40)
        .map(|i| format!("<th>column-{i}-header</th>"))
        .collect();
    std::fs::write(
        &wide,
        format!(
            "<!DOCTYPE html><html><head><title>wide</title><style>.table-wrap {{ overflow-x: auto; }} \
             th {{ white-space: nowrap; }}</style></head><body><div class=\"table-wrap\"><table>\
             <tr>{cells}</tr></table></div></body></html>"
        ),
    )
    .unwrap();
    b.open(&wide);
    b.resize(1280);
    let clipped = b.clipped_tables();
    assert_eq!(clipped.len(), 1, "{clipped:?}");
    assert!(clipped[0].starts_with("column-0-header"), "{clipped:?}");
}
