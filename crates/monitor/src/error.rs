//! Why a monitor could not start. Failures while it runs are not errors: they become
//! warnings and missing series, so a run never dies because a source went away.

/// The monitor cannot run at all.
#[derive(Debug, thiserror::Error)]
pub enum MonitorError {
    #[error("the monitor needs Linux's /proc (not found: {0})")]
    NoProcfs(String),
    #[error("monitor.interval must be at least 100ms, got {0:?}")]
    IntervalTooShort(std::time::Duration),
    #[error("monitor: {source_name}: invalid regex `{pattern}`: {message}")]
    BadPattern {
        source_name: String,
        pattern: String,
        message: String,
    },
    #[error("cannot start the monitor thread: {0}")]
    Thread(#[source] std::io::Error),
}
