//! Samples what a scenario's `monitor:` section (or `--monitor` flags) names and prints it
//! every interval, then the means and maxima and the findings — to try a selector before a
//! run, and until `loadlab run` samples them itself:
//!
//! ```text
//! cargo run --release -p loadlab-monitor --example watch -- [FILE] [--monitor NAME=WHAT]...
//!     [--duration 10s] [--interval 1s] [--no-host]
//! ```

use loadlab_monitor::{classify, summarize, Monitor, Sample, Thresholds};
use loadlab_scenario::monitor::{parse_monitor_flag, MonitorConfig};
use loadlab_scenario::parse_monitor_section;
use loadlab_scenario::units::parse_duration;
use std::process::ExitCode;
use std::time::{Duration, Instant};

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{e}");
            ExitCode::from(2)
        }
    }
}

fn run() -> Result<(), String> {
    let mut config = MonitorConfig::default();
    let mut duration = Duration::from_secs(10);
    let mut flags = Vec::new();
    let mut interval = None;
    let mut no_host = false;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or(format!("{arg} needs a value"));
        match arg.as_str() {
            "--monitor" => flags.push(value()?),
            "--duration" => duration = parse_duration(&value()?)?,
            "--interval" => interval = Some(parse_duration(&value()?)?),
            "--no-host" => no_host = true,
            file if !file.starts_with('-') => {
                let src = std::fs::read_to_string(file).map_err(|e| format!("{file}: {e}"))?;
                config = parse_monitor_section(&src, file).map_err(|e| e.to_string())?;
            }
            other => return Err(format!("unknown argument {other}")),
        }
    }
    for f in flags {
        config.apply_flag(parse_monitor_flag(&f).map_err(|e| e.to_string())?);
    }
    if let Some(i) = interval {
        config.interval = i;
    }
    if no_host {
        config.host = false;
    }
    let mut monitor = Monitor::start(&config).map_err(|e| e.to_string())?;
    let end = Instant::now() + duration;
    let mut all = Vec::new();
    while Instant::now() < end {
        let left = end.saturating_duration_since(Instant::now());
        if let Some(sample) = monitor.recv_timeout(left) {
            print_sample(&sample);
            all.push(sample);
        }
    }
    let report = monitor.stop();
    all.extend(report.samples);
    println!("\nmean / max over {} samples:", all.len());
    for (name, s) in summarize(&all) {
        if !name.starts_with("host.core.") {
            println!(
                "  {name:<60} {:>14} {:>14}",
                human(&name, s.mean),
                human(&name, s.max)
            );
        }
    }
    let findings = classify(
        &all,
        &loadlab_monitor::generator_facts(),
        &Thresholds::default(),
    );
    for f in &findings {
        println!("finding: {}", f.sentence());
    }
    println!("monitor cost: {:.2}% of one core", report.cost.cpu_percent);
    Ok(())
}

/// One line per sample: the headline host numbers and every monitored series.
fn print_sample(s: &Sample) {
    let mut parts = vec![format!("{:>6.1}s", s.elapsed_ms as f64 / 1e3)];
    for name in [
        "host.cpu_percent",
        "host.cpu.steal_percent",
        "host.pressure.cpu_some_percent",
        "host.memory.available_bytes",
        "host.tcp.time_wait",
        "generator.cpu_percent",
    ] {
        if let Some(v) = s.get(name) {
            parts.push(format!("{}={}", short(name), human(name, v)));
        }
    }
    for (name, v) in &s.values {
        if ["processes.", "cgroups.", "prometheus."]
            .iter()
            .any(|p| name.starts_with(p))
        {
            parts.push(format!("{}={}", short(name), human(name, *v)));
        }
    }
    println!("{}", parts.join("  "));
    if let Some(top) = s.top_processes.first() {
        println!(
            "        busiest other: {} {:.0}% of a core",
            top.name, top.cpu_percent
        );
    }
    for m in &s.missing {
        println!("        missing: {m}");
    }
    for w in &s.warnings {
        println!("        {w}");
    }
}

fn short(name: &str) -> &str {
    name.strip_prefix("processes.")
        .or_else(|| name.strip_prefix("cgroups."))
        .or_else(|| name.strip_prefix("prometheus."))
        .unwrap_or(name)
}

fn human(name: &str, v: f64) -> String {
    if name.ends_with("_bytes") {
        format!("{:.1}MiB", v / (1024.0 * 1024.0))
    } else if name.ends_with("_percent") {
        format!("{v:.1}%")
    } else if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.0}")
    } else {
        format!("{v:.3}")
    }
}
