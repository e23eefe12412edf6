//! Exit codes are a contract with CI scripts: one place defines them.

pub use loadlab_pipeline::Outcome;
use loadlab_pipeline::PipelineError;

pub const OK: i32 = 0;
pub const FAILED: i32 = 1;
pub const BAD_INPUT: i32 = 2;
pub const ABORTED: i32 = 3;

/// A command that could not run: the message for the user and the exit code.
#[derive(Debug)]
pub struct CliError {
    pub message: String,
    pub code: i32,
}

impl CliError {
    pub fn bad_input(message: impl std::fmt::Display) -> Self {
        Self {
            message: message.to_string(),
            code: BAD_INPUT,
        }
    }

    pub fn aborted(message: impl std::fmt::Display) -> Self {
        Self {
            message: message.to_string(),
            code: ABORTED,
        }
    }
}

impl From<PipelineError> for CliError {
    fn from(e: PipelineError) -> Self {
        if e.is_bad_input() {
            CliError::bad_input(e)
        } else {
            CliError::aborted(e)
        }
    }
}

impl From<loadlab_scenario::ScenarioError> for CliError {
    fn from(e: loadlab_scenario::ScenarioError) -> Self {
        CliError::bad_input(e)
    }
}

impl From<loadlab_remote::RemoteError> for CliError {
    fn from(e: loadlab_remote::RemoteError) -> Self {
        PipelineError::from(e).into()
    }
}
