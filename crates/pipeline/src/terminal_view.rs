//! Live progress on a terminal: one line, redrawn each second (nothing when not a TTY), and
//! the engine's warnings as they come. Crate chosen: `indicatif`, which redraws one line
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
        if self.quiet || self.no_progress || !std::io::stderr().is_terminal() {
            return None;
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

fn line(p: &Progress, at_most: bool) -> String {
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
