//! The end-of-run summary's lines about resources and server-side latency: one line per
//! monitored source (mean and max), the monitor's warnings, and client against server time.

use crate::format::format_ms;
use crate::run_doc::{format_series, mean_max_words};
use crate::Style;
use loadlab_metrics::resources::series_path;
use loadlab_metrics::result::RunResult;
use std::io::{self, Write};

/// `server time ......: p50=… p95=… p99=… (Server-Timing); client − server at p50: …`.
pub(crate) fn server_time(r: &RunResult, out: &mut dyn Write, kv: KeyValue) -> io::Result<()> {
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
pub(crate) fn slowest(r: &RunResult, out: &mut dyn Write, kv: KeyValue) -> io::Result<()> {
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

/// A `label: value` line of the summary.
pub(crate) type KeyValue = fn(&mut dyn Write, &str, &str) -> io::Result<()>;

/// One line per source that was sampled, then the monitor's warnings.
pub(crate) fn resources(
    r: &RunResult,
    out: &mut dyn Write,
    style: Style,
    kv: KeyValue,
) -> io::Result<()> {
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
        let get = |name: &str| part.get(name).filter(|s| s.samples > 0);
        if let Some(h) = get("host.cpu_percent") {
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
            if let Some(p) = get("host.pressure.cpu_some_percent") {
                text.push_str(&format!(", waiting for a cpu {:.0}% of the time", p.mean));
            }
            if let Some(m) = get("host.memory.used_percent") {
                text.push_str(&format!(", memory {:.0}% used", m.mean));
            }
            if let Some(top) = part.top_processes.first() {
                text.push_str(&format!(
                    ", busiest other: {} {:.0}% of a core",
                    top.name, top.cpu_percent
                ));
            }
            kv(out, &format!("host{suffix}"), &text)?;
        }
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
            if let Some(s) = get(&cpu) {
                text.push(format!("cpu {} of a core", mean_max_words(&cpu, s)));
            }
            for field in ["rss_bytes", "memory_bytes"] {
                let series = format!("{source}.{name}.{field}");
                if let Some(s) = get(&series) {
                    text.push(format!("memory {}", mean_max_words(&series, s)));
                }
            }
            if !text.is_empty() {
                kv(out, &format!("{name}{suffix}"), &text.join(", "))?;
            }
        }
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
    }
    Ok(())
}
