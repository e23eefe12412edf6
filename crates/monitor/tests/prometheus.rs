//! Real Prometheus expositions: the built-in target's `/metrics`, and Debian's
//! `prometheus-node-exporter` (installed by scripts/install-test-deps.sh) on a free loopback
//! port, read through the monitor and checked against what is known independently.

mod common;

use common::mean_of;
use loadlab_monitor::{Endpoint, MetricKind, Monitor};
use loadlab_scenario::monitor::{parse_series_selector, MonitorConfig, PrometheusWatch};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn endpoint(name: &str, url: String, series: &[&str]) -> PrometheusWatch {
    PrometheusWatch {
        name: name.into(),
        url,
        series: series
            .iter()
            .map(|s| parse_series_selector(s).unwrap())
            .collect(),
    }
}

/// One GET on a fresh connection; returns the status code.
fn get(addr: SocketAddr, path: &str) -> u16 {
    let mut s = TcpStream::connect(addr).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut reply = String::new();
    s.read_to_string(&mut reply).unwrap();
    reply
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0)
}

#[test]
fn the_built_in_targets_metrics() {
    let target = loadlab_builtin_target::spawn(loadlab_builtin_target::TargetConfig {
        listen: "127.0.0.1:0".parse().unwrap(),
        ..Default::default()
    })
    .unwrap();
    let url = format!("{}/metrics", target.url());
    let watch = endpoint(
        "app",
        url.clone(),
        &[
            r#"http_requests_total{route="/api/ping"}"#,
            r#"http_requests_total{code="404"}"#,
            "process_resident_memory_bytes",
            "http_requests_in_flight",
            "loadlab_target_service_time_seconds_count",
            r#"http_request_duration_seconds_bucket{le="+Inf"}"#,
            "no_such_metric_total",
        ],
    );

    // Exact counter rates, scraping by hand.
    let mut app = Endpoint::new(&watch, Duration::from_secs(2));
    let first = app.scrape();
    assert_eq!(first.error, None);
    let t0 = Instant::now();
    for _ in 0..40 {
        assert_eq!(get(target.addr, "/api/ping"), 200);
    }
    for _ in 0..3 {
        assert_eq!(get(target.addr, "/nope"), 404);
    }
    std::thread::sleep(Duration::from_millis(100));
    let second = app.scrape();
    let dt_upper = t0.elapsed().as_secs_f64() + 0.05;
    let value = |name: &str| {
        second
            .values
            .iter()
            .find(|(n, _)| n == &format!("prometheus.app.{name}"))
            .map(|(_, v)| *v)
            .unwrap_or_else(|| panic!("{name} in {second:#?}"))
    };
    let ping_rate = value(r#"http_requests_total{route="/api/ping"}"#);
    assert!(
        ping_rate * dt_upper >= 40.0 && ping_rate < 40.0 / 0.1,
        "{ping_rate}/s"
    );
    let ratio = value(r#"http_requests_total{code="404"}"#) / ping_rate;
    assert!(
        (ratio - 3.0 / 40.0).abs() < 1e-9,
        "404s appear mid-run and count from zero: {ratio}"
    );
    assert!(value("process_resident_memory_bytes") > 1e6);
    assert_eq!(value("http_requests_in_flight"), 0.0);
    let service = value("loadlab_target_service_time_seconds_count");
    assert!(
        (service / ping_rate - 1.0).abs() < 1e-9,
        "one service time per ping"
    );
    assert!(value(r#"http_request_duration_seconds_bucket{le="+Inf"}"#) > ping_rate);
    // This target runs inside the test's own process, as in `loadlab demo`: said, so that
    // its CPU is not counted twice beside the generator's.
    assert_eq!(value("includes_generator"), 1.0);
    assert_eq!(
        second.unmatched,
        vec!["prometheus.app.no_such_metric_total"]
    );
    let kind = |name: &str| {
        second
            .kinds
            .iter()
            .find(|(n, _)| n.ends_with(name))
            .map(|(_, k)| *k)
    };
    assert_eq!(
        kind("process_resident_memory_bytes"),
        Some(MetricKind::Gauge)
    );
    assert_eq!(kind(r#"{route="/api/ping"}"#), Some(MetricKind::Counter));

    // Through the monitor's threads: values every interval, one warning for the bad selector.
    let config = MonitorConfig {
        interval: Duration::from_millis(250),
        host: false,
        prometheus: vec![watch],
        ..MonitorConfig::default()
    };
    let mut monitor = Monitor::start(&config).unwrap();
    let addr = target.addr;
    let load = std::thread::spawn(move || {
        let end = Instant::now() + Duration::from_millis(1300);
        while Instant::now() < end {
            get(addr, "/api/ping");
            std::thread::sleep(Duration::from_millis(5));
        }
    });
    load.join().unwrap();
    let mut samples = monitor.drain();
    let report = monitor.stop();
    samples.extend(report.samples);
    let rate = mean_of(
        &samples,
        r#"prometheus.app.http_requests_total{route="/api/ping"}"#,
        1,
    );
    assert!((20.0..=250.0).contains(&rate), "{rate} pings/s");
    assert!(samples
        .iter()
        .all(|s| s.missing == ["prometheus.app.no_such_metric_total"]));
    let warnings: Vec<_> = samples.iter().flat_map(|s| &s.warnings).collect();
    assert_eq!(warnings.len(), 1, "{warnings:#?}");
    assert_eq!(report.warnings.len(), 1);
    assert_eq!(
        report.prometheus_kinds[r#"prometheus.app.http_requests_total{route="/api/ping"}"#],
        MetricKind::Counter
    );
    assert!(report.cost.samples >= 5, "{:?}", report.cost);
}

#[test]
fn an_endpoint_that_is_down_is_missing_with_one_warning() {
    let port = free_port();
    let config = MonitorConfig {
        interval: Duration::from_millis(200),
        host: false,
        prometheus: vec![endpoint(
            "down",
            format!("http://127.0.0.1:{port}/metrics"),
            &["up"],
        )],
        ..MonitorConfig::default()
    };
    let mut monitor = Monitor::start(&config).unwrap();
    std::thread::sleep(Duration::from_millis(700));
    let mut samples = monitor.drain();
    samples.extend(monitor.stop().samples);
    assert!(samples.len() >= 3);
    assert!(
        samples.iter().all(|s| s.missing == ["prometheus.down"]),
        "{samples:#?}"
    );
    let warnings: Vec<_> = samples.iter().flat_map(|s| &s.warnings).collect();
    assert_eq!(warnings.len(), 1, "{warnings:#?}");
    assert!(warnings[0]
        .message
        .contains(&format!("cannot read http://127.0.0.1:{port}/metrics")));
}

fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

const NODE_EXPORTER: &str = "/usr/bin/prometheus-node-exporter";

#[test]
fn debians_node_exporter() {
    if !std::path::Path::new(NODE_EXPORTER).exists() {
        println!("skipped: {NODE_EXPORTER} is not installed (scripts/install-test-deps.sh installs it with apt-get)");
        return;
    }
    let port = free_port();
    let mut child = common::Reaped(
        Command::new(NODE_EXPORTER)
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start node-exporter"),
    );
    let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    let started = Instant::now();
    while TcpStream::connect(addr).is_err() {
        assert!(
            child.0.try_wait().unwrap().is_none(),
            "node-exporter exited"
        );
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "node-exporter did not listen"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let config = MonitorConfig {
        interval: Duration::from_millis(500),
        host: true,
        prometheus: vec![endpoint(
            "node",
            format!("http://{addr}/metrics"),
            &[
                r#"node_cpu_seconds_total{mode="idle"}"#,
                "node_memory_MemAvailable_bytes",
                "node_memory_MemTotal_bytes",
                "node_load1",
            ],
        )],
        ..MonitorConfig::default()
    };
    let mut monitor = Monitor::start(&config).unwrap();
    std::thread::sleep(Duration::from_millis(1800));
    let mut samples = monitor.drain();
    let report = monitor.stop();
    samples.extend(report.samples);
    assert!(report.warnings.is_empty(), "{:#?}", report.warnings);
    assert!(
        samples
            .iter()
            .all(|s| !s.values.contains_key("prometheus.node.includes_generator")),
        "node-exporter is another process"
    );
    // Memory: node-exporter and the monitor read the same kernel numbers.
    let total = mean_of(&samples, "prometheus.node.node_memory_MemTotal_bytes", 0);
    assert_eq!(total, mean_of(&samples, "host.memory.total_bytes", 0));
    let available = mean_of(
        &samples,
        "prometheus.node.node_memory_MemAvailable_bytes",
        0,
    );
    let ours = mean_of(&samples, "host.memory.available_bytes", 0);
    assert!(
        (available / ours - 1.0).abs() < 0.05,
        "{available} vs {ours}"
    );
    // CPU: idle seconds per second is at most the number of CPUs.
    let cpus = mean_of(&samples, "host.cpu_count", 0);
    let idle = mean_of(
        &samples,
        r#"prometheus.node.node_cpu_seconds_total{mode="idle"}"#,
        0,
    );
    assert!(
        (0.0..=cpus * 1.1).contains(&idle),
        "{idle} idle CPUs of {cpus}"
    );
    assert!(mean_of(&samples, "prometheus.node.node_load1", 0) >= 0.0);
    assert_eq!(
        report.prometheus_kinds[r#"prometheus.node.node_cpu_seconds_total{mode="idle"}"#],
        MetricKind::Counter
    );
    println!(
        "node-exporter: {idle:.2} idle CPUs of {cpus}, host {:.0}% busy",
        mean_of(&samples, "host.cpu_percent", 0)
    );
}
