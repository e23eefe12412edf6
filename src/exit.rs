//! A command's error as the user sees it: its message and its exit code (the codes are
//! `loadlab_pipeline::exit_code`'s).

pub use loadlab_pipeline::exit_code::{ABORTED, BAD_INPUT, FAILED, OK};
pub use loadlab_pipeline::Outcome;
use loadlab_pipeline::PipelineError;

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

impl From<loadlab_cli::LabelsEnvError> for CliError {
    fn from(e: loadlab_cli::LabelsEnvError) -> Self {
        CliError::bad_input(e)
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

impl From<loadlab_demo::DemoError> for CliError {
    fn from(e: loadlab_demo::DemoError) -> Self {
        if e.is_bad_input() {
            CliError::bad_input(e)
        } else {
            CliError::aborted(e)
        }
    }
}
