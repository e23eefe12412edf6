//! Why a run is not a valid measurement, and what it found out about the target, as types:
//! every command, report and gate decides on the `kind`, never on the message text.

use serde::{Deserialize, Serialize};

/// What made a measurement untrustworthy (the run is invalid while any of these holds).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InvalidKind {
    /// Stopped before its plan ended (a signal, or a crash: the record is partial).
    Interrupted,
    /// The generator's own threads used ≥ 90% of the cores they may use.
    GeneratorSaturated,
    /// The scheduler started arrivals late (lag p99 above its bound) for reasons of its own.
    SchedulerLate,
    /// Other processes took the CPU the generator needed: its own timing was disturbed enough
    /// to change the latencies it reports (`loadlab_record::disturbance`).
    HostContended,
    /// The hypervisor stole the time of the generator's cores, enough to disturb its timing.
    CpuStolen,
    /// The generator's timing was disturbed while neither its own CPU, nor other processes,
    /// nor measured steal explain it: the host (hypervisor, kernel) held it up. Retried by
    /// studies; a run again usually is valid.
    HostDisturbed,
    /// The generator ran out of file descriptors.
    FdExhausted,
    /// The generator ran out of local ports.
    PortsExhausted,
    /// A `pick: unique` data set ran out of rows.
    DataExhausted,
    /// The run ended with no request and no iteration measured (a warm-up took them all).
    NothingMeasured,
    /// A merged run lacks one of its segments.
    SegmentMissing,
    /// A merged run has a segment that was itself invalid.
    SegmentInvalid,
    /// A reason recorded by an older loadlab (schema v1), kept as text.
    Other,
}

impl InvalidKind {
    pub fn as_str(self) -> &'static str {
        match self {
            InvalidKind::Interrupted => "interrupted",
            InvalidKind::GeneratorSaturated => "generator_saturated",
            InvalidKind::SchedulerLate => "scheduler_late",
            InvalidKind::HostContended => "host_contended",
            InvalidKind::CpuStolen => "cpu_stolen",
            InvalidKind::HostDisturbed => "host_disturbed",
            InvalidKind::FdExhausted => "fd_exhausted",
            InvalidKind::PortsExhausted => "ports_exhausted",
            InvalidKind::DataExhausted => "data_exhausted",
            InvalidKind::NothingMeasured => "nothing_measured",
            InvalidKind::SegmentMissing => "segment_missing",
            InvalidKind::SegmentInvalid => "segment_invalid",
            InvalidKind::Other => "other",
        }
    }

    /// The machine under the generator disturbed it (other processes, the hypervisor's steal,
    /// the kernel): not the generator's doing, and usually gone a few seconds later.
    pub fn is_host_disturbance(self) -> bool {
        matches!(
            self,
            InvalidKind::HostContended | InvalidKind::CpuStolen | InvalidKind::HostDisturbed
        )
    }

    /// A run made again with the same scenario and flags ends the same way (a warm-up that
    /// takes every request of a counted load): re-running it only costs its time. Not a
    /// `pick: unique` set that ran out (how many rows a timed run takes depends on the
    /// target's speed), nor a merge short of a segment (a node may be back).
    pub fn is_same_on_rerun(self) -> bool {
        matches!(self, InvalidKind::NothingMeasured)
    }

    /// The generator or the machine it runs on, not the target, limited the run (its CPU,
    /// its scheduler, other processes taking the host's CPU): `--allow-saturated` forgives
    /// these. Running out of files or ports is not forgiven: requests failed because of it.
    pub fn is_generator_limit(self) -> bool {
        matches!(
            self,
            InvalidKind::GeneratorSaturated
                | InvalidKind::SchedulerLate
                | InvalidKind::HostContended
                | InvalidKind::CpuStolen
                | InvalidKind::HostDisturbed
        )
    }
}

/// One reason a run is invalid: its kind (for decisions) and a sentence (for people).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InvalidReason {
    pub kind: InvalidKind,
    pub message: String,
}

impl InvalidReason {
    pub fn new(kind: InvalidKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
        }
    }
}

/// Whether the measurement can be trusted, and if not, why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Validity {
    pub reasons: Vec<InvalidReason>,
}

impl Validity {
    pub fn is_valid(&self) -> bool {
        self.reasons.is_empty()
    }

    pub fn has(&self, kind: InvalidKind) -> bool {
        self.reasons.iter().any(|r| r.kind == kind)
    }

    pub fn push(&mut self, kind: InvalidKind, message: impl Into<String>) {
        self.reasons.push(InvalidReason::new(kind, message));
    }

    /// The messages, for summaries that list them.
    pub fn messages(&self) -> Vec<&str> {
        self.reasons.iter().map(|r| r.message.as_str()).collect()
    }
}

/// Findings about the target that do not invalidate the measurement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TargetVerdictKind {
    /// Open model: the target did not keep up with the offered rate.
    TargetOverloaded,
    /// A monitored process or cgroup used ≥ 90% of its CPUs.
    TargetCpuBound,
    /// A monitored process's memory grew through the steady window.
    MemoryGrowth,
    /// The target runs on the generator's host: they compete for its CPUs. A warning with the
    /// figures and the fix; the run is invalid only if the generator's timing was disturbed.
    SharesHostWithTarget,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TargetVerdict {
    pub kind: TargetVerdictKind,
    pub message: String,
}
