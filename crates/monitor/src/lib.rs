//! `loadlab-monitor`: who is the bottleneck — samples the host, the processes and cgroups of
//! the system under test and Prometheus endpoints once per interval on its own threads, off
//! the request path, and judges the samples (host contended, target CPU-bound, memory growth,
//! file descriptors and ports running out).
//!
//! ```no_run
//! use loadlab_monitor::{classify, generator_facts, summarize, Monitor, Thresholds};
//! use loadlab_scenario::monitor::{MonitorConfig, ProcessSelector, ProcessWatch};
//!
//! let config = MonitorConfig {
//!     processes: vec![ProcessWatch { name: "target".into(), selector: ProcessSelector::Port(8080) }],
//!     ..MonitorConfig::default()
//! };
//! let mut monitor = Monitor::start(&config)?;
//! // ... once per interval, beside the engine's own snapshot:
//! for sample in monitor.drain() {
//!     println!("{:?}", sample.get("processes.target.cpu_percent"));
//! }
//! // At the end: the rest of the samples, every warning, the monitor's own cost.
//! let report = monitor.stop();
//! let means = summarize(&report.samples);
//! for finding in classify(&report.samples, &generator_facts(), &Thresholds::default()) {
//!     println!("{}", finding.sentence());
//! }
//! # Ok::<(), loadlab_monitor::MonitorError>(())
//! ```
//!
//! The configuration types (`MonitorConfig`, the `monitor:` section and `--monitor` flag)
//! live in `loadlab-scenario`; the samples and their pure judgements (`Sample`, `summarize`,
//! `classify`) live in `loadlab-metrics::resources`, because the run record stores them and
//! its summary judges them. This crate depends on both, never the other way round, so the
//! scenario language and the record stay free of sampling code.
//!
//! Series names (all `f64`; CPU in % of one core unless said; host CPU in % of all CPUs):
//! - `host.cpu_percent`, `host.cpu.{user,system,iowait,steal}_percent`, `host.cpu_count`,
//!   `host.core.<n>.{cpu,user,system,iowait,steal}_percent`;
//!   `host.pressure.{cpu,memory,io}_{some,full}_percent` (share of the interval stalled);
//!   `host.memory.{total,available}_bytes`, `host.memory.used_percent`;
//!   `host.load1`, `host.load5`, `host.load15`;
//!   `host.net.<iface>.{rx,tx}_bytes_per_s`; `host.tcp.<state>` (`established`, `time_wait`,
//!   `close_wait`, ...); `host.ports.ephemeral_{in_use,range,used_percent}`;
//! - `generator.{cpu_percent,rss_bytes,threads,open_files,open_files_limit}`;
//! - `processes.<name>.{cpu_percent,max_thread_cpu_percent,rss_bytes,threads,processes,
//!   open_files,open_files_limit,cpus_allowed}` (the selected processes and all their
//!   descendants; `includes_generator` = 1 when that is loadlab's own process);
//! - `cgroups.<name>.{cpu_percent,cpu_limit_cores,cpu_of_limit_percent,cpu_throttled_percent,
//!   throttled_ms_per_s,memory_bytes,memory_peak_bytes,memory_limit_bytes}`;
//! - `prometheus.<name>.<selector>`: the sum of the matching series; counters as their rate
//!   per second (see `MonitorReport::prometheus_kinds`).
//!
//! Crates chosen: `procfs` (the maintained reader of `/proc`) for `/proc/stat`, meminfo,
//! load, network devices, process limits and file counts; the two hot scans — every
//! process's `stat` and the TCP socket tables, read every interval — are small hand-written
//! parsers over reused buffers, because their cost is the monitor's cost (see `bench/`).
//! `prometheus-parse` (the widely used text-format parser) for expositions; only the lines
//! of selected metrics are handed to it, which keeps a node_exporter page cheap, and its
//! known limit — label values holding `,`, `=` or `}` are split wrongly — only affects such
//! series. `loadlab-http-client` (reqwest's blocking client, the workspace's one HTTP client
//! outside the load) for scraping: one GET per interval, so the monitor runs on plain threads. `regex` for `match:`
//! patterns and label matchers. `libc` for a thread's CPU time and the affinity mask.

mod cgroup;
mod collect;
mod error;
mod host;
mod procs;
mod prometheus;
mod sample;
mod sampler;
mod sockets;
mod sys;

pub use cgroup::{cgroup2_mount, own_cgroup};
pub use error::MonitorError;
pub use host::open_files_limit;
pub use loadlab_metrics::resources::{
    classify, series, series_path, summarize, window, CpuBound, CpuBoundBasis, FdPressure, Finding,
    GeneratorFacts, HostContention, HostShare, MemoryGrowth, PortsPressure, SeriesSummary,
    Thresholds,
};
pub use procs::discover::{processes_listening_on, PortLookup};
pub use prometheus::{Endpoint, ScrapeResult};
pub use sample::{MetricKind, MonitorCost, MonitorReport, MonitorWarning, ProcessCpu, Sample};
pub use sampler::{Monitor, MonitorHandle};
pub use sys::{
    cpu_list_self, cpus_allowed_self, generator_facts, lower_this_thread_priority, thread_cpu_time,
    thread_schedstat, SchedStat,
};
