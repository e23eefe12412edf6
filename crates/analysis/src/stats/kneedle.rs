//! Kneedle knee/elbow detection (Satopää et al. 2011) — where a load curve stops scaling.
//!
//! Follows the `kneed` Python package (0.9.0) with `interp_method="interp1d"` (no smoothing)
//! and `online=False` (the first knee found is returned): normalize x and y to [0, 1],
//! turn the curve into an increasing concave one, take the difference curve `y − x`, find
//! its local maxima/minima (`argrelextrema` with `>=`/`<=`, edges clipped), and report the
//! first local maximum after which the difference curve drops below
//! `max − S · mean(Δx_normalized)` before reaching a local minimum.

use serde::{Deserialize, Serialize};

use super::validate;
use super::StatsError;

/// Shape of the curve: `Concave` finds knees, `Convex` finds elbows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Curve {
    /// Curve bends downwards (e.g. throughput flattening as load grows).
    Concave,
    /// Curve bends upwards (e.g. latency shooting up as load grows).
    Convex,
}

/// Whether y grows or falls with x.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// y increases with x.
    Increasing,
    /// y decreases with x.
    Decreasing,
}

/// A detected knee: the input point (`xs[index]`, `ys[index]`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Knee {
    /// x of the knee.
    pub x: f64,
    /// y of the knee.
    pub y: f64,
    /// Index of the knee in the input.
    pub index: usize,
}

/// Finds the knee (concave) or elbow (convex) of a curve, `Ok(None)` when there is none.
/// `xs` must be strictly increasing, `ys` must not be constant, at least 3 points,
/// `sensitivity ≥ 0` (1.0 is the paper's default).
pub fn kneedle(
    xs: &[f64],
    ys: &[f64],
    curve: Curve,
    direction: Direction,
    sensitivity: f64,
) -> Result<Option<Knee>, StatsError> {
    if xs.len() != ys.len() {
        return Err(StatsError::LengthMismatch {
            left: xs.len(),
            right: ys.len(),
        });
    }
    validate::finite(xs, 3)?;
    validate::finite(ys, 3)?;
    if !(sensitivity.is_finite() && sensitivity >= 0.0) {
        return Err(StatsError::InvalidArgument {
            name: "sensitivity",
            value: sensitivity,
        });
    }
    if let Some(i) = (1..xs.len()).find(|&i| xs[i] <= xs[i - 1]) {
        return Err(StatsError::NotIncreasing { index: i });
    }
    let n = xs.len();
    let x_norm = normalize(xs).ok_or(StatsError::Degenerate("x values are all equal"))?;
    let mut y_norm = normalize(ys).ok_or(StatsError::Degenerate("y values are all equal"))?;

    // Convert to an increasing, concave curve.
    let flipped = matches!(
        (direction, curve),
        (Direction::Decreasing, Curve::Concave) | (Direction::Increasing, Curve::Convex)
    );
    match (direction, curve) {
        (Direction::Decreasing, Curve::Concave) => y_norm.reverse(),
        (Direction::Decreasing, Curve::Convex) => {
            let max = y_norm.iter().copied().fold(f64::MIN, f64::max);
            y_norm.iter_mut().for_each(|y| *y = max - *y);
        }
        (Direction::Increasing, Curve::Convex) => {
            let max = y_norm.iter().copied().fold(f64::MIN, f64::max);
            y_norm.iter_mut().for_each(|y| *y = max - *y);
            y_norm.reverse();
        }
        (Direction::Increasing, Curve::Concave) => {}
    }
    let x_diff: Vec<f64> = if flipped {
        x_norm.iter().rev().map(|x| 1.0 - x).collect()
    } else {
        x_norm
    };
    let y_diff: Vec<f64> = y_norm.iter().zip(&x_diff).map(|(y, x)| y - x).collect();

    let maxima = rel_extrema(&y_diff, |a, b| a >= b);
    let minima = rel_extrema(&y_diff, |a, b| a <= b);
    let Some(&first_max) = maxima.first() else {
        return Ok(None);
    };
    let steps: Vec<f64> = x_diff.windows(2).map(|w| w[1] - w[0]).collect();
    let mean_step = (steps.iter().sum::<f64>() / steps.len() as f64).abs();

    let mut threshold = 0.0;
    let mut threshold_index = first_max;
    let mut active = true;
    for i in first_max..n - 1 {
        if maxima.contains(&i) {
            threshold = y_diff[i] - sensitivity * mean_step;
            threshold_index = i;
            active = true;
        }
        if minima.contains(&i) {
            threshold = 0.0;
            active = false;
        }
        if active && y_diff[i + 1] < threshold {
            let index = if flipped {
                n - 1 - threshold_index
            } else {
                threshold_index
            };
            return Ok(Some(Knee {
                x: xs[index],
                y: ys[index],
                index,
            }));
        }
    }
    Ok(None)
}

/// `(a − min) / (max − min)`; `None` when all values are equal.
fn normalize(values: &[f64]) -> Option<Vec<f64>> {
    let min = values.iter().copied().fold(f64::INFINITY, f64::min);
    let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let range = max - min;
    if range == 0.0 {
        return None;
    }
    Some(values.iter().map(|v| (v - min) / range).collect())
}

/// Indices `i` where `cmp(d[i], d[i−1])` and `cmp(d[i], d[i+1])` hold, neighbours clipped at
/// the edges (SciPy's `argrelextrema(d, cmp, order=1, mode='clip')`).
fn rel_extrema(d: &[f64], cmp: impl Fn(f64, f64) -> bool) -> Vec<usize> {
    let n = d.len();
    (0..n)
        .filter(|&i| {
            let prev = d[i.saturating_sub(1)];
            let next = d[(i + 1).min(n - 1)];
            cmp(d[i], prev) && cmp(d[i], next)
        })
        .collect()
}
