//! Why manifests cannot be rendered, naming the flag or file and the fix.

#[derive(Debug, thiserror::Error)]
pub enum K8sError {
    #[error("{flag}: {message}")]
    Flag { flag: &'static str, message: String },
    #[error("{path}: {message}")]
    File { path: String, message: String },
}

impl K8sError {
    pub(crate) fn flag(flag: &'static str, message: impl Into<String>) -> Self {
        K8sError::Flag {
            flag,
            message: message.into(),
        }
    }
}
