//! Why an import could not be made, each case naming the file and the fix.

use thiserror::Error;

#[derive(Debug, Error)]
pub enum ImportError {
    #[error("{file}:{line}:{column}: not valid JSON ({message}); {fix}")]
    NotJson {
        file: String,
        line: usize,
        column: usize,
        message: String,
        fix: &'static str,
    },
    #[error("{file}: not valid YAML or JSON ({message}); {fix}")]
    NotYaml {
        file: String,
        message: String,
        fix: &'static str,
    },
    #[error("{file} is not {expected}: {why}; {fix}")]
    WrongKind {
        file: String,
        expected: &'static str,
        why: String,
        fix: String,
    },
    #[error("{file}: {message}")]
    Invalid { file: String, message: String },
    /// The file could not be read, or is not text.
    #[error("{0}")]
    Unreadable(String),
}

impl ImportError {
    pub(crate) fn invalid(file: &str, message: impl Into<String>) -> Self {
        ImportError::Invalid {
            file: file.to_string(),
            message: message.into(),
        }
    }
}

/// Parses JSON, naming the file, line and column on failure.
pub(crate) fn parse_json<T: serde::de::DeserializeOwned>(
    source: &str,
    file: &str,
    fix: &'static str,
) -> Result<T, ImportError> {
    let source = source.trim_start_matches('\u{feff}');
    if let Some((i, c)) = source.char_indices().find(|(_, c)| !c.is_whitespace()) {
        if c != '{' && c != '[' {
            let before = &source[..i];
            let line = before.matches('\n').count() + 1;
            let column = before.len() - before.rfind('\n').map_or(0, |n| n + 1) + 1;
            return Err(ImportError::NotJson {
                file: file.to_string(),
                line,
                column,
                message: format!("it starts with `{c}`, where JSON starts with `{{`"),
                fix,
            });
        }
    }
    serde_json::from_str(source).map_err(|e| ImportError::NotJson {
        file: file.to_string(),
        line: e.line(),
        column: e.column(),
        message: strip_position(&e.to_string()),
        fix,
    })
}

/// Parses YAML (JSON included), naming the file and position on failure.
pub(crate) fn parse_yaml(
    source: &str,
    file: &str,
    fix: &'static str,
) -> Result<serde_yaml_ng::Value, ImportError> {
    let source = source.trim_start_matches('\u{feff}');
    // A JSON file is read as JSON first: the YAML parser refuses some valid JSON (an escaped
    // emoji, `"\ud83d\udc4d`, is two escapes YAML does not pair).
    if source.trim_start().starts_with(['{', '[']) {
        if let Ok(value) = serde_json::from_str::<serde_yaml_ng::Value>(source) {
            return Ok(value);
        }
    }
    serde_yaml_ng::from_str(source).map_err(|e| ImportError::NotYaml {
        file: file.to_string(),
        message: e.to_string(),
        fix,
    })
}

fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(i) => message[..i].to_string(),
        None => message.to_string(),
    }
}
