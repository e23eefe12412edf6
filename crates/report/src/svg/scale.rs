//! Scales of a chart axis: linear, log, percentile and category values mapped to pixels,
//! with "nice" tick positions.

use super::labels::{bytes_in_unit, fmt_tick, shorten, trim};
use crate::chart::{Axis, Chart, RuleAxis, Scale, SeriesKind, Unit};

/// Maps data values to pixels along one axis.
pub(super) struct Mapping {
    pub(super) scale: Scale,
    pub(super) lo: f64,
    pub(super) hi: f64,
    pub(super) px0: f64,
    pub(super) px1: f64,
    pub(super) ticks: Vec<(f64, String)>,
}

impl Mapping {
    pub(super) fn t(&self, v: f64) -> f64 {
        match self.scale {
            Scale::Log => v.max(1e-12).log10(),
            Scale::Percentile => percentile_t(v),
            _ => v,
        }
    }

    pub(super) fn px(&self, v: f64) -> f64 {
        let t = self.t(v);
        let span = (self.hi - self.lo).max(1e-12);
        self.px0 + (t - self.lo) / span * (self.px1 - self.px0)
    }
}

pub(super) fn percentile_t(q: f64) -> f64 {
    let q = q.clamp(0.0, 1.0 - 1e-9);
    -(1.0 - q).log10()
}

pub(super) fn axis_values(c: &Chart, x: bool) -> Vec<f64> {
    let mut v = Vec::new();
    for s in &c.series {
        for (i, &(px, py)) in s.points.iter().enumerate() {
            if x {
                v.push(px);
            } else {
                v.push(py);
                if let Some(&(lo, hi)) = s.intervals.get(i) {
                    v.push(lo);
                    v.push(hi);
                }
                if matches!(s.kind, SeriesKind::Bars | SeriesKind::Area) {
                    v.push(0.0);
                }
            }
        }
    }
    for r in &c.rules {
        if (r.axis == RuleAxis::X) == x {
            v.push(r.value);
        }
    }
    if x {
        for b in &c.bands {
            v.push(b.from);
            v.push(b.to);
        }
    }
    v.retain(|x| x.is_finite());
    v
}

/// An axis's data range `(lo, hi)` (in the scale's own units: log10 for a log axis,
/// `percentile_t` for a percentile one) and its ticks in data space with their labels.
type RangeAndTicks = (f64, f64, Vec<(f64, String)>);

pub(super) fn mapping(axis: &Axis, values: &[f64], px0: f64, px1: f64) -> Mapping {
    let (lo, hi, ticks) = match axis.scale {
        Scale::Category => category_range(axis),
        Scale::Percentile => percentile_range(values),
        Scale::Log => log_range(axis, values),
        Scale::Linear => linear_range(axis, values),
    };
    let mut m = Mapping {
        scale: axis.scale,
        lo,
        hi,
        px0,
        px1,
        ticks: Vec::new(),
    };
    // Tick positions are in data space; keep those inside the range.
    m.ticks = ticks
        .into_iter()
        .filter(|(v, _)| {
            let t = m.t(*v);
            t >= lo - 1e-9 && t <= hi + 1e-9
        })
        .collect();
    m
}

/// One tick per category, each centred in its slot.
fn category_range(axis: &Axis) -> RangeAndTicks {
    let n = axis.categories.len().max(1);
    let ticks = axis
        .categories
        .iter()
        .enumerate()
        .map(|(i, c)| (i as f64, shorten(c, 22)))
        .collect();
    (-0.5, n as f64 - 0.5, ticks)
}

/// From 0% to the nines the data reaches (at least 99%, at most 99.99999%), a tick per nine.
fn percentile_range(values: &[f64]) -> RangeAndTicks {
    let max_t = values.iter().map(|&q| percentile_t(q)).fold(2.0, f64::max);
    let top = max_t.ceil().min(7.0);
    let ticks = (0..=top as i32)
        .map(|k| {
            let q = 1.0 - 10f64.powi(-k);
            let label = if k == 0 {
                "0%".to_string()
            } else {
                format!("{}%", trim(q * 100.0, k as usize))
            };
            (q, label)
        })
        .collect();
    (0.0, top, ticks)
}

/// Whole decades around the data, with 2× and 5× ticks when there are two decades or fewer.
fn log_range(axis: &Axis, values: &[f64]) -> RangeAndTicks {
    let pos: Vec<f64> = values.iter().copied().filter(|v| *v > 0.0).collect();
    let (mn, mx) = min_max(&pos).unwrap_or((1.0, 10.0));
    let lo = mn.log10().floor();
    let mut hi = mx.log10().ceil();
    if hi <= lo {
        hi = lo + 1.0;
    }
    let mut ticks = Vec::new();
    let few = hi - lo <= 2.0;
    for k in lo as i32..=hi as i32 {
        let base = 10f64.powi(k);
        ticks.push((base, fmt_tick(axis.unit, base)));
        if few && (k as f64) < hi {
            for m in [2.0, 5.0] {
                ticks.push((base * m, fmt_tick(axis.unit, base * m)));
            }
        }
    }
    (lo, hi, ticks)
}

/// About five nice steps (whole ones for counts, one unit for bytes), from zero when the
/// axis asks, over the axis's fixed range or the data's.
fn linear_range(axis: &Axis, values: &[f64]) -> RangeAndTicks {
    let (mut mn, mut mx) = axis.range.or_else(|| min_max(values)).unwrap_or((0.0, 1.0));
    if axis.from_zero {
        mn = mn.min(0.0);
    }
    if mx - mn < 1e-9 {
        mx = mn + if mn.abs() > 0.0 { mn.abs() } else { 1.0 };
    }
    let raw = (mx - mn) / 5.0;
    let step = match axis.unit {
        Unit::Count => whole_step(nice_step(raw)),
        Unit::Bytes => nice_step(raw / bytes_unit(raw)) * bytes_unit(raw),
        _ => nice_step(raw),
    };
    // Every tick of a bytes axis in one unit: `0.5MiB, 1MiB`, not `512KiB, 1MiB`.
    let label = |v: f64| match axis.unit {
        Unit::Bytes if v != 0.0 => bytes_in_unit(v, bytes_unit(raw)),
        unit => fmt_tick(unit, v),
    };
    let first = (mn / step).floor() * step;
    let last = (mx / step).ceil() * step;
    let n = ((last - first) / step).round() as i64;
    let ticks = (0..=n)
        .map(|i| {
            let v = first + i as f64 * step;
            (v, label(v))
        })
        .collect();
    // A fixed range is drawn as given (a run of 3.03 s ends at 3.03 s, not at 4 s);
    // otherwise the axis ends on whole ticks.
    match axis.range {
        Some(_) => (mn, mx, ticks),
        None => (first, last, ticks),
    }
}

pub(super) fn min_max(v: &[f64]) -> Option<(f64, f64)> {
    let mut it = v.iter().copied();
    let first = it.next()?;
    Some(it.fold((first, first), |(a, b), x| (a.min(x), b.max(x))))
}

/// A tick step for counted things (VUs, requests in flight): a whole number, so no tick
/// reads `0.5` or `2.5` of a user.
pub(super) fn whole_step(step: f64) -> f64 {
    if step <= 1.0 {
        1.0
    } else {
        step.floor()
    }
}

/// The binary unit a bytes axis is labelled in, from its raw tick step: ticks are nice in it
/// (2 MiB, not 2,000,000 bytes read as `1.9MiB`), and a tenth of a unit or more counts in the
/// larger one (0.5 MiB, not 500 KiB beside 1.5 MiB).
pub(super) fn bytes_unit(raw_step: f64) -> f64 {
    const K: f64 = 1024.0;
    let mut unit = 1.0;
    while raw_step >= unit * K / 10.0 && unit < K * K * K {
        unit *= K;
    }
    unit
}

pub(super) fn nice_step(raw: f64) -> f64 {
    if raw <= 0.0 || !raw.is_finite() {
        return 1.0;
    }
    let mag = 10f64.powf(raw.log10().floor());
    let norm = raw / mag;
    let f = if norm <= 1.0 {
        1.0
    } else if norm <= 2.0 {
        2.0
    } else if norm <= 2.5 {
        2.5
    } else if norm <= 5.0 {
        5.0
    } else {
        10.0
    };
    f * mag
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chart::Axis;

    fn tick_labels(unit: Unit, values: &[f64]) -> Vec<String> {
        mapping(&Axis::linear("y", unit), values, 0.0, 100.0)
            .ticks
            .into_iter()
            .map(|(_, label)| label)
            .collect()
    }

    #[test]
    fn byte_ticks_are_round_in_binary_units() {
        const MIB: f64 = 1024.0 * 1024.0;
        assert_eq!(
            tick_labels(Unit::Bytes, &[0.0, 5.6 * MIB]),
            ["0", "2MiB", "4MiB", "6MiB"]
        );
        assert_eq!(
            tick_labels(Unit::Bytes, &[0.0, 9.5 * MIB]),
            ["0", "2MiB", "4MiB", "6MiB", "8MiB", "10MiB"]
        );
        assert_eq!(
            tick_labels(Unit::Bytes, &[0.0, 2.2 * MIB]),
            ["0", "0.5MiB", "1MiB", "1.5MiB", "2MiB", "2.5MiB"]
        );
        assert_eq!(
            tick_labels(Unit::Bytes, &[0.0, 900.0 * 1024.0]),
            ["0", "0.2MiB", "0.4MiB", "0.6MiB", "0.8MiB", "1MiB"]
        );
        assert_eq!(
            tick_labels(Unit::Bytes, &[0.0, 1.2 * MIB]),
            ["0", "0.25MiB", "0.5MiB", "0.75MiB", "1MiB", "1.25MiB"]
        );
        assert_eq!(
            tick_labels(Unit::Bytes, &[0.0, 50.0 * 1024.0]),
            ["0", "10KiB", "20KiB", "30KiB", "40KiB", "50KiB"]
        );
    }
}
