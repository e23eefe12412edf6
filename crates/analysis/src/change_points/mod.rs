//! Change points in a performance history: Apache Otava's (formerly Hunter's) method, so a
//! series of runs gets one signal when its level moved, not one alarm per noisy run.
//!
//! Two steps, as in Fleming et al., "Hunter: Using Change Point Detection to Hunt for
//! Performance Regressions" (ICPE 2023) and Otava's `analysis.compute_change_points`:
//! 1. **Split**: windows of `window` points, each advanced by half a window (or to its last
//!    change point), are cut recursively by E-divisive means (`energy.rs`); a cut is kept while
//!    the t-test between its two sides (`ttest.rs`) has p ≤ a relaxed first-pass level
//!    (10 × `max_p_value` below 0.05, 2 × below 0.5). The union of the cuts are *weak* points.
//! 2. **Merge**: repeatedly drop the weakest point — the one with the largest p-value, or, when
//!    every p-value is below `max_p_value`, the one with the smallest relative change if that
//!    is ≤ `min_magnitude` — and re-test its neighbours on the merged segments.
//!
//! Invariants: indices count the series' points from 0 (oldest first); a change point's index
//! is the first point of the new level, never 0; the result is sorted and deterministic (no
//! permutations, no randomness). Otava's quirks are kept on purpose so the two agree on
//! every fixture (tests/fixtures/otava): after a merge Otava re-tests the points at the removed
//! point's position and the one after it (not the one before), and loadlab does the same.

mod energy;
mod ttest;

pub use ttest::SegmentTest;

use crate::stats::StatsError;
use energy::best_split;
use ttest::compare_segments;

/// Otava's defaults: p-value 0.001, window 50, no minimum magnitude.
pub const DEFAULT_MAX_P_VALUE: f64 = 0.001;
/// Points per split window (Otava's `window_len`).
pub const DEFAULT_WINDOW: usize = 50;

/// The detector's settings, named and defaulted as Otava's.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChangePointParams {
    /// A change point must have a t-test p-value below this.
    pub max_p_value: f64,
    /// Points per split window (≥ 2); windows overlap by half.
    pub window: usize,
    /// Relative change (`max(|after/before − 1|, |before/after − 1|)`) a change point must
    /// exceed to be kept; 0 keeps every significant one.
    pub min_magnitude: f64,
}

impl Default for ChangePointParams {
    fn default() -> Self {
        ChangePointParams {
            max_p_value: DEFAULT_MAX_P_VALUE,
            window: DEFAULT_WINDOW,
            min_magnitude: 0.0,
        }
    }
}

impl ChangePointParams {
    fn validate(&self) -> Result<(), StatsError> {
        if !(self.max_p_value > 0.0 && self.max_p_value <= 1.0) {
            return Err(StatsError::InvalidArgument {
                name: "max p-value (must be in (0, 1])",
                value: self.max_p_value,
            });
        }
        if self.window < 2 {
            return Err(StatsError::InvalidArgument {
                name: "window (must be at least 2 points)",
                value: self.window as f64,
            });
        }
        if !(self.min_magnitude >= 0.0 && self.min_magnitude.is_finite()) {
            return Err(StatsError::InvalidArgument {
                name: "min magnitude (must be a finite relative change ≥ 0)",
                value: self.min_magnitude,
            });
        }
        Ok(())
    }

    /// The split step's relaxed level (Otava's `first_pass_pvalue`).
    fn first_pass_p_value(&self) -> f64 {
        let p = self.max_p_value;
        if p < 0.05 {
            p * 10.0
        } else if p < 0.5 {
            p * 2.0
        } else {
            p
        }
    }
}

/// A change point: the index of the first point of the new level and the test between the
/// segments on either side (bounded by the neighbouring change points).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ChangePoint {
    /// Index into the series (0 = oldest point).
    pub index: usize,
    /// The segments before and after.
    pub test: SegmentTest,
}

/// The change points of `series` and the weak points the split step proposed.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Detection {
    /// The change points, by index.
    pub change_points: Vec<ChangePoint>,
    /// The split step's candidates (a superset), for diagnosis and comparison with Otava.
    pub weak: Vec<ChangePoint>,
}

/// Finds the change points of `series` (oldest first) with Otava's split-and-merge method.
pub fn detect_change_points(
    series: &[f64],
    params: &ChangePointParams,
) -> Result<Detection, StatsError> {
    params.validate()?;
    if let Some(index) = series.iter().position(|v| !v.is_finite()) {
        return Err(StatsError::NotFinite {
            index,
            value: series[index],
        });
    }
    let weak = split(series, params.window, params.first_pass_p_value());
    let change_points = merge(weak.clone(), series, params);
    Ok(Detection {
        change_points,
        weak,
    })
}

/// Segment bounds `[0, c1, c2, …, len]` for sorted change point indices.
fn bounds(indices: &[usize], len: usize) -> Vec<(usize, usize)> {
    let mut cuts = Vec::with_capacity(indices.len() + 2);
    cuts.push(0);
    cuts.extend_from_slice(indices);
    cuts.push(len);
    cuts.windows(2)
        .filter(|w| w[0] != w[1])
        .map(|w| (w[0], w[1]))
        .collect()
}

/// Tests the change point at `index` against the segments it separates in `segments` (it is
/// either a boundary between two of them or, for a new cut, inside one).
fn test_at(series: &[f64], segments: &[(usize, usize)], index: usize) -> SegmentTest {
    for (i, &(start, end)) in segments.iter().enumerate() {
        if end == index {
            let (next_start, next_end) = segments[i + 1];
            return compare_segments(&series[start..end], &series[next_start..next_end]);
        }
        if start < index && index < end {
            return compare_segments(&series[start..index], &series[index..end]);
        }
    }
    unreachable!("change point {index} lies in no segment of {segments:?}")
}

/// E-divisive means on one window, cutting while the cut is significant at `max_p_value`;
/// returns sorted indices local to the window.
fn divisive(window: &[f64], max_p_value: f64) -> Vec<usize> {
    let mut cuts: Vec<usize> = Vec::new();
    loop {
        let segments = bounds(&cuts, window.len());
        let best = segments
            .iter()
            .filter(|(start, end)| end - start > 1)
            .map(|&(start, end)| best_split(window, start, end))
            .fold(None, |best: Option<energy::Candidate>, c| match best {
                Some(b) if b.qhat >= c.qhat => Some(b),
                _ => Some(c),
            });
        let Some(candidate) = best else { break };
        let test = test_at(window, &segments, candidate.index);
        if test.p_value > max_p_value {
            break;
        }
        cuts.push(candidate.index);
        cuts.sort_unstable();
    }
    cuts
}

/// The split step: the union of the cuts of overlapping windows, each re-tested against its
/// neighbours in the whole series.
fn split(series: &[f64], window: usize, first_pass_p_value: f64) -> Vec<ChangePoint> {
    let step = window / 2;
    let mut indices: Vec<usize> = Vec::new();
    let mut start = 0;
    while start < series.len() {
        let end = (start + window).min(series.len());
        let cuts: Vec<usize> = divisive(&series[start..end], first_pass_p_value)
            .into_iter()
            .map(|i| i + start)
            .collect();
        let last_cut = cuts.last().copied().unwrap_or(0);
        start = last_cut.max(start + step);
        for cut in cuts {
            if !indices.contains(&cut) {
                indices.push(cut);
            }
        }
    }
    indices.sort_unstable();
    let segments = bounds(&indices, series.len());
    indices
        .into_iter()
        .map(|index| ChangePoint {
            index,
            test: test_at(series, &segments, index),
        })
        .collect()
}

/// The merge step: drops the weakest point until every one left is significant and (if a
/// minimum is set) large enough.
fn merge(
    mut points: Vec<ChangePoint>,
    series: &[f64],
    params: &ChangePointParams,
) -> Vec<ChangePoint> {
    while !points.is_empty() {
        // The first of the largest p-values (Python's max keeps the first of equals).
        let mut weakest = points.iter().enumerate().fold(0, |w, (i, p)| {
            if p.test.p_value > points[w].test.p_value {
                i
            } else {
                w
            }
        });
        if points[weakest].test.p_value < params.max_p_value {
            weakest = points.iter().enumerate().fold(0, |w, (i, p)| {
                if p.test.magnitude() < points[w].test.magnitude() {
                    i
                } else {
                    w
                }
            });
            if points[weakest].test.magnitude() > params.min_magnitude {
                return points;
            }
        }
        points.remove(weakest);
        let indices: Vec<usize> = points.iter().map(|p| p.index).collect();
        let segments = bounds(&indices, series.len());
        // Otava re-tests the points at the removed position and after it (see the module doc).
        for i in [weakest, weakest + 1] {
            if let Some(point) = points.get_mut(i) {
                point.test = test_at(series, &segments, point.index);
            }
        }
    }
    points
}

#[cfg(test)]
mod tests;
