//! The real runs behind a study or capacity search: each request of the orchestrator is a
//! measured run made by the engine and stored under the study, stopped by the same signal
//! that stops the whole.

use crate::measure::{measure, RunSpec, RunView, Share};
use crate::PipelineError;
use loadlab_engine::Cancel;
use loadlab_orchestrate::{ExecutedRun, Executor, RunRequest};
use loadlab_store::{Labels, Store, StudyKind};
use std::time::Duration;

/// Makes the orchestrator's runs with the engine and indexes each under its study.
pub struct EngineExecutor<'a> {
    store: &'a Store,
    cancel: &'a Cancel,
    threads: Option<usize>,
    view: &'a mut dyn RunView,
    kind: StudyKind,
    id: String,
    /// The study's labels: its runs carry them too.
    labels: Labels,
}

impl<'a> EngineExecutor<'a> {
    pub fn new(
        store: &'a Store,
        cancel: &'a Cancel,
        threads: Option<usize>,
        view: &'a mut dyn RunView,
        kind: StudyKind,
        id: &str,
    ) -> Self {
        Self {
            store,
            cancel,
            threads,
            view,
            kind,
            id: id.to_string(),
            labels: Labels::new(),
        }
    }

    /// Labels every run with the study's labels.
    pub fn with_labels(mut self, labels: Labels) -> Self {
        self.labels = labels;
        self
    }
}

impl Executor for EngineExecutor<'_> {
    type Error = PipelineError;

    fn execute(&mut self, request: &RunRequest<'_>) -> Result<ExecutedRun, PipelineError> {
        let meta = loadlab_store::NewRun {
            variant: Some(request.label.clone()),
            study: Some(self.id.clone()),
            labels: self.labels.clone(),
            ..Default::default()
        };
        let spec = RunSpec {
            scenario: request.scenario,
            share: Share::default(),
            threads: self.threads,
            cancel: self.cancel,
            // A study's or capacity search's runs follow their plan.
            steering: None,
        };
        let measured = measure(spec, Some(self.store), meta, &mut *self.view)?;
        if let Some(e) = measured.storage_error {
            // A run that cannot be kept cannot be part of a study: stop, keep what was kept.
            return Err(PipelineError::aborted(format!(
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
        crate::measure::pause_unless_cancelled(self.cancel, duration);
    }
}
