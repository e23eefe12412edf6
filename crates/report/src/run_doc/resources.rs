//! Who was the bottleneck, as a run report shows it: the verdict that opens the report
//! (the host was saturated and by whom, the target was CPU-bound or overloaded), the
//! Resources section (host CPU split into generator / monitored processes / everything else,
//! each monitored process's CPU and memory, chosen Prometheus series, a table of means and
//! maxima), and client against server latency per step.

use crate::chart::{Axis, Chart, Series, SeriesKind, Unit};
use crate::doc::{Block, Level, Section, Table, Verdict};
use crate::format::{format_bytes, format_ms};
use crate::run_values::format_series;
use crate::words::capitalize;
use loadlab_metrics::resources::{series_path, Resources};
use loadlab_metrics::result::{LatencySummary, RunResult};
use loadlab_metrics::{InvalidKind, TargetVerdictKind};
use std::collections::BTreeSet;

/// The bottleneck in a sentence or two, most important first: a contended host, a
/// CPU-bound or overloaded target, memory growth; else what the resources showed.
pub fn bottleneck_verdicts(r: &RunResult) -> Vec<Verdict> {
    let mut v = Vec::new();
    for reason in &r.validity.reasons {
        if matches!(
            reason.kind,
            InvalidKind::HostContended | InvalidKind::CpuStolen
        ) {
            v.push(Verdict::new(Level::Fail, sentence(&reason.message)));
        }
    }
    for kind in [
        TargetVerdictKind::TargetCpuBound,
        TargetVerdictKind::TargetOverloaded,
        TargetVerdictKind::MemoryGrowth,
        TargetVerdictKind::SharesHostWithTarget,
    ] {
        for verdict in r.verdicts.iter().filter(|t| t.kind == kind) {
            v.push(Verdict::new(Level::Warn, sentence(&verdict.message)));
        }
    }
    if v.is_empty() {
        if let Some(res) = r.resources.as_ref().filter(|res| res.samples > 0) {
            v.push(Verdict::new(
                Level::Info,
                format!("No resource limit reached: {}.", usage_words(res)),
            ));
        }
    }
    v
}

/// `The host …` with one full stop.
fn sentence(text: &str) -> String {
    format!("{}.", capitalize(text.trim_end_matches('.')))
}

fn mean(res: &Resources, series: &str) -> Option<f64> {
    res.get(series).filter(|s| s.samples > 0).map(|s| s.mean)
}

/// Names of the monitored processes or cgroups that have `field`.
fn names(res: &Resources, source: &str, field: &str) -> BTreeSet<String> {
    res.all_series()
        .into_iter()
        .filter_map(|(name, _)| {
            let path = series_path(&name);
            (path.len() == 3 && path[0] == source && path[2] == field).then(|| path[1].to_string())
        })
        .collect()
}

/// `host CPU 45% busy (max 60%), generator 3% of a core, target 120% of a core and 45 MiB`.
fn usage_words(res: &Resources) -> String {
    let mut parts = Vec::new();
    if let Some(h) = res.get("host.cpu_percent") {
        parts.push(format!("host CPU {:.0}% busy (max {:.0}%)", h.mean, h.max));
    }
    if let Some(g) = mean(res, "generator.cpu_percent") {
        parts.push(format!("generator {g:.0}% of a core"));
    }
    for name in names(res, "processes", "cpu_percent") {
        let cpu = mean(res, &format!("processes.{name}.cpu_percent")).unwrap_or(0.0);
        let mut text = format!("{name} {cpu:.0}% of a core");
        if let Some(rss) = mean(res, &format!("processes.{name}.rss_bytes")) {
            text.push_str(&format!(" and {}", format_bytes(rss)));
        }
        parts.push(text);
    }
    for name in names(res, "cgroups", "cpu_percent") {
        let cpu = mean(res, &format!("cgroups.{name}.cpu_percent")).unwrap_or(0.0);
        parts.push(format!("{name} (cgroup) {cpu:.0}% of a core"));
    }
    parts.join(", ")
}

/// A series over the run as a step line: each sample's value from its start to its end
/// (CPU shares and rates are averages over the sample).
fn points(res: &Resources, series: &str) -> Vec<(f64, f64)> {
    let mut out: Vec<(f64, f64)> = Vec::new();
    let mut end = None;
    for i in &res.intervals {
        let Some(v) = i.values.get(series) else {
            continue;
        };
        out.push(((i.t - i.length_s).max(0.0), *v));
        end = Some((i.t, *v));
    }
    out.extend(end);
    out
}

/// Host CPU per interval as stacked shares of all CPUs: the generator, the monitored
/// processes, and everything else.
fn host_cpu_chart(res: &Resources, warmup_s: f64, id: &str) -> Option<Chart> {
    let monitored = names(res, "processes", "cpu_percent");
    let mut gen = Vec::new();
    let mut mon = Vec::new();
    let mut all = Vec::new();
    for i in &res.intervals {
        let (Some(host), Some(cpus)) = (
            i.values.get("host.cpu_percent"),
            i.values.get("host.cpu_count"),
        ) else {
            continue;
        };
        let cpus = cpus.max(1.0);
        let t = (i.t - i.length_s).max(0.0);
        let g = i.values.get("generator.cpu_percent").unwrap_or(&0.0) / cpus;
        let m: f64 = monitored
            .iter()
            .filter(|n| {
                !i.values
                    .contains_key(&format!("processes.{n}.includes_generator"))
            })
            .filter_map(|n| i.values.get(&format!("processes.{n}.cpu_percent")))
            .sum::<f64>()
            / cpus;
        // Exporters' own CPU counters (`…cpu_seconds_total`, read as cores): an in-process
        // target's is inside the generator's process CPU, so it moves from that band to this.
        let (mut exported, mut in_generator) = (0.0, 0.0);
        for (series, v) in &i.values {
            // A process's CPU only (`node_cpu_seconds_total` is the host's, idle included).
            let process_cpu = [
                "process_cpu_seconds_total",
                "loadlab_target_cpu_seconds_total",
            ]
            .iter()
            .any(|name| series.ends_with(&format!(".{name}")));
            if !(series.starts_with("prometheus.") && process_cpu) {
                continue;
            }
            let source = series.split('.').nth(1).unwrap_or("");
            let share = v * 100.0 / cpus;
            exported += share;
            if i.values
                .contains_key(&format!("prometheus.{source}.includes_generator"))
            {
                in_generator += share;
            }
        }
        let g = (g - in_generator).max(0.0);
        let m = m + exported;
        // The processes' own exact counters when the tick-sampled busy share reads less.
        let processes = i.values.get("host.processes_cpu_percent").unwrap_or(&0.0) / cpus;
        // Flat over each sample (its shares are averages over it).
        for x in [t, i.t] {
            gen.push((x, g.min(100.0)));
            mon.push((x, (g + m).min(100.0)));
            all.push((x, host.max(g + m).max(processes).min(100.0)));
        }
    }
    if all.is_empty() {
        return None;
    }
    let mut c = Chart::new(
        id,
        "Host CPU: the generator, the monitored processes, everything else",
        Axis::linear("time since start (s)", Unit::Seconds),
        Axis::linear("% of all CPUs", Unit::Percent),
    )
    .describe("The host's busy CPU in each interval, stacked: the generator (loadlab), the monitored processes, and every other process. A tall top band means other work competed with the measurement.")
    .series(Series::new("everything else", SeriesKind::Area, 6, all))
    .series(Series::new("monitored processes", SeriesKind::Area, 2, mon))
    .series(Series::new("generator", SeriesKind::Area, 0, gen));
    super::charts::warmup_band(&mut c, warmup_s);
    Some(c)
}

/// One line per monitored process (and cgroup) of `field`, or `None` when there is none.
fn per_source_chart(
    res: &Resources,
    warmup_s: f64,
    id: &str,
    title: &str,
    axis: Axis,
    fields: [(&str, &str); 2],
) -> Option<Chart> {
    let mut c = Chart::new(
        id,
        title,
        Axis::linear("time since start (s)", Unit::Seconds),
        axis,
    );
    let mut color = 0;
    for (source, field) in fields {
        for name in names(res, source, field) {
            let pts = points(res, &format!("{source}.{name}.{field}"));
            if !pts.is_empty() {
                let label = if source == "cgroups" {
                    format!("{name} (cgroup)")
                } else {
                    name
                };
                c = c.series(Series::new(&label, SeriesKind::Step, color, pts));
                color += 1;
            }
        }
    }
    if c.series.is_empty() {
        return None;
    }
    super::charts::warmup_band(&mut c, warmup_s);
    Some(c)
}

/// The charts of a run's resources, in reading order.
pub fn resource_charts(res: &Resources, warmup_s: f64) -> Vec<Chart> {
    let mut out = Vec::new();
    out.extend(host_cpu_chart(res, warmup_s, "host-cpu"));
    out.extend(
        per_source_chart(
            res,
            warmup_s,
            "process-cpu",
            "CPU of the monitored processes",
            Axis::linear("% of one core", Unit::Percent),
            [("processes", "cpu_percent"), ("cgroups", "cpu_percent")],
        )
        .map(|c| c.describe("CPU of each monitored process (with its children) or cgroup, in % of one core: 200% is two full cores.")),
    );
    out.extend(
        per_source_chart(
            res,
            warmup_s,
            "process-memory",
            "Memory of the monitored processes",
            Axis::linear("memory", Unit::Bytes),
            [("processes", "rss_bytes"), ("cgroups", "memory_bytes")],
        )
        .map(|c| c.describe("Resident memory of each monitored process, or the memory charged to each cgroup: a line still rising at the end is a leak or a cache filling.")),
    );
    let endpoints: BTreeSet<String> = res
        .all_series()
        .into_iter()
        .filter_map(|(n, _)| {
            let p = series_path(&n);
            (p.len() >= 3 && p[0] == "prometheus").then(|| p[1].to_string())
        })
        .collect();
    for endpoint in endpoints {
        let prefix = format!("prometheus.{endpoint}.");
        let mut c = Chart::new(
            &format!("prometheus-{endpoint}"),
            &format!("Prometheus series of `{endpoint}`"),
            Axis::linear("time since start (s)", Unit::Seconds),
            Axis::linear("value (counters: per second)", Unit::Plain),
        )
        .describe("The series chosen in the monitor section, as scraped each interval: gauges as read, counters as their rate per second.");
        for (i, (name, _)) in res
            .all_series()
            .into_iter()
            .filter(|(n, _)| n.starts_with(&prefix))
            .enumerate()
        {
            let pts = points(res, &name);
            c = c.series(Series::new(&name[prefix.len()..], SeriesKind::Step, i, pts));
        }
        super::charts::warmup_band(&mut c, warmup_s);
        out.push(c);
    }
    out
}

/// Mean and max of every series but the per-core and per-interface ones.
fn resource_table(res: &Resources) -> Table {
    let mut t = Table::new(&["series", ">mean", ">max"]);
    for (name, s) in res.all_series() {
        // `….includes_generator` is a flag the charts read, not a measurement.
        if name.starts_with("host.core.")
            || name.starts_with("host.net.")
            || name.ends_with(".includes_generator")
            || s.samples == 0
        {
            continue;
        }
        t.row(cells![
            format!("`{name}`"),
            format_series(&name, s.mean),
            format_series(&name, s.max)
        ]);
    }
    t.with_note("Over the steady window (warm-up excluded). CPU of a process or cgroup is in % of one core; host CPU in % of all CPUs. Per-core and per-interface series are in the run JSON.")
}

/// Client beside server latency at p50, p95 and p99: the columns of the run's and the
/// study's client/server tables.
pub(crate) const CLIENT_SERVER_COLUMNS: [&str; 6] = [
    ">client p50",
    ">server p50",
    ">client p95",
    ">server p95",
    ">client p99",
    ">server p99",
];

fn summary_cells(l: &LatencySummary) -> [f64; 3] {
    [l.p50, l.p95, l.p99]
}

/// Client latency against what the server reported, per step (p50/p95/p99 and the
/// difference: network and queueing in front of the application).
fn server_split_table(r: &RunResult) -> Option<Table> {
    let steps: Vec<_> = r
        .steps
        .iter()
        .filter_map(|s| Some((s, s.server_latency_ms.filter(|l| l.count > 0)?)))
        .collect();
    if steps.is_empty() {
        return None;
    }
    let mut t = Table::new(&[&["step"][..], &CLIENT_SERVER_COLUMNS, &[">p50 difference"]].concat());
    for (s, server) in steps {
        let c = summary_cells(&s.latency_ms);
        let v = summary_cells(&server);
        t.row(cells![
            format!("`{}`", s.name),
            format_ms(c[0]),
            format_ms(v[0]),
            format_ms(c[1]),
            format_ms(v[1]),
            format_ms(c[2]),
            format_ms(v[2]),
            format_ms((c[0] - v[0]).max(0.0))
        ]);
    }
    Some(t.with_note(
        "Client latency is what loadlab measured (from the intended send time in the open model); server latency is what the responses reported (`Server-Timing` or the configured header). The difference is the network, connection handling and any queueing in front of the application. Each percentile is of its own distribution, so differences of percentiles are indicative.",
    ))
}

/// Each step's slowest requests with their trace ids (`defaults.trace: true`).
fn slowest_table(r: &RunResult) -> Option<Table> {
    let mut t = Table::new(&["step", ">latency", "trace id", ">at"]);
    for s in &r.steps {
        for e in &s.slowest {
            t.row(cells![
                format!("`{}`", s.name),
                format_ms(e.latency_ms),
                format!("`{}`", e.trace_id),
                e.at_s
                    .map(|a| crate::format::format_secs((a * 10.0).round() / 10.0))
                    .unwrap_or_default()
            ]);
        }
    }
    (!t.rows.is_empty()).then(|| t.with_note(format!("Each request carried a W3C `traceparent` with this trace id: search it in the tracing tool to see where its time went. `at`: the start of the {} slice it ended in.", super::charts::slice_length(r))))
}

/// The Resources section (`None` when nothing was monitored, no server timing came and no
/// request was traced).
pub(super) fn resources_section(r: &RunResult) -> Option<Section> {
    let split = server_split_table(r);
    let slowest = slowest_table(r);
    let res = r.resources.as_ref().filter(|res| !res.is_empty());
    if res.is_none() && split.is_none() && slowest.is_none() {
        return None;
    }
    let mut s = Section::new("resources", "Resources");
    if let Some(res) = res {
        let parts: Vec<&Resources> = if res.segments.is_empty() {
            vec![res]
        } else {
            res.segments.iter().collect()
        };
        for part in parts {
            if let Some(seg) = part.segment {
                s.push(Block::Heading(format!("Segment {seg}")));
            }
            if part.samples > 0 {
                s.push(Block::Text(format!("{}.", capitalize(&usage_words(part)))));
            }
            let findings: Vec<Verdict> = part
                .findings
                .iter()
                .map(|f| Verdict::new(Level::Warn, sentence(&f.message)))
                .collect();
            if !findings.is_empty() {
                s.push(Block::Notes(findings));
            }
            for mut c in resource_charts(part, r.warmup_s) {
                // The same time axis as the run's other time charts.
                c.x = Axis::time(super::charts::run_end_s(r));
                s.push(Block::chart(c));
            }
            s.push(Block::Table(resource_table(part)));
            if !part.warnings.is_empty() {
                s.push(Block::Notes(
                    part.warnings
                        .iter()
                        .map(|w| {
                            Verdict::new(Level::Warn, format!("`{}`: {}", w.source, w.message))
                        })
                        .collect(),
                ));
            }
        }
        if let Some(cost) = res.monitor_cpu_percent {
            s.push(Block::Text(format!(
                "Sampling cost the monitor {cost:.2}% of one core."
            )));
        }
    }
    if let Some(t) = split {
        s.push(Block::Heading("Client and server latency".to_string()));
        s.push(Block::Table(t));
    }
    if let Some(t) = slowest {
        s.push(Block::Heading(
            "Slowest requests and their traces".to_string(),
        ));
        s.push(Block::Table(t));
    }
    Some(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use loadlab_metrics::resources::{ResourceInterval, Resources};

    fn interval(values: &[(&str, f64)]) -> ResourceInterval {
        ResourceInterval {
            t: 1.0,
            length_s: 1.0,
            warmup: false,
            values: values.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
            top_processes: Vec::new(),
        }
    }

    fn bands(res: &Resources) -> (f64, f64, f64) {
        let c = host_cpu_chart(res, 0.0, "host-cpu").expect("a chart");
        let top = |name: &str| {
            c.series
                .iter()
                .find(|s| s.name == name)
                .map_or(0.0, |s| s.points[0].1)
        };
        (
            top("generator"),
            top("monitored processes"),
            top("everything else"),
        )
    }

    /// `loadlab demo`'s targets run inside loadlab: their exported CPU (0.05 cores = 5% of a
    /// core, 2.5% of 2 CPUs) is drawn as the monitored band, out of the generator's.
    #[test]
    fn an_in_process_targets_cpu_moves_from_the_generator_band_to_the_monitored_one() {
        let mut values = vec![
            ("host.cpu_percent", 10.0),
            ("host.cpu_count", 2.0),
            ("generator.cpu_percent", 12.0),
            ("prometheus.target.loadlab_target_cpu_seconds_total", 0.05),
        ];
        let outside = Resources {
            intervals: vec![interval(&values)],
            ..Resources::default()
        };
        let (g, m, _) = bands(&outside);
        assert!((g - 6.0).abs() < 1e-9 && (m - 8.5).abs() < 1e-9, "{g} {m}");
        values.push(("prometheus.target.includes_generator", 1.0));
        let inside = Resources {
            intervals: vec![interval(&values)],
            ..Resources::default()
        };
        let (g, m, all) = bands(&inside);
        assert!((g - 3.5).abs() < 1e-9, "generator {g}");
        assert!((m - 6.0).abs() < 1e-9, "generator + target {m}");
        assert!((all - 10.0).abs() < 1e-9, "{all}");
    }
}
