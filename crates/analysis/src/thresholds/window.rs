//! Thresholds judged every interval while the run goes, exactly: a windowed threshold
//! (`latency.p95 < 500ms over 30s`) is judged, from the first interval its window is full of
//! measured intervals (and its grace is over) on, on the measured intervals inside its window:
//! a running sum of just the histograms and counters it reads (`running`; histograms added and
//! subtracted, never percentiles averaged), read with the same statistics as the end-of-run
//! thresholds. One without a window that aborts is judged on everything measured so far.
//! Plain thresholds get a current value too (for a dashboard).
//!
//! At the end, a windowed threshold fails when any of its judged windows failed, and its
//! value is the worst window's (the highest for `<`, the lowest for `>`).

use super::actual_value;
use super::running::RunningWindow;
use loadlab_metrics::result::ThresholdResult;
use loadlab_metrics::{RunResult, ThresholdBreach};
use loadlab_record::{IntervalRecord, RecordMeta};
use loadlab_scenario::threshold::Op;
use loadlab_scenario::Threshold;

/// Slack for comparing interval boundaries (they are sums of f64 lengths).
const EPS: f64 = 1e-6;

/// A threshold's value now, as a dashboard shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct ThresholdState {
    /// As the scenario wrote it (the short form).
    pub expr: String,
    /// The value over its window (windowed), over everything measured so far (others); `None`
    /// before it has data.
    pub value: Option<f64>,
    /// Whether `value` meets the threshold (true while there is no value yet).
    pub ok: bool,
    /// False before its first judgement (warm-up, grace, no data yet).
    pub judged: bool,
    /// Its window in seconds (`None`: the whole run).
    pub window_s: Option<f64>,
    /// It stops the run when it fails.
    pub abort: bool,
    /// Some judgement (a window, after its grace) failed already.
    pub failed_before: bool,
}

/// What became of one threshold while the run went.
#[derive(Debug, Clone, Default)]
struct Track {
    /// The last judgement's value and verdict.
    current: Option<(f64, bool)>,
    /// The worst judged value, and whether any judgement failed.
    worst: Option<f64>,
    failed: bool,
}

/// Judges the thresholds interval by interval (see the module's doc).
pub struct WindowJudge {
    thresholds: Vec<Threshold>,
    tracks: Vec<Track>,
    /// One running window per distinct window length, and one for everything measured so far
    /// (the last); empty until `begin`.
    windows: Vec<RunningWindow>,
    /// Per threshold: its window (index in `windows`) and what it reads there.
    reads: Vec<(usize, usize)>,
    /// Whether `begin` was called (nothing is judged before).
    begun: bool,
    warmup_s: f64,
    /// When the plain thresholds' current values were last refreshed (run time, s).
    plain_at_s: Option<f64>,
    breach: bool,
}

impl WindowJudge {
    pub fn new(thresholds: Vec<Threshold>) -> Self {
        WindowJudge {
            tracks: vec![Track::default(); thresholds.len()],
            thresholds,
            windows: Vec::new(),
            reads: Vec::new(),
            begun: false,
            warmup_s: 0.0,
            plain_at_s: None,
            breach: false,
        }
    }

    /// True when some threshold is judged while the run goes.
    pub fn has_live(&self) -> bool {
        self.thresholds.iter().any(|t| t.live.is_live())
    }

    /// Knows the run's steps and warm-up: sets up a running window per window length.
    pub fn begin(&mut self, meta: &RecordMeta) {
        let mut lengths: Vec<f64> = Vec::new();
        for t in &self.thresholds {
            if let Some(w) = t.live.window.map(|w| w.as_secs_f64()) {
                if !lengths.contains(&w) {
                    lengths.push(w);
                }
            }
        }
        self.windows = lengths
            .iter()
            .map(|&w| RunningWindow::new(Some(w)))
            .chain([RunningWindow::new(None)])
            .collect();
        let whole = lengths.len();
        self.reads = self
            .thresholds
            .iter()
            .map(|t| {
                let window = t.live.window.map_or(whole, |w| {
                    let w = w.as_secs_f64();
                    lengths.iter().position(|&l| l == w).expect("listed")
                });
                (window, self.windows[window].need(t, meta))
            })
            .collect();
        self.warmup_s = meta.warmup_s;
        self.begun = true;
    }

    /// Judges what is due after `record`; the first failed judgement of a threshold marked
    /// `abort` is returned, once.
    pub fn interval(&mut self, record: &IntervalRecord) -> Option<ThresholdBreach> {
        if !self.begun || record.warmup {
            return None;
        }
        for w in &mut self.windows {
            w.add(record);
        }
        let end_s = record.start_s + record.length_s;
        let measured_s = end_s - self.warmup_s;
        let refresh_plain = self.plain_at_s.is_none_or(|at| end_s - at >= 1.0 - EPS);
        let mut breach = None;
        for i in 0..self.thresholds.len() {
            let t = &self.thresholds[i];
            let due = if t.live.is_live() {
                measured_s + EPS >= first_judged_s(t)
            } else {
                refresh_plain
            };
            if !due {
                continue;
            }
            let (window, need) = self.reads[i];
            let Some(value) = self.windows[window].value(t, need) else {
                continue;
            };
            let ok = t.op.holds(value, t.value);
            let track = &mut self.tracks[i];
            track.current = Some((value, ok));
            if !t.live.is_live() {
                continue;
            }
            track.worst = Some(match track.worst {
                Some(w) => worse(t.op, w, value),
                None => value,
            });
            track.failed |= !ok;
            if !ok && t.live.abort && !self.breach && breach.is_none() {
                breach = Some(ThresholdBreach {
                    threshold: t.expr.clone(),
                    window_s: t.live.window.map(|w| w.as_secs_f64()),
                    value,
                    at_s: end_s,
                });
            }
        }
        if refresh_plain {
            self.plain_at_s = Some(end_s);
        }
        self.breach |= breach.is_some();
        breach
    }

    /// Every threshold's current value (windowed and plain).
    pub fn states(&self) -> Vec<ThresholdState> {
        self.thresholds
            .iter()
            .zip(&self.tracks)
            .map(|(t, track)| ThresholdState {
                expr: t.expr.clone(),
                value: track.current.map(|(v, _)| v),
                ok: track.current.is_none_or(|(_, ok)| ok),
                judged: track.current.is_some(),
                window_s: t.live.window.map(|w| w.as_secs_f64()),
                abort: t.live.abort,
                failed_before: track.failed,
            })
            .collect()
    }

    /// The end-of-run results on `run` (the whole run's summary). A windowed threshold judged
    /// at least once gives its worst window and fails if any window failed; one that was never
    /// judged (the run ended within its grace, or had no data) is judged on the whole run. A
    /// threshold that aborts without a window adds the whole run's judgement to the live ones.
    pub fn results(&self, run: &RunResult) -> Vec<ThresholdResult> {
        self.thresholds
            .iter()
            .zip(&self.tracks)
            .map(|(t, track)| {
                let whole = actual_value(t, run);
                let (actual, failed) = match (t.live.is_live(), track.worst) {
                    (true, Some(w)) if t.live.window.is_some() => (Some(w), track.failed),
                    (true, Some(w)) => (
                        Some(whole.map_or(w, |v| worse(t.op, w, v))),
                        track.failed || whole.is_some_and(|v| !t.op.holds(v, t.value)),
                    ),
                    _ => (whole, whole.is_none_or(|v| !t.op.holds(v, t.value))),
                };
                ThresholdResult {
                    expr: t.expr.clone(),
                    actual,
                    ok: actual.is_some() && !failed,
                }
            })
            .collect()
    }
}

/// Measured time (after the warm-up) of a live threshold's first judgement: its window full,
/// and its grace over.
fn first_judged_s(t: &Threshold) -> f64 {
    let window = t.live.window.map_or(0.0, |w| w.as_secs_f64());
    window.max(t.live.grace.as_secs_f64())
}

/// The worse of two values for a threshold of this comparison.
fn worse(op: Op, a: f64, b: f64) -> f64 {
    match op {
        Op::Lt | Op::Le => a.max(b),
        Op::Gt | Op::Ge => a.min(b),
    }
}

#[cfg(test)]
#[path = "window_tests.rs"]
mod tests;
