//! What monitoring costs: CPU of the monitor's own threads (the sampler and the Prometheus
//! scraper) at a 1 s interval, with the host, two processes (one by pid, one by listening
//! port) and one Prometheus endpoint (the built-in target's `/metrics`) — the setup of issue
//! 10's "under 1% of a core". Run by `bench/monitor.sh`:
//!
//! ```text
//! cargo run --release -p loadlab-monitor --example monitor_cost -- [--runs 5] [--seconds 20] [--interval 1s]
//! ```
//!
//! Prints each run and the median, in percent of one core.

use loadlab_monitor::Monitor;
use loadlab_scenario::monitor::{
    parse_series_selector, MonitorConfig, ProcessSelector, ProcessWatch, PrometheusWatch,
};
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

fn main() {
    if std::env::args().nth(1).as_deref() == Some("--child-listen") {
        // The second monitored process: listens on a port and idles.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        println!("{}", listener.local_addr().unwrap().port());
        std::thread::sleep(Duration::from_secs(3600));
        return;
    }
    let mut runs = 5usize;
    let mut seconds = 20u64;
    let mut interval = Duration::from_secs(1);
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let value = args.next().unwrap_or_else(|| panic!("{arg} needs a value"));
        match arg.as_str() {
            "--runs" => runs = value.parse().expect("--runs N"),
            "--seconds" => seconds = value.parse().expect("--seconds S"),
            "--interval" => {
                interval = loadlab_scenario::units::parse_duration(&value).expect("--interval 1s")
            }
            _ => panic!("unknown argument {arg}"),
        }
    }

    let target = loadlab_builtin_target::spawn(loadlab_builtin_target::TargetConfig {
        listen: "127.0.0.1:0".parse().unwrap(),
        ..Default::default()
    })
    .expect("start the built-in target");
    let mut sleeper = Command::new("sleep")
        .arg("3600")
        .spawn()
        .expect("spawn sleep");
    let mut listener = Command::new(std::env::current_exe().unwrap())
        .arg("--child-listen")
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn the listening child");
    let mut port = String::new();
    BufReader::new(listener.stdout.take().unwrap())
        .read_line(&mut port)
        .unwrap();
    let port: u16 = port.trim().parse().expect("child port");

    let config = MonitorConfig {
        interval,
        host: true,
        processes: vec![
            ProcessWatch {
                name: "sleeper".into(),
                selector: ProcessSelector::Pid(sleeper.id()),
            },
            ProcessWatch {
                name: "listener".into(),
                selector: ProcessSelector::Port(port),
            },
        ],
        cgroups: Vec::new(),
        prometheus: vec![PrometheusWatch {
            name: "app".into(),
            url: format!("{}/metrics", target.url()),
            series: [
                "http_requests_total",
                "process_cpu_seconds_total",
                "process_resident_memory_bytes",
            ]
            .iter()
            .map(|s| parse_series_selector(s).unwrap())
            .collect(),
        }],
    };

    println!(
        "monitor cost: host + 2 processes + 1 Prometheus endpoint, interval {}, {runs} runs of {seconds} s",
        loadlab_scenario::units::format_duration(interval)
    );
    let mut percents = Vec::new();
    for run in 1..=runs {
        let mut monitor = Monitor::start(&config).expect("start the monitor");
        std::thread::sleep(Duration::from_secs(seconds));
        let drained = monitor.drain();
        let report = monitor.stop();
        let samples: Vec<_> = drained.iter().chain(&report.samples).collect();
        assert!(
            samples.iter().all(|s| s.missing.is_empty()),
            "a source was missing: {:?}",
            report.warnings
        );
        let series = samples.last().map_or(0, |s| s.values.len());
        let c = report.cost;
        println!(
            "run {run}: {:.3}% of one core ({:.2} ms CPU per sample, {} samples, {series} series)",
            c.cpu_percent,
            c.cpu_ms / c.samples.max(1) as f64,
            c.samples
        );
        percents.push(c.cpu_percent);
    }
    percents.sort_by(f64::total_cmp);
    let median = percents[percents.len() / 2];
    println!("median: {median:.3}% of one core (target: under 1%)");
    let _ = sleeper.kill();
    let _ = listener.kill();
    let _ = sleeper.wait();
    let _ = listener.wait();
}
