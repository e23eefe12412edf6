//! What a record says about itself: written once when the run starts (`record.json`) and once
//! when it ends (`end.json`). A record without an end is a run whose process died.

use loadlab_metrics::result::{LoadInfo, StopReason};
use loadlab_metrics::Segment;
use loadlab_metrics::{Environment, Protocol, StepInfo};
use serde::{Deserialize, Serialize};

pub const RECORD_SCHEMA: &str = "loadlab.record.v1";

/// `record.json`: the resolved scenario and plan, and how to read the intervals.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RecordMeta {
    pub schema: String,
    pub tool_version: String,
    pub name: String,
    pub scenario_file: Option<String>,
    /// Base URL (credentials redacted).
    pub target: Option<String>,
    /// Wall-clock time of the plan's t = 0, seconds since the Unix epoch (µs precision).
    pub start_unix_s: f64,
    pub warmup_s: f64,
    /// Length of the record's intervals (the slices of every chart over time); the last one
    /// and the one the warm-up ends in may be shorter. See [`loadlab_metrics::slice_for`].
    #[serde(default = "one_second")]
    pub slice_s: f64,
    /// The plan's load, with its planned shape over time.
    pub load: LoadInfo,
    /// Fingerprint of the resolved scenario (flags, variant, sweep point, capacity step
    /// applied): segments of one plan share it, and merges refuse records that differ.
    pub plan_hash: String,
    /// The resolved scenario as executed (secrets redacted: header values, bodies, URL
    /// credentials), so reports draw what ran and never re-read the file.
    pub scenario: serde_json::Value,
    /// This process's share of the plan (`None`: the whole plan).
    pub segment: Option<Segment>,
    /// The run took commands while it went (`--control`, `--dashboard`): its summary keeps
    /// what the stretches of constant load need.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub steerable: bool,
    /// Request steps in scenario order: histogram tag `sN` is step N.
    pub steps: Vec<StepInfo>,
    /// Where requests go, in the engine's order (the index of an interval's `conns`): the
    /// version asked for and what the server negotiated when checked before the load.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub origins: Vec<OriginInfo>,
    /// Data set names, in order (for `data_refused`).
    #[serde(default)]
    pub data_sets: Vec<DataSetInfo>,
    /// Threshold expressions as written (evaluated on the summary).
    #[serde(default)]
    pub thresholds: Vec<String>,
    pub environment: Environment,
    /// Worker threads and the cores they may use.
    pub threads: u32,
    pub cores: u32,
    /// Which cores those are (the process's affinity mask), to read the steal on them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cpus_allowed: Vec<u32>,
    /// Generator health bounds: CPU use and scheduler lag p99 beyond these invalidate the run.
    pub max_cpu_percent: f64,
    pub max_lag_ms: f64,
    /// How late this host woke a timer before the run (absent: not measured, an older record):
    /// the generator's delays are judged above this host's own timing resolution.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_timer: Option<loadlab_metrics::HostTimer>,
    /// The open model's batch window: dense arrivals are started up to this late, so that one
    /// wake-up starts several (the trade between wake-ups and precision).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch_window_ms: Option<f64>,
    /// The open model read plain HTTP/1.1 responses at the batch wake-ups, timed by the
    /// kernel's receive timestamps, instead of waking for each (docs/open-model.md).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub reads_at_wakeups: bool,
    /// Process id (to tell a live run from a dead one).
    pub pid: u32,
    /// The merge this record came from, if it is a merged run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merged_from: Option<Vec<MergedSegment>>,
    /// A segment that met the others at a start barrier: its clock against the barrier's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock: Option<loadlab_metrics::clock::ClockEstimate>,
    /// A run rebuilt from another tool's result file (`loadlab import-results`): which tool
    /// and file. Its validity is not judged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub imported: Option<loadlab_metrics::ImportedFrom>,
}

/// One origin (scheme, host, port and HTTP version) of a run.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct OriginInfo {
    /// `scheme://host[:port]`.
    pub url: String,
    /// The HTTP version the scenario asked for: `1.1`, `2` or `auto`.
    pub version: String,
    /// Shared, multiplexed connections per origin (`http.connections`); absent: per VU.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shared_connections: Option<u32>,
    /// What the server negotiated on a connection opened before the load (absent: it could
    /// not be told, e.g. the TLS handshake failed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub negotiated: Option<Protocol>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct DataSetInfo {
    pub name: String,
    pub rows: u64,
    /// `sequential`, `random` or `unique`.
    pub pick: String,
    /// Segments of the plan take disjoint rows (`split: segments`, or `unique`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub split: bool,
}

/// A segment that went into a merged record, as the merged record remembers it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct MergedSegment {
    pub index: u32,
    pub host: Option<String>,
    pub start_unix_s: f64,
    /// Where the segment's record was read from.
    pub source: String,
    /// The segment ended normally (its record has an end).
    pub complete: bool,
    pub wall_s: f64,
    pub threads: u32,
    /// Cores the segment's generator could use (0: not recorded).
    #[serde(default)]
    pub cores: u32,
    pub max_rss_bytes: u64,
}

/// `end.json`: written when the run ends; absent when its process died.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RecordEnd {
    pub stop: StopReason,
    /// Which signal stopped the run, when one did (`SIGTERM`...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<String>,
    /// The threshold that stopped the run (`stop: threshold`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aborted_by_threshold: Option<loadlab_metrics::ThresholdBreach>,
    /// Wall time from the plan's start to the end of the last interval.
    pub wall_s: f64,
    pub max_rss_bytes: u64,
    /// Intervals the record holds.
    pub intervals: u32,
    /// CPU of the resource monitor's own threads, % of one core (absent: nothing monitored).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub monitor_cpu_percent: Option<f64>,
    /// How late this host woke an idle thread of the generator's while the run went on (the
    /// measurement before it is `RecordMeta::host_timer`): the floor its delays are judged above.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_timer: Option<loadlab_metrics::HostTimer>,
    /// The commands that steered the run while it went, in order (none: it followed its plan).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steering: Vec<loadlab_metrics::SteerEvent>,
    /// The load as driven, where the commands alone do not say it: a merge of steered
    /// segments, whose loads add up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub driven: Option<loadlab_metrics::result::PlannedLoad>,
    /// What each data set handed out, in the order of `RecordMeta::data_sets`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub data_use: Vec<loadlab_metrics::data_use::DataUse>,
}

fn one_second() -> f64 {
    1.0
}

impl RecordMeta {
    /// The open model's arrivals were a Poisson process (`load.poisson`): they differ from
    /// the plan's rate by chance, and come closer than the batch window however low the rate.
    pub fn poisson_arrivals(&self) -> bool {
        self.scenario["load"]["poisson"].as_bool().unwrap_or(false)
    }

    /// The steps' names in tag order, for the interval log's legend.
    pub fn legend(&self) -> Vec<String> {
        self.steps
            .iter()
            .enumerate()
            .map(|(i, s)| format!("s{i} = step `{}`", s.name))
            .collect()
    }
}
