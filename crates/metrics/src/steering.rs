//! The record of a steered run: each command a user sent while it went (when, from where, the
//! level before and after), so that the summary and the reports show the load as it was
//! driven beside the load as planned, and tell its segments of constant load apart.

use serde::{Deserialize, Serialize};

/// Where a command came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SteerSource {
    /// `loadlab control`.
    Cli,
    /// The dashboard page's controls.
    Page,
    /// Any other client of the control API.
    Api,
}

impl SteerSource {
    pub fn as_str(self) -> &'static str {
        match self {
            SteerSource::Cli => "cli",
            SteerSource::Page => "page",
            SteerSource::Api => "api",
        }
    }

    /// The source a request names (`X-Loadlab-Source`); anything else is the API's.
    pub fn parse(s: &str) -> Self {
        match s.trim() {
            "cli" => SteerSource::Cli,
            "page" => SteerSource::Page,
            _ => SteerSource::Api,
        }
    }
}

/// What a command did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SteerAction {
    Pause,
    Resume,
    Stop,
    /// A new arrival rate (open model).
    Rate,
    /// A new VU count (closed model).
    Vus,
}

impl SteerAction {
    pub fn as_str(self) -> &'static str {
        match self {
            SteerAction::Pause => "pause",
            SteerAction::Resume => "resume",
            SteerAction::Stop => "stop",
            SteerAction::Rate => "rate",
            SteerAction::Vus => "vus",
        }
    }
}

/// One command followed, as the record keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SteerEvent {
    /// Seconds from the run's start.
    pub at_s: f64,
    pub source: SteerSource,
    pub action: SteerAction,
    /// Arrivals per second (open model) or VUs (closed) just before the command.
    pub before: f64,
    /// The level it set (reached at once, or after `over_s`).
    pub after: f64,
    /// The ramp's length, when the level was reached linearly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub over_s: Option<f64>,
}

/// The load through a stretch of a steered run.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum StretchLevel {
    /// Held at one level: arrivals per second (open model) or VUs (closed).
    Steady { level: f64 },
    /// No new arrival or iteration started (those in flight finished).
    Paused,
    /// Moved linearly from one level to another.
    Ramp { from: f64, to: f64 },
}

/// The load as it was driven: the plan's points until the first command, then each
/// command's level (at once, or along its ramp), held to `end_s` or the stop. Times in
/// seconds from the run's start, levels in the plan's unit.
pub fn driven_points(planned: &[(f64, f64)], events: &[SteerEvent], end_s: f64) -> Vec<(f64, f64)> {
    let first = events.first().map_or(end_s, |e| e.at_s);
    let mut points: Vec<(f64, f64)> = planned.iter().copied().filter(|p| p.0 < first).collect();
    let mut end_s = end_s;
    for e in events {
        cut_at(&mut points, e.at_s, e.before);
        if e.action == SteerAction::Stop {
            end_s = e.at_s;
            break;
        }
        match e.over_s.filter(|over| *over > 0.0) {
            Some(over) => points.push((e.at_s + over, e.after)),
            None => points.push((e.at_s, e.after)),
        }
    }
    let level = level_at(&points, end_s);
    cut_at(&mut points, end_s, level);
    points
}

/// Drops what `points` say after `t`, and ends them at `t` at `level`.
fn cut_at(points: &mut Vec<(f64, f64)>, t: f64, level: f64) {
    let kept = points.partition_point(|p| p.0 <= t);
    // A ramp cut short ends where it had got to.
    let reached = match (kept.checked_sub(1), points.get(kept)) {
        (Some(i), Some(&next)) if points[i].0 < t => Some(interpolate(points[i], next, t)),
        _ => None,
    };
    points.truncate(kept);
    if let Some(here) = reached {
        points.push((t, here));
    }
    if points.last() != Some(&(t, level)) {
        points.push((t, level));
    }
}

fn interpolate(a: (f64, f64), b: (f64, f64), t: f64) -> f64 {
    if b.0 <= a.0 {
        return b.1;
    }
    a.1 + (b.1 - a.1) * (t - a.0) / (b.0 - a.0)
}

/// The level the points give at `t` (the later one where they step; the last one after
/// their end; 0 before any).
fn level_at(points: &[(f64, f64)], t: f64) -> f64 {
    let after = points.partition_point(|p| p.0 <= t);
    match (after.checked_sub(1).map(|i| points[i]), points.get(after)) {
        (Some(a), Some(&b)) => interpolate(a, b, t),
        (Some(a), None) => a.1,
        (None, _) => 0.0,
    }
}

/// The stretches of constant or linearly moving load the driven points make, in time order:
/// `(from_s, to_s, level)`. Neighbouring stretches held at the same level are one.
pub fn stretches_of(points: &[(f64, f64)]) -> Vec<(f64, f64, StretchLevel)> {
    let mut out: Vec<(f64, f64, StretchLevel)> = Vec::new();
    for pair in points.windows(2) {
        let ((a, va), (b, vb)) = (pair[0], pair[1]);
        if b - a < 1e-9 {
            continue;
        }
        let level = if (va - vb).abs() < 1e-9 {
            if va.abs() < 1e-9 {
                StretchLevel::Paused
            } else {
                StretchLevel::Steady { level: va }
            }
        } else {
            StretchLevel::Ramp { from: va, to: vb }
        };
        match out.last_mut() {
            Some(last)
                if (last.1 - a).abs() < 1e-9
                    && last.2 == level
                    && !matches!(level, StretchLevel::Ramp { .. }) =>
            {
                last.1 = b;
            }
            _ => out.push((a, b, level)),
        }
    }
    out
}

/// The load of several processes driven at once (a merge of steered segments): their
/// curves added up, each 0 outside its own span.
pub fn summed_points(curves: &[Vec<(f64, f64)>]) -> Vec<(f64, f64)> {
    let mut times: Vec<f64> = curves.iter().flatten().map(|p| p.0).collect();
    times.sort_by(f64::total_cmp);
    times.dedup();
    let mut out: Vec<(f64, f64)> = Vec::new();
    for t in times {
        let before: f64 = curves.iter().map(|c| side_level(c, t, false)).sum();
        let after: f64 = curves.iter().map(|c| side_level(c, t, true)).sum();
        out.push((t, before));
        if (after - before).abs() > 1e-9 {
            out.push((t, after));
        }
    }
    out
}

/// A curve's level just before (`after` false) or just after `t`; 0 outside its span.
fn side_level(points: &[(f64, f64)], t: f64, after: bool) -> f64 {
    let (Some(first), Some(last)) = (points.first(), points.last()) else {
        return 0.0;
    };
    if t < first.0 || t > last.0 || (after && t == last.0) || (!after && t == first.0) {
        return 0.0;
    }
    if after {
        level_at(points, t)
    } else {
        let at = points.partition_point(|p| p.0 < t);
        interpolate(points[at - 1], points[at], t)
    }
}
