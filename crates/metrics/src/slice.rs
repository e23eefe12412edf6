//! How long the intervals of a run's record are: what the engine hands over per interval, the
//! record stores, live thresholds judge and charts draw. One policy that the engine, the
//! record and the scenario's checks of windowed thresholds share.

/// Runs planned shorter than this are cut into [`SHORT_RUN_SLICE`]s, longer ones into seconds.
pub const SHORT_RUN: std::time::Duration = std::time::Duration::from_secs(10);
/// The slice of a short run: a 3-second run still draws a curve of 30 points, not 3.
pub const SHORT_RUN_SLICE: std::time::Duration = std::time::Duration::from_millis(100);

/// The length of the intervals a run of `planned` length is recorded in: whole seconds keep
/// an hour's record small, tenths give a short run a curve.
pub fn slice_for(planned: std::time::Duration) -> std::time::Duration {
    if planned < SHORT_RUN {
        SHORT_RUN_SLICE
    } else {
        std::time::Duration::from_secs(1)
    }
}
