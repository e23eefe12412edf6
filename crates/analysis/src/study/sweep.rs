//! Sweeps: medians per level, the knee of throughput and the elbow of latency (only when the
//! curve bends), and the Universal Scalability Law fit with its honesty checks and a
//! bootstrap CI for N* (runs resampled within levels).

use super::usl_check::{fit_issues, real_knee, saturation, Level};
use super::{
    LoadKind, NStarInterval, SweepPoint, SweepResult, UslIssue, UslResult, UslSkipped, VariantStats,
};
use crate::stats::{self, SplitMix64, UslFit};
use loadlab_metrics::{LatencyStat, MetricId, Quantity};

/// Bootstrap resamples for the CI of N*.
pub const USL_BOOTSTRAP_REPLICATES: usize = 200;

/// Sweep analysis: `points` are (parameter value, variant) in increasing value order.
pub fn analyze_sweep(parameter: LoadKind, points: &[(f64, &VariantStats)]) -> SweepResult {
    let median =
        |v: &VariantStats, m: MetricId| v.metrics.get(&m).map(|s| s.median).unwrap_or(f64::NAN);
    let tput_id = MetricId::run(Quantity::Throughput);
    let out_points: Vec<SweepPoint> = points
        .iter()
        .map(|(value, v)| SweepPoint {
            value: *value,
            variant: v.name.clone(),
            throughput: median(v, tput_id.clone()),
            p50: median(v, MetricId::latency(LatencyStat::P50)),
            p95: median(v, MetricId::latency(LatencyStat::P95)),
            p99: median(v, MetricId::latency(LatencyStat::P99)),
            error_rate: median(v, MetricId::run(Quantity::ErrorRate)),
        })
        .collect();
    let xs: Vec<f64> = out_points.iter().map(|p| p.value).collect();
    let tput: Vec<f64> = out_points.iter().map(|p| p.throughput).collect();
    let p95: Vec<f64> = out_points.iter().map(|p| p.p95).collect();
    let knee = knee_of(&xs, &tput, false);
    let latency_knee = knee_of(&xs, &p95, true);
    let levels: Vec<Level<'_>> = points
        .iter()
        .filter_map(|(value, v)| {
            Some(Level {
                value: *value,
                runs: &v.metrics.get(&tput_id)?.values,
            })
        })
        .collect();
    let (usl, usl_skipped) = match parameter {
        LoadKind::Rate => (None, Some(UslSkipped::RateSweep)),
        LoadKind::Vus => match usl(&levels) {
            Ok(u) => (Some(u), None),
            Err(skip) => (None, Some(skip)),
        },
    };
    SweepResult {
        parameter,
        points: out_points,
        knee,
        latency_knee,
        usl,
        usl_skipped,
        saturation: saturation(&levels),
    }
}

/// Kneedle on a curve, kept only when the curve really bends there.
fn knee_of(xs: &[f64], ys: &[f64], elbow: bool) -> Option<f64> {
    if xs.len() < 3 || !ys.iter().all(|y| y.is_finite()) {
        return None;
    }
    let curve = if elbow {
        stats::Curve::Convex
    } else {
        stats::Curve::Concave
    };
    let k = stats::kneedle(xs, ys, curve, stats::Direction::Increasing, 1.0)
        .ok()
        .flatten()?;
    real_knee(xs, ys, k.index, elbow).then_some(k.x)
}

fn flatten(levels: &[Level<'_>]) -> (Vec<f64>, Vec<f64>) {
    levels
        .iter()
        .flat_map(|l| l.runs.iter().map(move |x| (l.value, *x)))
        .unzip()
}

fn usl(levels: &[Level<'_>]) -> Result<UslResult, UslSkipped> {
    let (n, x) = flatten(levels);
    if n.len() < stats::USL_MIN_POINTS || levels.len() < 3 {
        return Err(UslSkipped::TooFewRuns {
            runs: n.len(),
            needed: stats::USL_MIN_POINTS,
        });
    }
    let fit = stats::fit_usl(&n, &x).map_err(|e| UslSkipped::FitFailed {
        error: e.to_string(),
    })?;
    let mut issues = fit_issues(&fit, levels);
    let identifiable = !issues.contains(&UslIssue::NotIdentifiable);
    let (n_star, peak) = if identifiable {
        (fit.n_star, fit.peak)
    } else {
        (None, None)
    };
    let n_star_ci = n_star.map(|_| bootstrap_n_star(levels));
    let (low, high) = (levels[0].value, levels[levels.len() - 1].value);
    if let Some(ns) = n_star {
        let outside = |v: f64| v < low || v > high;
        let ci_outside = n_star_ci
            .as_ref()
            .is_some_and(|ci| outside(ci.low) || ci.high.is_none_or(outside));
        if outside(ns) || ci_outside {
            issues.push(UslIssue::Extrapolated { low, high });
        }
    }
    Ok(UslResult {
        sigma: fit.sigma,
        kappa: fit.kappa,
        lambda: fit.lambda,
        n_star,
        peak,
        n_star_ci,
        r2: fit.r2,
        poor_fit: issues.iter().any(UslIssue::is_misfit),
        issues,
    })
}

/// Percentile bootstrap of N*: each resample draws, at every level, as many runs as it has
/// with replacement, and refits. A resample without a peak (κ = 0) counts as N* = ∞.
fn bootstrap_n_star(levels: &[Level<'_>]) -> NStarInterval {
    let mut rng = SplitMix64(0x5EED_0F15_u64);
    let mut stars: Vec<f64> = Vec::with_capacity(USL_BOOTSTRAP_REPLICATES);
    for _ in 0..USL_BOOTSTRAP_REPLICATES {
        let mut n = Vec::new();
        let mut x = Vec::new();
        for l in levels {
            for _ in 0..l.runs.len() {
                n.push(l.value);
                x.push(l.runs[rng.below(l.runs.len())]);
            }
        }
        let star = stats::fit_usl(&n, &x)
            .ok()
            .and_then(|f: UslFit| f.n_star)
            .unwrap_or(f64::INFINITY);
        stars.push(star);
    }
    stars.sort_by(f64::total_cmp);
    let at = |q: f64| stars[((stars.len() - 1) as f64 * q).round() as usize];
    let high = at(0.975);
    NStarInterval {
        low: at(0.025),
        high: high.is_finite().then_some(high),
        replicates: stars.len(),
    }
}
