//! Resources of a run — the host, the generator, the processes and cgroups of the system
//! under test, Prometheus series — as the run record keeps them and the summary judges them.
//!
//! The monitor (`loadlab-monitor`) takes one [`Sample`] per interval; the run record stores
//! the samples with the interval they ended in; [`summarize`] and [`classify`] are pure
//! functions of the samples, so the end of a run, a crash recovery and a merge of segments
//! all reach the same resource summary and the same verdicts (host contended, target
//! CPU-bound, memory growth, file descriptors and ports running out). They live here rather
//! than in the monitor so that reading a record needs no sampling code.

mod classify;
mod sample;
mod summary;
mod tree;

pub use classify::{
    classify, host_load, thousands, CpuBound, CpuBoundBasis, FdPressure, Finding, GeneratorFacts,
    HostContention, HostLoad, HostShare, MemoryGrowth, PortsPressure, Thresholds,
};
pub use sample::{MonitorWarning, ProcessCpu, Sample};
pub use summary::{series, series_path, summarize, window, SeriesSummary};
pub use tree::{
    FindingKind, ResourceEntry, ResourceFinding, ResourceInterval, ResourceTree, Resources,
};

/// How many other processes a sample names (the busiest first).
pub const TOP_PROCESSES: usize = 5;
