//! The end-of-run summary's lines about resources and server-side latency: the load
//! generator's own CPU, timing and memory (and whether it was saturated), one line per
//! monitored source (mean and max), the monitor's warnings, and client against server time.

use crate::format::{format_ms, format_number};
use crate::run_values::{format_series, mean_max_words};
use crate::terminal_lines::kv;
use crate::Style;
use loadlab_metrics::resources::{series_path, Resources, SeriesSummary};
use loadlab_metrics::result::RunResult;
use std::io::{self, Write};

/// `server time ......: p50=… p95=… p99=… (Server-Timing); client − server at p50: …`.
pub(crate) fn server_time(r: &RunResult, out: &mut dyn Write) -> io::Result<()> {
    let Some(s) = r.server_latency_ms.filter(|s| s.count > 0) else {
        return Ok(());
    };
    kv(
        out,
        "server time",
        &format!(
            "p50={} p95={} p99={} as the responses reported; client − server at p50: {} (network and queueing in front of the application)",
            format_ms(s.p50),
            format_ms(s.p95),
            format_ms(s.p99),
            format_ms((r.latency_ms.p50 - s.p50).max(0.0))
        ),
    )
}

/// `slowest traces ..: 1.24s GET /a 4bf92f35…, …`: the three slowest traced requests.
pub(crate) fn slowest(r: &RunResult, out: &mut dyn Write) -> io::Result<()> {
    let mut all: Vec<(&str, &loadlab_metrics::SlowRequest)> = r
        .steps
        .iter()
        .flat_map(|s| s.slowest.iter().map(move |e| (s.name.as_str(), e)))
        .collect();
    if all.is_empty() {
        return Ok(());
    }
    all.sort_by(|a, b| b.1.latency_ms.total_cmp(&a.1.latency_ms));
    let text: Vec<String> = all
        .iter()
        .take(3)
        .map(|(step, e)| format!("{} {step} trace {}", format_ms(e.latency_ms), e.trace_id))
        .collect();
    kv(out, "slowest traces", &text.join("; "))
}

/// One line per source that was sampled, then the monitor's warnings; a merged run says
/// each segment's apart.
pub(crate) fn resources(r: &RunResult, out: &mut dyn Write, style: Style) -> io::Result<()> {
    let Some(res) = &r.resources else {
        return Ok(());
    };
    let parts: Vec<_> = if res.segments.is_empty() {
        vec![res]
    } else {
        res.segments.iter().collect()
    };
    for part in parts {
        let suffix = part
            .segment
            .map(|s| format!(" (segment {s})"))
            .unwrap_or_default();
        host_line(part, &suffix, out)?;
        process_lines(part, &suffix, out)?;
        prometheus_lines(part, out)?;
        monitor_lines(part, out, style)?;
    }
    Ok(())
}

/// A series with at least one sample.
fn sampled<'a>(part: &'a Resources, name: &str) -> Option<&'a SeriesSummary> {
    part.get(name).filter(|s| s.samples > 0)
}

/// `host ...: cpu 45% busy (max 80%), waiting for a cpu 3% of the time, memory 40% used, …`.
fn host_line(part: &Resources, suffix: &str, out: &mut dyn Write) -> io::Result<()> {
    let Some(h) = sampled(part, "host.cpu_percent") else {
        return Ok(());
    };
    let mut text = format!("cpu {} busy", mean_max_words("host.cpu_percent", h));
    // /proc/stat samples busy CPUs at the tick; the processes' exact counters say
    // more when work came in short bursts (docs/monitoring.md).
    if let Some(load) = part
        .host_load
        .as_ref()
        .filter(|l| l.host_cpu_percent > h.mean + 0.5)
    {
        text.push_str(&format!(
            " by /proc/stat, {:.1}% by the processes' own counters",
            load.host_cpu_percent
        ));
    }
    if let Some(p) = sampled(part, "host.pressure.cpu_some_percent") {
        text.push_str(&format!(", waiting for a cpu {:.0}% of the time", p.mean));
    }
    if let Some(m) = sampled(part, "host.memory.used_percent") {
        text.push_str(&format!(", memory {:.0}% used", m.mean));
    }
    if let Some(top) = part.top_processes.first() {
        text.push_str(&format!(
            ", busiest other: {} {:.0}% of a core",
            top.name, top.cpu_percent
        ));
    }
    kv(out, &format!("host{suffix}"), &text)
}

/// One line per monitored process or cgroup: its CPU and memory.
fn process_lines(part: &Resources, suffix: &str, out: &mut dyn Write) -> io::Result<()> {
    let mut sources: Vec<(String, String)> = Vec::new();
    for (name, _) in part.all_series() {
        let path = series_path(&name);
        if path.len() == 3 && matches!(path[0], "processes" | "cgroups") {
            let key = (path[0].to_string(), path[1].to_string());
            if !sources.contains(&key) {
                sources.push(key);
            }
        }
    }
    for (source, name) in sources {
        let mut text = Vec::new();
        let cpu = format!("{source}.{name}.cpu_percent");
        if let Some(s) = sampled(part, &cpu) {
            text.push(format!("cpu {} of a core", mean_max_words(&cpu, s)));
        }
        for field in ["rss_bytes", "memory_bytes"] {
            let series = format!("{source}.{name}.{field}");
            if let Some(s) = sampled(part, &series) {
                text.push(format!("memory {}", mean_max_words(&series, s)));
            }
        }
        if !text.is_empty() {
            kv(out, &format!("{name}{suffix}"), &text.join(", "))?;
        }
    }
    Ok(())
}

/// One line per scraped Prometheus series: its mean and max.
fn prometheus_lines(part: &Resources, out: &mut dyn Write) -> io::Result<()> {
    for (name, s) in part
        .all_series()
        .into_iter()
        .filter(|(n, _)| n.starts_with("prometheus."))
    {
        kv(
            out,
            "prometheus",
            &format!(
                "{} {} (max {})",
                &name["prometheus.".len()..],
                format_series(&name, s.mean),
                format_series(&name, s.max)
            ),
        )?;
    }
    Ok(())
}

/// Ports running short, and the sources the monitor could not read.
fn monitor_lines(part: &Resources, out: &mut dyn Write, style: Style) -> io::Result<()> {
    for f in part
        .findings
        .iter()
        .filter(|f| f.kind == loadlab_metrics::resources::FindingKind::PortsPressure)
    {
        writeln!(out, "  {} {}", style.yellow("monitor:"), f.message)?;
    }
    for w in &part.warnings {
        writeln!(
            out,
            "  {} {}: {}",
            style.yellow("monitor:"),
            w.source,
            w.message
        )?;
    }
    Ok(())
}

/// Shown when the generator, not the target, was the bottleneck.
const SATURATED_WARNING: &str =
    "the load generator was saturated: results understate the target's capacity and overstate its latency";

pub(crate) fn generator(r: &RunResult, out: &mut dyn Write, style: Style) -> io::Result<()> {
    let g = &r.generator;
    let cores = if g.cores == 1 { "core" } else { "cores" };
    let threads = if g.threads == 1 { "thread" } else { "threads" };
    kv(
        out,
        "generator",
        &(format!(
            "cpu {:.1}% of {} worker {threads} ({} {cores} available), saturated: {}, scheduler lag p99={}, max rss {}",
            g.cpu_percent,
            g.threads,
            g.cores,
            if g.saturated { "yes" } else { "no" },
            format_ms(g.scheduler_lag_ms_p99),
            format_bytes(g.max_rss_bytes)
        ) + &went_through(g)),
    )?;
    if g.saturated {
        writeln!(out, "  {}", style.yellow(&format!("! {SATURATED_WARNING}")))?;
    }
    Ok(())
}

/// `, pause probe p99=0.25ms, waiting for a cpu 0.4%`: what the generator's threads went
/// through, on which its validity is judged.
fn went_through(g: &loadlab_metrics::result::Generator) -> String {
    let mut s = String::new();
    if let Some(p) = &g.pauses_ms {
        s.push_str(&format!(", pause probe p99={}", format_ms(p.p99)));
    }
    if let Some(w) = g.run_delay_share {
        s.push_str(&format!(", waiting for a cpu {:.1}%", 100.0 * w));
    }
    if let Some(steal) = g.steal_percent.filter(|s| *s >= 0.5) {
        s.push_str(&format!(", {steal:.0}% stolen"));
    }
    if let (Some(t), Some(floor)) = (&g.host_timer, g.delay_floor_ms) {
        s.push_str(&format!(
            ", host timer p95 {} (delays below {} are this host's resolution)",
            format_ms(t.p95_ms),
            format_ms(floor)
        ));
    }
    s
}

fn format_bytes(b: u64) -> String {
    const MIB: f64 = 1024.0 * 1024.0;
    if b == 0 {
        "n/a".to_string()
    } else if b < 1024 {
        format!("{b} B")
    } else if (b as f64) < MIB {
        format!("{} KiB", format_number((b as f64 / 1024.0).round()))
    } else {
        format!("{:.1} MiB", b as f64 / MIB)
    }
}
