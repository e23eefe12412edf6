//! What can go wrong with remote results, in words a user can act on.

#[derive(Debug, thiserror::Error)]
pub enum RemoteError {
    #[error("--results {url}: {message}")]
    BadUrl { url: String, message: String },
    #[error("{url}: cannot {op} {}: {source}", if key.is_empty() { "it".to_string() } else { format!("`{key}`") })]
    Store {
        url: String,
        op: &'static str,
        key: String,
        #[source]
        source: Box<object_store::Error>,
    },
    #[error("{url}: no AWS credentials: none are set in the environment, and the cloud instance metadata service gave none ({source})\n  hint: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_REGION; AWS_ENDPOINT_URL for a store that is not AWS, e.g. MinIO), or AWS_SKIP_SIGNATURE=true for a public bucket; on a cloud machine, give it a role (docs/distributed.md)")]
    NoCredentials {
        url: String,
        #[source]
        source: Box<object_store::Error>,
    },
    #[error("only {arrived} of {count} segments arrived within {waited_s} s at the start barrier of {url} (missing: {missing}); the run did not start\n  hint: check the missing pods (kubectl get pods), or give them more time with --barrier-timeout")]
    BarrierTimeout {
        url: String,
        arrived: u32,
        count: u32,
        waited_s: u64,
        missing: String,
    },
    #[error("the start barrier of {url} failed earlier ({reason}); start a new run under a new --results prefix")]
    BarrierFailed { url: String, reason: String },
    #[error("{url} already holds a run that started at {started} ({ago_s:.0} s ago): segment {segment} is too late to join it (its share stays missing in the merge)\n  hint: for a new run, give a new --results prefix")]
    TooLate {
        url: String,
        started: String,
        ago_s: f64,
        segment: String,
    },
    #[error("{url} holds segments of another plan (plan hash {theirs}, this one is {ours}): give each run its own --results prefix")]
    OtherPlan {
        url: String,
        theirs: String,
        ours: String,
    },
    #[error("{url}: segment {segment} of {theirs} segments is here already, this one is of {ours}: give each run its own --results prefix")]
    OtherSplit {
        url: String,
        segment: u32,
        theirs: u32,
        ours: u32,
    },
    #[error("{url}: {message}")]
    Invalid { url: String, message: String },
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error(transparent)]
    Record(#[from] loadlab_record::RecordError),
}

impl RemoteError {
    pub(crate) fn store(url: &str, op: &'static str, key: &str, e: object_store::Error) -> Self {
        RemoteError::Store {
            url: url.to_string(),
            op,
            key: key.to_string(),
            source: Box::new(e),
        }
    }

    pub(crate) fn invalid(url: &str, message: impl Into<String>) -> Self {
        RemoteError::Invalid {
            url: url.to_string(),
            message: message.into(),
        }
    }

    /// True for errors of the input (a URL, a prefix holding another run): exit 2; the rest
    /// are failures of the run or its storage (exit 3).
    pub fn is_bad_input(&self) -> bool {
        matches!(
            self,
            RemoteError::BadUrl { .. }
                | RemoteError::NoCredentials { .. }
                | RemoteError::OtherPlan { .. }
                | RemoteError::OtherSplit { .. }
                | RemoteError::BarrierFailed { .. }
                | RemoteError::Invalid { .. }
        )
    }
}
