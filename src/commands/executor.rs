//! The real runs behind a study or capacity search: each request of the orchestrator is a
//! measured, stored run (`measure`), stopped by the same signal that stops the whole.

use super::measure::{measure, Share};
use crate::cli::OutputArgs;
use crate::exit::CliError;
use loadlab_engine::Cancel;
use loadlab_orchestrate::{ExecutedRun, Executor, RunRequest};
use loadlab_store::Store;
use std::time::{Duration, Instant};

pub struct CliExecutor<'a> {
    output: OutputArgs,
    store: &'a Store,
    cancel: &'a Cancel,
    /// `study` or `capacity`, and its id: every run is indexed under it.
    kind: &'static str,
    id: String,
}

impl<'a> CliExecutor<'a> {
    pub fn new(
        output: &OutputArgs,
        store: &'a Store,
        cancel: &'a Cancel,
        kind: &'static str,
        id: &str,
    ) -> Self {
        let output = OutputArgs {
            // The orchestrator writes its own --json; a run must not overwrite it.
            json: None,
            no_progress: output.no_progress || kind == "capacity",
            ..output.clone()
        };
        Self {
            output,
            store,
            cancel,
            kind,
            id: id.to_string(),
        }
    }
}

/// Why an orchestration stopped early, as the command reports it.
pub enum OrchestrationStop {
    Cancelled,
    Failed(CliError),
}

impl Executor for CliExecutor<'_> {
    type Error = CliError;

    fn execute(&mut self, request: &RunRequest<'_>) -> Result<ExecutedRun, CliError> {
        let meta = loadlab_store::NewRun {
            variant: Some(request.label.clone()),
            study: Some(self.id.clone()),
            ..Default::default()
        };
        let measured = measure(
            request.scenario,
            &self.output,
            self.cancel,
            Some(self.store),
            meta,
            Share::default(),
        )?;
        if let Some(e) = measured.storage_error {
            // A run that cannot be kept cannot be part of a study: stop, keep what was kept.
            return Err(CliError::aborted(format!(
                "{e} (in {} {})",
                self.kind, self.id
            )));
        }
        Ok(ExecutedRun {
            id: measured.id.unwrap_or_default(),
            result: measured.result,
        })
    }

    fn cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }

    fn pause(&mut self, duration: Duration) {
        let until = Instant::now() + duration;
        while Instant::now() < until && !self.cancel.is_cancelled() {
            std::thread::sleep(Duration::from_millis(50).min(until - Instant::now()));
        }
    }
}
