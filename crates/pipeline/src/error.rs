//! Why a pipeline step could not do its work, in the two classes the exit codes tell apart.

/// The input cannot be used (exit 2), or the work stopped and could not be kept (exit 3).
#[derive(Debug, thiserror::Error)]
pub enum PipelineError {
    /// A file, id, flag value or results location that cannot be used; the message says the fix.
    #[error("{0}")]
    BadInput(String),
    /// The work stopped: a run that could not be kept, a failed barrier.
    #[error("{0}")]
    Aborted(String),
}

impl PipelineError {
    pub fn bad_input(message: impl std::fmt::Display) -> Self {
        PipelineError::BadInput(message.to_string())
    }

    pub fn aborted(message: impl std::fmt::Display) -> Self {
        PipelineError::Aborted(message.to_string())
    }

    pub fn is_bad_input(&self) -> bool {
        matches!(self, PipelineError::BadInput(_))
    }
}

impl From<loadlab_scenario::ScenarioError> for PipelineError {
    fn from(e: loadlab_scenario::ScenarioError) -> Self {
        PipelineError::bad_input(e)
    }
}

impl From<loadlab_remote::RemoteError> for PipelineError {
    fn from(e: loadlab_remote::RemoteError) -> Self {
        if e.is_bad_input() {
            PipelineError::bad_input(e)
        } else {
            PipelineError::aborted(e)
        }
    }
}

/// Every engine error is found before the load starts (a scenario that cannot be prepared, a
/// target that cannot be reached or resolved, limits too low): the input must change, so each
/// is bad input (exit 2), the unreachable target included.
impl From<loadlab_engine::EngineError> for PipelineError {
    fn from(e: loadlab_engine::EngineError) -> Self {
        PipelineError::bad_input(e)
    }
}

impl From<loadlab_store::StoreError> for PipelineError {
    fn from(e: loadlab_store::StoreError) -> Self {
        PipelineError::bad_input(e)
    }
}
