//! Live progress on a terminal: one line, redrawn each second; nothing when not a TTY.

use indicatif::{ProgressBar, ProgressStyle};
use loadlab_engine::{Progress, ProgressCallback};
use loadlab_scenario::units::format_duration;
use std::io::IsTerminal;
use std::time::Duration;

/// A progress callback for the engine, or `None` when progress should not be shown.
/// `at_most`: the run ends when its work is done (iterations, a burst), so `planned` is only
/// its bound and is shown as `≤`.
pub fn reporter(
    quiet: bool,
    no_progress: bool,
    planned: Duration,
    at_most: bool,
) -> Option<(ProgressBar, ProgressCallback)> {
    if quiet || no_progress || !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = ProgressBar::new(planned.as_secs().max(1));
    bar.set_style(
        ProgressStyle::with_template("{spinner} [{bar:24}] {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    let handle = bar.clone();
    let callback = Box::new(move |p: &Progress| {
        handle.set_position(p.elapsed.as_secs());
        let errors = if p.total_requests > 0 {
            100.0 * p.total_failed as f64 / p.total_requests as f64
        } else {
            0.0
        };
        handle.set_message(format!(
            "{}/{}{}{}  {:.0} req/s  p95 {}  errors {:.2}%  active {}",
            format_duration(p.elapsed),
            if at_most { "≤" } else { "" },
            format_duration(p.planned),
            if p.warmup { " (warm-up)" } else { "" },
            p.rate,
            loadlab_report::format_ms(p.p95_ms),
            errors,
            p.active
        ));
    });
    Some((bar, callback))
}
