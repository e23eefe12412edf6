//! One error type for everything a user can get wrong in a scenario, with where and how to fix it.

use std::fmt;

/// Where a bad input was found: a place in a file, or a command-line flag.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ErrorLocation {
    File {
        path: String,
        line: usize,
        column: usize,
    },
    Flag(String),
    Unknown,
}

/// A scenario that cannot be run, explained.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct ScenarioError {
    pub location: ErrorLocation,
    /// Dotted path of the offending field, e.g. `load.stages[1].duration`.
    pub field: String,
    pub message: String,
    pub hint: Option<String>,
}

impl ScenarioError {
    pub fn flag(flag: &str, message: impl Into<String>, hint: Option<String>) -> Self {
        Self {
            location: ErrorLocation::Flag(flag.to_string()),
            field: String::new(),
            message: message.into(),
            hint,
        }
    }

    pub fn at(location: ErrorLocation, field: &str, message: impl Into<String>) -> Self {
        Self {
            location,
            field: field.to_string(),
            message: message.into(),
            hint: None,
        }
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.location {
            ErrorLocation::File { path, line, column } => write!(f, "{path}:{line}:{column}: ")?,
            ErrorLocation::Flag(flag) => write!(f, "{flag}: ")?,
            ErrorLocation::Unknown => {}
        }
        if !self.field.is_empty() {
            write!(f, "{}: ", self.field)?;
        }
        write!(f, "{}", self.message)?;
        if let Some(hint) = &self.hint {
            write!(f, "\n  hint: {hint}")?;
        }
        Ok(())
    }
}
