//! Honesty checks on a Universal Scalability Law fit and on knees: a fit can have R² > 0.9
//! and still predict a peak that was never observed (a sweep that simply saturates), and
//! Kneedle finds a "knee" on nearly any concave curve.

use super::{Saturation, UslIssue};
use crate::stats::{self, UslFit};

/// Largest relative gap between the fit and the measured median throughput at the smallest
/// level before λ is called off.
pub const LAMBDA_TOLERANCE: f64 = 0.10;

/// Smallest relative change of median throughput between levels that counts as a rise (or,
/// below the peak, as a retrograde fall); raised to twice the runs' typical CV when they are
/// noisier, so noise is not read as a peak.
pub const FLAT_TOP_GROWTH: f64 = 0.02;

/// The change that counts as clear when no level has two runs to tell the noise: one short
/// run's throughput moves by a few percent on a shared machine (a 1 s run of a pool saturated
/// at 400/s read 2–3 % lower at 32 VUs than at 16 in one run of three), so a dip this small
/// is not read as a retrograde region.
pub const FLAT_TOP_UNKNOWN_NOISE: f64 = 0.05;

/// Below this p, residual signs that come in too few runs are a misfit, not chance.
pub const SYSTEMATIC_RESIDUALS_P: f64 = 0.05;

/// A level of a sweep: its parameter value and the per-run throughputs.
pub(super) struct Level<'a> {
    pub value: f64,
    pub runs: &'a [f64],
}

/// The issues of a fit (N* extrapolation is judged after the bootstrap).
pub(super) fn fit_issues(fit: &UslFit, levels: &[Level<'_>]) -> Vec<UslIssue> {
    let mut issues = Vec::new();
    if stats::poor_fit(fit) {
        issues.push(UslIssue::PoorFit { r2: fit.r2 });
    }
    if let Some(first) = levels.first() {
        let measured = stats::median(first.runs);
        let predicted = fit.predict(first.value);
        if measured > 0.0 && (predicted / measured - 1.0).abs() > LAMBDA_TOLERANCE {
            issues.push(UslIssue::SmallestLevelMisfit {
                level: first.value,
                measured,
                predicted,
            });
        }
    }
    let residuals: Vec<f64> = levels
        .iter()
        .flat_map(|l| l.runs.iter().map(|x| x - fit.predict(l.value)))
        .collect();
    if let Some(test) = stats::sign_runs(&residuals) {
        if test.p_fewer < SYSTEMATIC_RESIDUALS_P {
            issues.push(UslIssue::SystematicResiduals {
                runs: test.runs,
                expected: test.expected,
                p: test.p_fewer,
            });
        }
    }
    if flat_top(levels) {
        issues.push(UslIssue::NotIdentifiable);
    }
    issues
}

/// The plateau of a sweep that saturates (see [`flat_top`]): from the first level whose
/// median is within the noise of the highest, at the median of those levels' medians.
pub(super) fn saturation(levels: &[Level<'_>]) -> Option<Saturation> {
    if !flat_top(levels) {
        return None;
    }
    let medians: Vec<f64> = levels.iter().map(|l| stats::median(l.runs)).collect();
    let peak = medians.iter().copied().fold(f64::MIN, f64::max);
    let clear = clear_change(levels);
    let first = medians.iter().position(|m| *m >= peak * (1.0 - clear))?;
    let plateau = stats::describe(&medians[first..]).ok()?.median;
    Some(Saturation {
        throughput: plateau,
        from: levels[first].value,
    })
}

/// The relative change that is clearly more than noise: [`FLAT_TOP_GROWTH`] or twice the
/// median CV of the levels' runs, whichever is larger; [`FLAT_TOP_UNKNOWN_NOISE`] with one
/// run per level.
fn clear_change(levels: &[Level<'_>]) -> f64 {
    let mut cvs: Vec<f64> = levels
        .iter()
        .filter_map(|l| stats::describe(l.runs).ok())
        .filter(|s| s.n >= 2 && s.cv.is_finite())
        .map(|s| s.cv)
        .collect();
    cvs.sort_by(f64::total_cmp);
    match cvs.get(cvs.len() / 2) {
        Some(noise) => FLAT_TOP_GROWTH.max(2.0 * noise),
        None => FLAT_TOP_UNKNOWN_NOISE,
    }
}

/// The last levels are flat without a retrograde region: the median throughput of the last
/// level is neither clearly above the level before it nor clearly below the highest median
/// ("clearly": by more than [`FLAT_TOP_GROWTH`] or twice the median CV of the levels'
/// runs, whichever is larger; [`FLAT_TOP_UNKNOWN_NOISE`] with one run per level). A peak then
/// cannot be located: the target saturated.
pub(super) fn flat_top(levels: &[Level<'_>]) -> bool {
    let medians: Vec<f64> = levels.iter().map(|l| stats::median(l.runs)).collect();
    let [.., prev, last] = medians.as_slice() else {
        return false;
    };
    let peak = medians.iter().copied().fold(f64::MIN, f64::max);
    if !(peak > 0.0 && *prev > 0.0) {
        return false;
    }
    let clear = clear_change(levels);
    let retrograde = *last < peak * (1.0 - clear);
    let growing = last / prev - 1.0 > clear;
    !retrograde && !growing
}

/// Whether the knee at `index` of a curve is real: the mean slope after it is less than half
/// the slope before it (a knee of throughput), or more than twice (an elbow of latency).
pub(super) fn real_knee(xs: &[f64], ys: &[f64], index: usize, elbow: bool) -> bool {
    let last = xs.len() - 1;
    if index == 0 || index >= last {
        return false;
    }
    let before = (ys[index] - ys[0]) / (xs[index] - xs[0]);
    let after = (ys[last] - ys[index]) / (xs[last] - xs[index]);
    if elbow {
        after > 0.0 && (before <= 0.0 || after > 2.0 * before)
    } else {
        before > 0.0 && after < 0.5 * before
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn levels<'a>(values: &[f64], runs: &'a [Vec<f64>]) -> Vec<Level<'a>> {
        values
            .iter()
            .zip(runs)
            .map(|(v, r)| Level { value: *v, runs: r })
            .collect()
    }

    #[test]
    fn flat_tops_rising_curves_and_retrograde_ones() {
        let xs = [1.0, 2.0, 4.0, 8.0, 16.0];
        let flat = vec![
            vec![100.0],
            vec![190.0],
            vec![300.0],
            vec![330.0],
            vec![332.0],
        ];
        assert!(flat_top(&levels(&xs, &flat)));
        let rising = vec![
            vec![100.0],
            vec![190.0],
            vec![300.0],
            vec![420.0],
            vec![600.0],
        ];
        assert!(!flat_top(&levels(&xs, &rising)));
        let retro = vec![
            vec![100.0],
            vec![190.0],
            vec![300.0],
            vec![330.0],
            vec![280.0],
        ];
        assert!(!flat_top(&levels(&xs, &retro)));
    }

    #[test]
    fn one_run_per_level_does_not_read_a_small_dip_as_a_peak() {
        let xs = [1.0, 2.0, 4.0, 8.0, 16.0];
        let single = |last: f64| {
            vec![
                vec![190.0],
                vec![380.0],
                vec![400.0],
                vec![402.0],
                vec![last],
            ]
        };
        // 3 % below the highest: noise for single runs, a retrograde region for quiet ones.
        assert!(flat_top(&levels(&xs, &single(390.0))));
        assert!(!flat_top(&levels(&xs, &single(370.0))), "8 % is clear");
        let quiet = |x: f64| vec![x * 0.998, x, x * 1.002];
        let repeated: Vec<Vec<f64>> = [190.0, 380.0, 400.0, 402.0, 390.0]
            .iter()
            .map(|x| quiet(*x))
            .collect();
        assert!(!flat_top(&levels(&xs, &repeated)));
    }

    #[test]
    fn knees_must_bend() {
        let xs = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
        let bent = [10.0, 20.0, 30.0, 32.0, 33.0, 34.0];
        assert!(real_knee(&xs, &bent, 2, false));
        let straight = [10.0, 20.0, 30.0, 40.0, 48.0, 57.0];
        assert!(!real_knee(&xs, &straight, 3, false));
        let hockey = [5.0, 5.5, 6.0, 6.5, 20.0, 60.0];
        assert!(real_knee(&xs, &hockey, 3, true));
        assert!(!real_knee(&xs, &hockey, 0, true));
    }
}
