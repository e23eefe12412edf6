//! `--out prometheus-rw=…` into a real Prometheus (Debian's, installed by
//! scripts/install-test-deps.sh, started on a free loopback port with its remote-write
//! receiver), queried back through its HTTP API: per step and status, the counts equal the
//! run's. With `LOADLAB_TEST_PROMETHEUS_OTLP` naming a Prometheus ≥ 2.47, `--out otlp=…` goes
//! through its OTLP receiver and is checked the same way.

mod common;

use common::undisturbed::until_undisturbed;
use common::{exclusive, status_counts as counts, text, Target, BIN};
use serde_json::Value;
use std::collections::BTreeMap;
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const DEBIAN_PROMETHEUS: &str = "/usr/bin/prometheus";

const SCENARIO: &str = "name: live-prom
load: { model: open, rate: 60/s, duration: 2s }
flows:
  - name: api
    weight: 3
    steps: [ { name: ping, get: /api/ping } ]
  - name: other
    weight: 1
    steps: [ { name: nothing, get: /nothing-here } ]
";

struct Prometheus {
    child: Child,
    url: String,
    _dir: tempfile::TempDir,
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

fn start_prometheus(bin: &str, extra: &[&str]) -> Prometheus {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("prometheus.yml");
    std::fs::write(&config, "global:\n  scrape_interval: 1m\n").unwrap();
    let port = free_port();
    let child = Command::new(bin)
        .arg(format!("--config.file={}", config.display()))
        .arg(format!(
            "--storage.tsdb.path={}",
            dir.path().join("data").display()
        ))
        .arg(format!("--web.listen-address=127.0.0.1:{port}"))
        .arg("--web.enable-remote-write-receiver")
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start prometheus");
    let mut p = Prometheus {
        child,
        url: format!("http://127.0.0.1:{port}"),
        _dir: dir,
    };
    let started = Instant::now();
    loop {
        assert!(p.child.try_wait().unwrap().is_none(), "prometheus exited");
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "prometheus not ready"
        );
        if TcpStream::connect(("127.0.0.1", port)).is_ok()
            && get(&format!("{}/-/ready", p.url)).is_some()
        {
            return p;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn get(url: &str) -> Option<String> {
    let client = loadlab_http_client::client(Duration::from_secs(5), "test").ok()?;
    loadlab_http_client::send(client.get(url)).ok()?.text().ok()
}

/// `sum by (step, status) (loadlab_http_requests_total{testid="…"})`.
fn queried(prom: &Prometheus, testid: &str) -> BTreeMap<(String, String), u64> {
    let q = format!("sum by (step, status) (loadlab_http_requests_total{{testid=\"{testid}\"}})");
    let enc: String = q
        .bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'_' | b'-' | b'.' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect();
    // Evaluated a little after now: the last samples are stamped at their interval's end,
    // which may be a few milliseconds ahead of the query.
    let at = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        + 30;
    let url = format!("{}/api/v1/query?query={enc}&time={at}", prom.url);
    let body = get(&url).expect("query");
    let v: Value = serde_json::from_str(&body).unwrap();
    let mut out = BTreeMap::new();
    for r in v["data"]["result"].as_array().unwrap() {
        let key = (
            r["metric"]["step"].as_str().unwrap().to_string(),
            r["metric"]["status"].as_str().unwrap().to_string(),
        );
        let value: f64 = r["value"][1].as_str().unwrap().parse().unwrap();
        out.insert(key, value as u64);
    }
    out
}

/// A run labelled `testid=<testid>-<attempt>` writing to `out_flag`, made again while the host
/// disturbs it: the last attempt's run.json, stdout and label (each attempt's series are its
/// own).
fn run_into(out_flag: &str, testid: &str) -> (Value, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("s.yaml");
    std::fs::write(&file, SCENARIO).unwrap();
    let json = dir.path().join("run.json");
    let mut attempt = 0;
    let (_, result, (out, label)) = until_undisturbed(testid, || {
        attempt += 1;
        let label = format!("{testid}-{attempt}");
        let target = Target::start(&[]);
        let _ = std::fs::remove_file(&json);
        let out = Command::new(BIN)
            .arg("run")
            .arg(&file)
            .args(["--target", &target.url, "--no-progress", "--label"])
            .arg(format!("testid={label}"))
            .arg("--results")
            .arg(dir.path().join("results"))
            .arg("--json")
            .arg(&json)
            .arg(out_flag)
            .output()
            .unwrap();
        let result = std::fs::read_to_string(&json)
            .map(|t| serde_json::from_str(&t).unwrap())
            .unwrap_or(Value::Null);
        (out.status.code(), result, (out, label))
    });
    assert!(out.status.success(), "{}", text(&out));
    (
        result,
        String::from_utf8_lossy(&out.stdout).to_string(),
        label,
    )
}

/// The summary's line about output `kind`.
fn output_line(stdout: &str, kind: &str) -> String {
    stdout
        .lines()
        .find(|l| l.starts_with(&format!("output {kind} (")))
        .unwrap_or_else(|| panic!("no output line in {stdout}"))
        .to_string()
}

#[test]
fn remote_write_into_debians_prometheus_counts_equal_the_runs() {
    if !std::path::Path::new(DEBIAN_PROMETHEUS).exists() {
        println!("skipped: {DEBIAN_PROMETHEUS} is not installed (scripts/install-test-deps.sh installs it)");
        return;
    }
    let _lock = exclusive();
    let prom = start_prometheus(DEBIAN_PROMETHEUS, &[]);
    let testid = format!("rw-{}", std::process::id());
    let (result, stdout, testid) = run_into(
        &format!("--out=prometheus-rw={}/api/v1/write", prom.url),
        &testid,
    );
    let line = output_line(&stdout, "prometheus-rw");
    assert!(
        !line.contains("failed") && !line.contains("dropped"),
        "{line}"
    );
    let want = counts(&result);
    assert!(want.values().sum::<u64>() >= 100, "{want:?}");
    assert_eq!(queried(&prom, &testid), want, "{stdout}");
}

#[test]
fn otlp_into_prometheus_counts_equal_the_runs() {
    let Ok(bin) = std::env::var("LOADLAB_TEST_PROMETHEUS_OTLP") else {
        println!("skipped: LOADLAB_TEST_PROMETHEUS_OTLP names no Prometheus >= 2.47 (scripts/install-test-deps.sh can build one)");
        return;
    };
    let _lock = exclusive();
    let prom = start_prometheus(&bin, &["--enable-feature=otlp-write-receiver"]);
    let testid = format!("otlp-{}", std::process::id());
    let (result, stdout, testid) = run_into(
        &format!("--out=otlp={}/api/v1/otlp/v1/metrics", prom.url),
        &testid,
    );
    let line = output_line(&stdout, "otlp");
    assert!(
        !line.contains("failed") && !line.contains("dropped"),
        "{line}"
    );
    assert_eq!(queried(&prom, &testid), counts(&result), "{stdout}");
}
