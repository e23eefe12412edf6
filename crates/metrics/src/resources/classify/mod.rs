//! Pure judgements over the samples of a run's steady window: was the host contended (and by
//! whom), is a monitored process or cgroup CPU-bound, did memory grow, were file descriptors
//! or ephemeral ports running out. Plain data with a sentence each; the run result maps them
//! to its typed validity reasons and target verdicts.

mod findings;
#[cfg(test)]
mod tests;

pub use findings::*;

use super::sample::Sample;
use super::summary::{series, summarize};
use std::collections::BTreeSet;

/// Where the lines are drawn. The defaults follow issue 10 and DESIGN.md §4.
#[derive(Debug, Clone, PartialEq)]
pub struct Thresholds {
    /// An interval is contended when the host CPU is at least this busy (% of all CPUs) ...
    pub host_busy_percent: f64,
    /// ... or some task waited for a CPU this share of the time (PSI `cpu some`) ...
    pub host_cpu_pressure_percent: f64,
    /// ... or the hypervisor stole this share of the CPU ...
    pub host_steal_percent: f64,
    /// ... while the generator used less than this share of the cores it may use.
    pub generator_limit_share: f64,
    /// The host is contended when this share of the window's intervals are.
    pub contended_share: f64,
    /// A process or cgroup using this share of its CPUs (or its busiest thread this share of
    /// one core) is CPU-bound.
    pub cpu_bound_share: f64,
    /// A cgroup throttled in this share of its CPU periods (% of periods) is CPU-bound.
    pub throttled_percent: f64,
    /// Memory growth over the window that is reported (0.2 = 20%) ...
    pub memory_growth_share: f64,
    /// ... when it is also at least this many bytes.
    pub memory_growth_min_bytes: f64,
    /// Open files or ephemeral ports at this share of their limit are reported.
    pub pressure_share: f64,
    /// ... and at this share they count as exhausted.
    pub exhausted_share: f64,
}

impl Default for Thresholds {
    fn default() -> Self {
        Thresholds {
            host_busy_percent: 95.0,
            host_cpu_pressure_percent: 40.0,
            host_steal_percent: 10.0,
            generator_limit_share: 0.9,
            contended_share: 0.25,
            cpu_bound_share: 0.9,
            throttled_percent: 25.0,
            memory_growth_share: 0.2,
            memory_growth_min_bytes: 1024.0 * 1024.0,
            pressure_share: 0.8,
            exhausted_share: 0.99,
        }
    }
}

/// What the classification needs to know about the generator beyond the samples.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GeneratorFacts {
    /// Cores the generator may run on (its affinity mask, or a CPU quota if lower).
    pub cores_allowed: f64,
}

/// Every finding over `samples` (the steady window), most important first.
pub fn classify(samples: &[Sample], generator: &GeneratorFacts, t: &Thresholds) -> Vec<Finding> {
    let mut out = Vec::new();
    out.extend(host_contention(samples, generator, t).map(Finding::HostContended));
    out.extend(
        cpu_bound(samples, t)
            .into_iter()
            .map(Finding::TargetCpuBound),
    );
    out.extend(
        memory_growth(samples, t)
            .into_iter()
            .map(Finding::MemoryGrowth),
    );
    out.extend(fd_pressure(samples, t).into_iter().map(Finding::FdPressure));
    out.extend(ports_pressure(samples, t).map(Finding::PortsPressure));
    out
}

/// Names `x` of every series `<prefix>.x.<suffix>` present in the samples.
fn names_with<'a>(
    samples: impl IntoIterator<Item = &'a Sample>,
    prefix: &str,
    suffix: &str,
) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for s in samples {
        for key in s.values.keys() {
            if let Some(name) = key
                .strip_prefix(prefix)
                .and_then(|k| k.strip_prefix('.'))
                .and_then(|k| k.strip_suffix(suffix))
                .and_then(|k| k.strip_suffix('.'))
            {
                if !name.contains('.') {
                    out.insert(name.to_string());
                }
            }
        }
    }
    out
}

fn mean(values: impl Iterator<Item = f64>) -> Option<f64> {
    let (sum, n) = values.fold((0.0, 0u32), |(s, n), v| (s + v, n + 1));
    (n > 0).then(|| sum / f64::from(n))
}

fn host_contention(s: &[Sample], g: &GeneratorFacts, t: &Thresholds) -> Option<HostContention> {
    let generator_limit = t.generator_limit_share * g.cores_allowed * 100.0;
    let contended: Vec<&Sample> = s
        .iter()
        .filter(|x| {
            let busy = x
                .get("host.cpu_percent")
                .is_some_and(|v| v >= t.host_busy_percent);
            let pressure = x
                .get("host.pressure.cpu_some_percent")
                .is_some_and(|v| v >= t.host_cpu_pressure_percent);
            let steal = x
                .get("host.cpu.steal_percent")
                .is_some_and(|v| v >= t.host_steal_percent);
            let generator_ok = x
                .get("generator.cpu_percent")
                .is_none_or(|v| v < generator_limit);
            (busy || pressure || steal) && generator_ok
        })
        .collect();
    let judged = s
        .iter()
        .filter(|x| x.get("host.cpu_percent").is_some())
        .count();
    if contended.is_empty() || (contended.len() as f64) < t.contended_share * judged as f64 {
        return None;
    }
    let avg = |name: &str| mean(contended.iter().filter_map(|x| x.get(name)));
    let cpus = avg("host.cpu_count").unwrap_or(1.0).max(1.0);
    let of_host = |pct_of_core: f64| pct_of_core / cpus;
    let busy = avg("host.cpu_percent").unwrap_or(0.0);
    let generator = of_host(avg("generator.cpu_percent").unwrap_or(0.0));
    let mut monitored = Vec::new();
    for name in names_with(contended.iter().copied(), "processes", "cpu_percent") {
        if avg(&format!("processes.{name}.includes_generator")).is_some() {
            continue;
        }
        if let Some(v) = avg(&format!("processes.{name}.cpu_percent")) {
            monitored.push(HostShare {
                name: format!("processes.{name}"),
                percent_of_host: of_host(v),
            });
        }
    }
    for name in names_with(contended.iter().copied(), "cgroups", "cpu_percent") {
        if let Some(v) = avg(&format!("cgroups.{name}.cpu_percent")) {
            monitored.push(HostShare {
                name: format!("cgroups.{name}"),
                percent_of_host: of_host(v),
            });
        }
    }
    let monitored_sum: f64 = monitored
        .iter()
        .filter(|m| m.name.starts_with("processes."))
        .map(|m| m.percent_of_host)
        .sum();
    Some(HostContention {
        contended_intervals: contended.len() as u32,
        intervals: judged as u32,
        host_cpu_percent: busy,
        steal_percent: avg("host.cpu.steal_percent").unwrap_or(0.0),
        cpu_pressure_percent: avg("host.pressure.cpu_some_percent"),
        host_cpus: cpus,
        generator_percent_of_host: generator,
        monitored,
        other_percent_of_host: (busy - generator - monitored_sum).max(0.0),
        top_others: super::tree::mean_top_processes(contended.iter().copied()),
    })
}

/// Who used the host's CPU over `samples` (means), and the steal on `generator_cpus` (all
/// cores when empty). `None` without host readings.
pub fn host_load(s: &[Sample], generator_cpus: &[u32]) -> Option<HostLoad> {
    let cpus = mean(s.iter().filter_map(|x| x.get("host.cpu_count")))
        .unwrap_or(1.0)
        .max(1.0);
    let busy = busy_percent(s, cpus)?;
    let generator =
        mean(s.iter().filter_map(|x| x.get("generator.cpu_percent"))).unwrap_or(0.0) / cpus;
    let steal = if generator_cpus.is_empty() {
        mean(s.iter().filter_map(|x| x.get("host.cpu.steal_percent")))
    } else {
        mean(s.iter().flat_map(|x| {
            generator_cpus
                .iter()
                .filter_map(move |c| x.get(&format!("host.core.{c}.steal_percent")))
        }))
    };
    Some(HostLoad {
        host_cpu_percent: busy,
        host_cpus: cpus,
        generator_percent_of_host: generator,
        other_percent_of_host: (busy - generator).max(0.0),
        steal_on_generator_cores: steal,
        other_percent_of_generator_cores: others_on_cores(s, generator_cpus, cpus),
        top_others: super::tree::mean_top_processes(s.iter()),
    })
}

/// Busy share of the generator's cores (`host.core.<n>.cpu_percent`) less the generator's own
/// CPU, % of those cores; `None` unless it is pinned to fewer cores than the host has and
/// every sample read each of them.
fn others_on_cores(s: &[Sample], generator_cpus: &[u32], host_cpus: f64) -> Option<f64> {
    let n = generator_cpus.len() as f64;
    if generator_cpus.is_empty() || n >= host_cpus {
        return None;
    }
    let per_sample: Option<Vec<f64>> = s
        .iter()
        .map(|x| {
            let busy: Option<f64> = generator_cpus
                .iter()
                .map(|c| x.get(&format!("host.core.{c}.cpu_percent")))
                .sum();
            let own = x.get("generator.cpu_percent").unwrap_or(0.0);
            Some(((busy? - own) / n).clamp(0.0, 100.0))
        })
        .collect();
    mean(per_sample?.into_iter())
}

/// The busy share of all CPUs: `/proc/stat`'s, or what the processes' own exact counters add
/// up to when that is more (the tick-sampled share misses short bursts of work).
fn busy_percent(s: &[Sample], cpus: f64) -> Option<f64> {
    let stat = mean(s.iter().filter_map(|x| x.get("host.cpu_percent")))?;
    let processes = mean(s.iter().filter_map(|x| x.get("host.processes_cpu_percent")))
        .map_or(0.0, |p| p / cpus);
    Some(stat.max(processes).min(100.0))
}

fn cpu_bound(s: &[Sample], t: &Thresholds) -> Vec<CpuBound> {
    let summary = summarize(s);
    let mean_of = |name: String| summary.get(&name).map(|x| x.mean);
    let host_cpus = mean_of("host.cpu_count".into())
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1.0, |n| n.get() as f64));
    let mut out = Vec::new();
    for name in names_with(s, "processes", "cpu_percent") {
        let Some(cpu) = mean_of(format!("processes.{name}.cpu_percent")) else {
            continue;
        };
        let limit = mean_of(format!("processes.{name}.cpus_allowed"))
            .unwrap_or(host_cpus)
            .min(host_cpus);
        let share = cpu / (limit * 100.0);
        let thread = mean_of(format!("processes.{name}.max_thread_cpu_percent"));
        let basis = if share >= t.cpu_bound_share {
            CpuBoundBasis::AllCores
        } else if let Some(th) = thread.filter(|th| *th >= t.cpu_bound_share * 100.0) {
            CpuBoundBasis::BusiestThread {
                thread_cpu_percent: th,
            }
        } else {
            continue;
        };
        out.push(CpuBound {
            source: format!("processes.{name}"),
            name,
            cpu_percent: cpu,
            limit_cores: limit,
            share_percent: 100.0 * share,
            basis,
        });
    }
    for name in names_with(s, "cgroups", "cpu_percent") {
        let (Some(cpu), Some(limit)) = (
            mean_of(format!("cgroups.{name}.cpu_percent")),
            mean_of(format!("cgroups.{name}.cpu_limit_cores")),
        ) else {
            continue;
        };
        let share = cpu / (limit * 100.0);
        let throttled = mean_of(format!("cgroups.{name}.cpu_throttled_percent"));
        let basis = if share >= t.cpu_bound_share {
            CpuBoundBasis::AllCores
        } else if let Some(th) = throttled.filter(|th| *th >= t.throttled_percent) {
            CpuBoundBasis::Throttled {
                throttled_percent: th,
            }
        } else {
            continue;
        };
        out.push(CpuBound {
            source: format!("cgroups.{name}"),
            name,
            cpu_percent: cpu,
            limit_cores: limit,
            share_percent: 100.0 * share,
            basis,
        });
    }
    out
}

fn memory_growth(s: &[Sample], t: &Thresholds) -> Vec<MemoryGrowth> {
    let mut out = Vec::new();
    for name in names_with(s, "processes", "rss_bytes") {
        let key = format!("processes.{name}.rss_bytes");
        let values: Vec<f64> = series(s, &key).collect();
        if values.len() < 3 {
            continue;
        }
        // Means of the first and last tenth (at least one sample each): robust to one spike.
        let k = (values.len() / 10).max(1);
        let first = values[..k].iter().sum::<f64>() / k as f64;
        let last = values[values.len() - k..].iter().sum::<f64>() / k as f64;
        if first <= 0.0 {
            continue;
        }
        let growth = last / first - 1.0;
        if growth > t.memory_growth_share && last - first >= t.memory_growth_min_bytes {
            out.push(MemoryGrowth {
                source: format!("processes.{name}"),
                name,
                first_bytes: first,
                last_bytes: last,
                growth_percent: 100.0 * growth,
            });
        }
    }
    out
}

fn fd_pressure(s: &[Sample], t: &Thresholds) -> Vec<FdPressure> {
    let mut subjects = vec![(
        findings::GENERATOR_SOURCE.to_string(),
        "generator".to_string(),
    )];
    subjects.extend(
        names_with(s, "processes", "open_files")
            .into_iter()
            .map(|n| (format!("processes.{n}"), n)),
    );
    let mut out = Vec::new();
    for (source, name) in subjects {
        let peak = s
            .iter()
            .filter_map(|x| {
                let open = x.get(&format!("{source}.open_files"))?;
                let limit = x
                    .get(&format!("{source}.open_files_limit"))
                    .filter(|l| *l > 0.0)?;
                Some((open / limit, open, limit))
            })
            .max_by(|a, b| a.0.total_cmp(&b.0));
        if let Some((share, open, limit)) = peak.filter(|p| p.0 >= t.pressure_share) {
            out.push(FdPressure {
                source,
                name,
                peak_open: open,
                limit,
                peak_percent: 100.0 * share,
                exhausted: share >= t.exhausted_share,
            });
        }
    }
    out
}

fn ports_pressure(s: &[Sample], t: &Thresholds) -> Option<PortsPressure> {
    let peak = s
        .iter()
        .filter_map(|x| Some((x.get("host.ports.ephemeral_used_percent")?, x)))
        .max_by(|a, b| a.0.total_cmp(&b.0))?;
    let (percent, at) = peak;
    (percent >= 100.0 * t.pressure_share).then(|| PortsPressure {
        peak_in_use: at.get("host.ports.ephemeral_in_use").unwrap_or(0.0),
        range: at.get("host.ports.ephemeral_range").unwrap_or(0.0),
        peak_percent: percent,
        time_wait: at.get("host.tcp.time_wait").unwrap_or(0.0),
        exhausted: percent >= 100.0 * t.exhausted_share,
    })
}
