//! The dashboard's events, as `/events` sends them (one JSON object per SSE `data:` line, told
//! apart by `type`) and as the page reads them; the schema is documented in docs/live.md.

use crate::frame::LiveFrame;
use loadlab_analysis::thresholds::ThresholdState;
use loadlab_metrics::result::StopReason;
use loadlab_metrics::ThresholdBreach;
use serde::{Deserialize, Serialize};

/// One event of the stream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    /// A run begins (a study or a capacity search makes several; `seq` counts them from 1).
    RunStart(RunStart),
    /// One interval of the current run.
    Frame(Box<FrameEvent>),
    /// The current run ended.
    RunEnd(RunEnd),
    /// Where a study or a capacity search stands (sent whenever it changes).
    Context { context: Context },
    /// The command ended: nothing more will come.
    End(CommandEnd),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunStart {
    pub seq: u32,
    /// The scenario's name and its target.
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    pub steps: Vec<String>,
    pub planned_duration_s: f64,
    pub warmup_s: f64,
    pub slice_s: f64,
    /// `vus` or `arrivals/s` (absent for a burst).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub planned_unit: Option<String>,
    pub thresholds: Vec<String>,
    /// Wall clock of the plan's t = 0, ms since the Unix epoch.
    pub start_unix_ms: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FrameEvent {
    pub seq: u32,
    pub frame: LiveFrame,
    /// The scenario's thresholds now: a windowed one over its window, the others on the run so
    /// far (re-judged at most once a second).
    pub thresholds: Vec<ThresholdNow>,
    /// The study or capacity search this run belongs to (absent for `loadlab run`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<Context>,
}

/// A threshold as the page shows it while the run goes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThresholdNow {
    /// As the scenario wrote it (the short form for a mapping).
    pub expr: String,
    /// Its value now, in the metric's unit (absent before it has data).
    pub actual: Option<f64>,
    /// Passing now (true before its first judgement).
    pub ok: bool,
    /// False during the warm-up, its grace, or until its window is full.
    pub judged: bool,
    /// Its window in seconds (absent: the run so far).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_s: Option<f64>,
    /// It stops the run when it fails.
    pub abort: bool,
    /// Some window failed already (the end result will fail).
    pub failed_before: bool,
}

impl From<ThresholdState> for ThresholdNow {
    fn from(s: ThresholdState) -> Self {
        Self {
            expr: s.expr,
            actual: s.value,
            ok: s.ok,
            judged: s.judged,
            window_s: s.window_s,
            abort: s.abort,
            failed_before: s.failed_before,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunEnd {
    pub seq: u32,
    pub stop: StopReason,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aborted_by_threshold: Option<ThresholdBreach>,
    pub wall_s: f64,
    pub total_requests: u64,
    pub total_failed: u64,
}

/// A study's or a capacity search's progress.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Context {
    /// `study` or `capacity`.
    pub kind: String,
    /// The study's name, or the scenario's for a search.
    pub name: String,
    /// The store id of the study or search.
    pub id: String,
    /// What runs now (`[3/10] stress`, `step 4 · bisect · 250/s`), empty between runs.
    pub current: String,
    /// 1-based position and planned total, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub position: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<usize>,
    /// The runs or steps done so far, in order.
    pub results: Vec<ResultRow>,
}

/// One finished run of a study or step of a capacity search.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ResultRow {
    /// The variant, or the step's phase and rate.
    pub label: String,
    /// Offered rate (capacity steps), achieved rate, in req/s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offered_rate: Option<f64>,
    pub rate: f64,
    pub p50_ms: f64,
    pub p95_ms: f64,
    /// Failed requests, in percent.
    pub error_percent: f64,
    /// `pass`, `fail`, `valid`, `invalid`, `warm-up`, `interrupted`…
    pub verdict: String,
    /// Why (a failed step's reasons, an invalid run's).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub note: String,
}

/// How the command ended.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CommandEnd {
    /// The process's exit status (0 ok, 1 thresholds/SLO failed, 2 bad input, 3 aborted or
    /// invalid).
    pub exit_status: i32,
    /// In words: `passed`, `thresholds failed`, `invalid run`…
    pub verdict: String,
    /// A line to show (an error's message), when there is one.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
    /// `/report` when the command wrote an HTML report (served there).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub report: Option<String>,
}
