//! The seam between orchestration and the load engine: one scenario in, one result out.

use loadlab_metrics::RunResult;
use loadlab_scenario::Scenario;
use std::time::Duration;

/// One run a study or capacity search asks for.
#[derive(Debug, Clone)]
pub struct RunRequest<'a> {
    pub scenario: &'a Scenario,
    /// The variant (or sweep point, or capacity step) the run belongs to, e.g. `stress`.
    pub label: String,
    /// The study variant (or sweep point) whose scenario this is, by its name in the plan;
    /// `None` for a capacity step. A run made by other processes names it to them.
    pub variant: Option<&'a str>,
    /// 1-based position in the plan and the planned total (retries share their slot's).
    pub position: usize,
    pub total: usize,
    /// 0 for the first attempt, 1.. for re-runs of an invalid run.
    pub attempt: usize,
}

/// A run that was made: its store id and its summary (thresholds evaluated).
#[derive(Debug, Clone)]
pub struct ExecutedRun {
    pub id: String,
    pub result: RunResult,
}

/// Runs scenarios for an orchestrator. `Err` aborts the study or search (the target is
/// unreachable, results cannot be stored...): what was done so far is kept.
pub trait Executor {
    type Error;

    fn execute(&mut self, request: &RunRequest<'_>) -> Result<ExecutedRun, Self::Error>;

    /// A signal asked to stop: no new run is started.
    fn cancelled(&self) -> bool;

    /// Waits between runs (cooldown); returns early when cancelled.
    fn pause(&mut self, duration: Duration);
}
