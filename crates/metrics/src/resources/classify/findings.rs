//! The findings as plain data, each with the sentence a report opens with.

use super::super::sample::ProcessCpu;
use serde::{Deserialize, Serialize};

/// One judgement about a run's resources.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Finding {
    /// The host's CPU was saturated (or stolen, or contended) while the generator was not.
    /// A fact about the environment: the run is invalid only when the generator's own timing
    /// was disturbed (`loadlab_record::disturbance`).
    HostContended(HostContention),
    /// A monitored process or cgroup used (nearly) all the CPU it can. Maps to the target
    /// verdict `target_cpu_bound`.
    TargetCpuBound(CpuBound),
    /// A monitored process's RSS grew over the window. Maps to `memory_growth`.
    MemoryGrowth(MemoryGrowth),
    /// Open files near their limit: the generator's (`fd_exhausted` when exhausted) or a
    /// monitored process's.
    FdPressure(FdPressure),
    /// Ephemeral ports near exhaustion (`ports_exhausted` when exhausted).
    PortsPressure(PortsPressure),
}

impl Finding {
    /// The finding in one plain sentence.
    pub fn sentence(&self) -> String {
        match self {
            Finding::HostContended(h) => h.sentence(),
            Finding::TargetCpuBound(c) => c.sentence(),
            Finding::MemoryGrowth(m) => m.sentence(),
            Finding::FdPressure(f) => f.sentence(),
            Finding::PortsPressure(p) => p.sentence(),
        }
    }
}

/// A share of the whole host's CPU.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostShare {
    /// `processes.target`, `cgroups.db`.
    pub name: String,
    /// Percent of all the host's CPUs.
    pub percent_of_host: f64,
}

/// Means over the contended intervals.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostContention {
    pub contended_intervals: u32,
    /// Intervals judged (those with a host CPU reading).
    pub intervals: u32,
    /// Busy share of all CPUs.
    pub host_cpu_percent: f64,
    pub steal_percent: f64,
    /// PSI `cpu some`, where the kernel has it.
    pub cpu_pressure_percent: Option<f64>,
    pub host_cpus: f64,
    pub generator_percent_of_host: f64,
    pub monitored: Vec<HostShare>,
    /// Busy share not used by the generator or the monitored processes.
    pub other_percent_of_host: f64,
    /// The busiest other processes, in % of one core.
    pub top_others: Vec<ProcessCpu>,
}

impl HostContention {
    fn sentence(&self) -> String {
        let mut why = vec![format!("CPU {:.0}% busy", self.host_cpu_percent)];
        if self.steal_percent >= 1.0 {
            why.push(format!(
                "{:.0}% stolen by the hypervisor",
                self.steal_percent
            ));
        }
        if let Some(p) = self.cpu_pressure_percent {
            why.push(format!("tasks waiting for a CPU {p:.0}% of the time"));
        }
        let mut shares = vec![format!("generator {:.0}%", self.generator_percent_of_host)];
        for m in &self.monitored {
            let name = m.name.split_once('.').map_or(m.name.as_str(), |(_, n)| n);
            shares.push(format!("{name} {:.0}%", m.percent_of_host));
        }
        shares.push(format!(
            "other processes {:.0}%",
            self.other_percent_of_host
        ));
        let mut text = format!(
            "the host was saturated in {} of {} intervals ({}): {}",
            self.contended_intervals,
            self.intervals,
            why.join(", "),
            shares.join(", ")
        );
        if !self.top_others.is_empty() {
            text.push_str(&format!(
                " — busiest others: {}",
                busiest_words(&self.top_others)
            ));
        }
        text
    }
}

/// Who used the host's CPU over a run's measured window, whatever the verdict: the
/// environment section names other processes even when they did not disturb the generator.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct HostLoad {
    /// Busy share of all CPUs (mean).
    pub host_cpu_percent: f64,
    pub host_cpus: f64,
    /// The generator's share of all CPUs.
    pub generator_percent_of_host: f64,
    /// Busy share not used by the generator (the target on this host included).
    pub other_percent_of_host: f64,
    /// Hypervisor steal on the cores the generator may use (% of those cores).
    pub steal_on_generator_cores: Option<f64>,
    /// Busy share of the cores the generator is pinned to not used by the generator (% of
    /// those cores), when it is pinned to some of the host's cores and each was read: what
    /// competed with it there, unlike a process on another core.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub other_percent_of_generator_cores: Option<f64>,
    /// The busiest other processes, in % of one core.
    pub top_others: Vec<ProcessCpu>,
}

impl HostLoad {
    /// `rustc 85% of a core, cc1 ×3 40% of a core`.
    pub fn busiest_others(&self) -> String {
        busiest_words(&self.top_others)
    }
}

/// Why a process or cgroup counts as CPU-bound.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "basis", rename_all = "snake_case")]
pub enum CpuBoundBasis {
    /// It used nearly all the CPUs it may use.
    AllCores,
    /// Its busiest thread used nearly a whole core (an event loop, a lock holder).
    BusiestThread { thread_cpu_percent: f64 },
    /// Its cgroup hit the CPU quota in many periods.
    Throttled { throttled_percent: f64 },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CpuBound {
    /// `processes.target` or `cgroups.db`.
    pub source: String,
    pub name: String,
    /// Mean CPU, % of one core.
    pub cpu_percent: f64,
    /// CPUs it may use (affinity, quota or cpuset).
    pub limit_cores: f64,
    /// `cpu_percent` as a share of `limit_cores`.
    pub share_percent: f64,
    #[serde(flatten)]
    pub basis: CpuBoundBasis,
}

impl CpuBound {
    fn sentence(&self) -> String {
        let used = self.cpu_percent / 100.0;
        match &self.basis {
            CpuBoundBasis::AllCores => format!(
                "{} is CPU-bound: it used {:.0}% of its {} ({used:.2} cores)",
                self.name,
                self.share_percent,
                cores(self.limit_cores)
            ),
            CpuBoundBasis::BusiestThread { thread_cpu_percent } => format!(
                "{} is CPU-bound on one thread: its busiest thread used {thread_cpu_percent:.0}% of a core (the process used {used:.2} of {})",
                self.name,
                cores(self.limit_cores)
            ),
            CpuBoundBasis::Throttled { throttled_percent } => format!(
                "{} is CPU-bound by its quota: throttled in {throttled_percent:.0}% of CPU periods at {used:.2} of {}",
                self.name,
                cores(self.limit_cores)
            ),
        }
    }
}

fn cores(n: f64) -> String {
    if (n - 1.0).abs() < 1e-9 {
        "1 core".into()
    } else if n.fract() == 0.0 {
        format!("{n:.0} cores")
    } else {
        format!("{n:.2} cores")
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemoryGrowth {
    pub source: String,
    pub name: String,
    /// Mean RSS of the first tenth of the window.
    pub first_bytes: f64,
    /// Mean RSS of the last tenth.
    pub last_bytes: f64,
    pub growth_percent: f64,
}

impl MemoryGrowth {
    fn sentence(&self) -> String {
        format!(
            "{}'s memory grew {:.0}% over the steady window ({} → {}): a leak, or a cache still filling",
            self.name,
            self.growth_percent,
            mib(self.first_bytes),
            mib(self.last_bytes)
        )
    }
}

fn mib(bytes: f64) -> String {
    format!("{:.0} MiB", bytes / (1024.0 * 1024.0))
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FdPressure {
    /// `generator` or `processes.<name>`.
    pub source: String,
    pub name: String,
    pub peak_open: f64,
    pub limit: f64,
    pub peak_percent: f64,
    pub exhausted: bool,
}

/// The `source` of the generator's own figures (its series are `generator.*`).
pub(super) const GENERATOR_SOURCE: &str = "generator";

impl FdPressure {
    /// The pressure is on the generator's own descriptors (a limit of its machine).
    pub fn of_generator(&self) -> bool {
        self.source == GENERATOR_SOURCE
    }

    fn sentence(&self) -> String {
        let who = if self.of_generator() {
            "the generator".to_string()
        } else {
            self.name.clone()
        };
        format!(
            "{who} {} {} of its {} open files ({:.0}%){}",
            if self.exhausted {
                "ran out of file descriptors:"
            } else {
                "used"
            },
            thousands(self.peak_open),
            thousands(self.limit),
            self.peak_percent,
            if self.of_generator() {
                ": raise the limit (`ulimit -n`, LimitNOFILE) or lower the concurrency"
            } else {
                ""
            }
        )
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PortsPressure {
    pub peak_in_use: f64,
    pub range: f64,
    pub peak_percent: f64,
    /// Sockets in TIME_WAIT at the peak (closed connections still holding their port).
    pub time_wait: f64,
    pub exhausted: bool,
}

impl PortsPressure {
    fn sentence(&self) -> String {
        format!(
            "{} of {} ephemeral ports were in use ({:.0}%, {} in TIME_WAIT){}: keep connections alive, widen net.ipv4.ip_local_port_range, or spread connections over source addresses",
            thousands(self.peak_in_use),
            thousands(self.range),
            self.peak_percent,
            thousands(self.time_wait),
            if self.exhausted { " — ports ran out" } else { "" }
        )
    }
}

/// `27900` → `27,900`.
pub fn thousands(v: f64) -> String {
    let digits = format!("{:.0}", v.max(0.0));
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `rustc 85% of a core, cc1 ×3 40% of a core`.
fn busiest_words(top: &[ProcessCpu]) -> String {
    top.iter()
        .map(|p| {
            let count = if p.processes > 1 {
                format!(" ×{}", p.processes)
            } else {
                String::new()
            };
            format!("{}{count} {:.0}% of a core", p.name, p.cpu_percent)
        })
        .collect::<Vec<_>>()
        .join(", ")
}
