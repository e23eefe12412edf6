//! Outlier runs by Tukey's fences: a run whose value lies more than 1.5 (mild) or 3
//! (extreme) interquartile ranges outside the quartiles. Outliers are marked, never dropped:
//! the median and the rank tests are robust to them, and the reader should see them.

use serde::{Deserialize, Serialize};

use super::validate;
use super::StatsError;

/// How far outside the quartiles a value lies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OutlierKind {
    /// Beyond 1.5 × IQR from the quartiles.
    Mild,
    /// Beyond 3 × IQR from the quartiles.
    Extreme,
}

/// Which side of the other runs an outlier lies on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OutlierSide {
    Low,
    High,
}

/// Quartiles and fences of a set of values.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fences {
    pub q1: f64,
    pub q3: f64,
    /// `[q1 − 1.5·IQR, q3 + 1.5·IQR]`.
    pub inner: (f64, f64),
    /// `[q1 − 3·IQR, q3 + 3·IQR]`.
    pub outer: (f64, f64),
}

/// Fewest values for which outliers are classified (quartiles of fewer say little).
pub const OUTLIER_MIN_N: usize = 5;

/// Smallest distance from the median, relative to it, for a value to be called an outlier:
/// quantized or nearly constant per-run values (a fixed arrival rate gives 39.9/s and 40.0/s)
/// have a tiny IQR, and fences alone would flag differences nobody cares about.
pub const OUTLIER_MIN_DEVIATION: f64 = 0.02;

/// Quartiles by linear interpolation (`numpy.percentile`'s default) and Tukey's fences.
pub fn tukey_fences(values: &[f64]) -> Result<Fences, StatsError> {
    validate::finite(values, 1)?;
    let sorted = validate::sorted(values);
    let q = |p: f64| {
        let h = (sorted.len() - 1) as f64 * p;
        let lo = h.floor() as usize;
        let hi = (lo + 1).min(sorted.len() - 1);
        sorted[lo] + (h - lo as f64) * (sorted[hi] - sorted[lo])
    };
    let (q1, q3) = (q(0.25), q(0.75));
    let iqr = q3 - q1;
    Ok(Fences {
        q1,
        q3,
        inner: (q1 - 1.5 * iqr, q3 + 1.5 * iqr),
        outer: (q1 - 3.0 * iqr, q3 + 3.0 * iqr),
    })
}

/// The outliers among `values` as `(index, kind, side)`: outside Tukey's fences and more
/// than [`OUTLIER_MIN_DEVIATION`] away from the median (any distance when the median is 0:
/// one run with errors among runs without). None when there are fewer than
/// [`OUTLIER_MIN_N`] values.
pub fn tukey_outliers(values: &[f64]) -> Vec<(usize, OutlierKind, OutlierSide)> {
    if values.len() < OUTLIER_MIN_N {
        return Vec::new();
    }
    let Ok(f) = tukey_fences(values) else {
        return Vec::new();
    };
    let median = validate::median_sorted(&validate::sorted(values));
    values
        .iter()
        .enumerate()
        .filter(|(_, &v)| (v - median).abs() > OUTLIER_MIN_DEVIATION * median.abs())
        .filter_map(|(i, &v)| {
            let side = if v < f.inner.0 {
                OutlierSide::Low
            } else if v > f.inner.1 {
                OutlierSide::High
            } else {
                return None;
            };
            let kind = if v < f.outer.0 || v > f.outer.1 {
                OutlierKind::Extreme
            } else {
                OutlierKind::Mild
            };
            Some((i, kind, side))
        })
        .collect()
}
