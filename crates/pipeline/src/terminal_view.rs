//! Live progress on a terminal: one line, redrawn each second (when not a TTY, only a note
//! that the run waits for requests still in flight), and the engine's warnings as they come. Crate chosen: `indicatif`, which redraws one line
//! without flicker and leaves the terminal clean when cleared.

use crate::measure::RunView;
use indicatif::{ProgressBar, ProgressStyle};
use loadlab_analysis::thresholds::ThresholdWatch;
use loadlab_engine::{Progress, ProgressCallback};
use loadlab_live::LiveTap;
use loadlab_record::LiveObserver;
use loadlab_scenario::units::format_duration;
use std::io::IsTerminal;
use std::sync::Arc;
use std::time::Duration;

/// What a run shows on the terminal while it goes, and the taps (dashboard, outputs) that
/// watch each run.
pub struct TerminalView {
    quiet: bool,
    no_progress: bool,
    bar: Option<ProgressBar>,
    taps: Vec<Arc<dyn LiveTap>>,
    /// The next run's threshold watch, for the taps' observers.
    watch: Option<ThresholdWatch>,
}

impl TerminalView {
    pub fn new(quiet: bool, no_progress: bool) -> Self {
        Self {
            quiet,
            no_progress,
            bar: None,
            taps: Vec::new(),
            watch: None,
        }
    }

    /// Every run this view shows is also watched by `taps`.
    pub fn with_taps(mut self, taps: Vec<Arc<dyn LiveTap>>) -> Self {
        self.taps = taps;
        self
    }
}

impl RunView for TerminalView {
    /// `ends_when_done`: the run ends when its work is done (iterations, a burst), so
    /// `planned` is only its bound and is shown as `≤`.
    fn progress(&mut self, planned: Duration, ends_when_done: bool) -> Option<ProgressCallback> {
        if self.quiet {
            return None;
        }
        if self.no_progress || !std::io::stderr().is_terminal() {
            // A CI log gets no progress line, but a run that waits up to 30 s for a target
            // that stopped answering must not look hung there either.
            let mut told = false;
            return Some(Box::new(move |p: &Progress| {
                if let (Some(left), false) = (p.draining, told) {
                    told = true;
                    eprintln!("{}", waiting_text(p, left));
                }
            }));
        }
        let bar = ProgressBar::new(planned.as_secs().max(1));
        bar.set_style(
            ProgressStyle::with_template("{spinner} [{bar:24}] {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> "),
        );
        let handle = bar.clone();
        self.bar = Some(bar);
        Some(Box::new(move |p: &Progress| {
            handle.set_position(p.elapsed.as_secs());
            handle.set_message(line(p, ends_when_done));
        }))
    }

    fn finished(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }

    fn warning(&mut self, message: &str) {
        if !self.quiet {
            eprintln!("warning: {message}");
        }
    }

    fn thresholds(&mut self, watch: &ThresholdWatch) {
        self.watch = Some(watch.clone());
    }

    fn observers(&mut self) -> Vec<Box<dyn LiveObserver>> {
        let watch = self
            .watch
            .take()
            .unwrap_or_else(|| ThresholdWatch::new(&[]));
        self.taps.iter().map(|t| t.observer(&watch)).collect()
    }
}

/// `load ended at 1s; waiting up to 29s for 20 requests still in flight (the request timeout)`.
fn waiting_text(p: &Progress, left: Duration) -> String {
    format!(
        "load ended at {}; waiting up to {} for {} request{} still in flight (the request timeout; Ctrl-C stops now)",
        format_duration(p.planned),
        format_duration(Duration::from_secs(left.as_secs_f64().ceil() as u64)),
        p.active,
        if p.active == 1 { "" } else { "s" }
    )
}

fn line(p: &Progress, at_most: bool) -> String {
    if let Some(left) = p.draining {
        return waiting_text(p, left);
    }
    let errors = if p.total_requests > 0 {
        100.0 * p.total_failed as f64 / p.total_requests as f64
    } else {
        0.0
    };
    format!(
        "{}/{}{}{}  {:.0} req/s  p95 {}  errors {:.2}%  active {}",
        format_duration(p.elapsed),
        if at_most { "≤" } else { "" },
        format_duration(p.planned),
        if p.warmup { " (warm-up)" } else { "" },
        p.rate,
        loadlab_report::format_ms(p.p95_ms),
        errors,
        p.active
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn progress(active: u64, draining: Option<Duration>) -> Progress {
        Progress {
            elapsed: Duration::from_secs(10),
            planned: Duration::from_secs(10),
            warmup: false,
            rate: 50.0,
            p95_ms: 12.0,
            active,
            total_requests: 500,
            total_failed: 5,
            draining,
        }
    }

    #[test]
    fn the_line_says_what_the_run_waits_for_after_the_load() {
        let running = line(&progress(20, None), false);
        assert!(running.starts_with("10s/10s  50 req/s  p95 "), "{running}");
        assert!(running.ends_with("errors 1.00%  active 20"), "{running}");
        let waiting = line(&progress(20, Some(Duration::from_millis(28_300))), false);
        assert_eq!(
            waiting,
            "load ended at 10s; waiting up to 29s for 20 requests still in flight (the request timeout; Ctrl-C stops now)"
        );
        let one = line(&progress(1, Some(Duration::from_secs(3))), false);
        assert!(one.contains("for 1 request still in flight"), "{one}");
    }
}
