//! Sweeps read honestly: a target that saturates gets no N*, a retrograde one gets N* with a
//! bootstrap CI, a curve still rising has no knee and an extrapolated N*.

use loadlab_analysis::study::{analyze_sweep, metric_stats, LoadKind, UslIssue, VariantStats};
use loadlab_metrics::{MetricId, Quantity};
use std::collections::BTreeMap;

/// A variant whose runs had these throughputs.
fn level(vus: f64, throughputs: &[f64]) -> VariantStats {
    let mut metrics = BTreeMap::new();
    metrics.insert(
        MetricId::run(Quantity::Throughput),
        metric_stats(throughputs).unwrap(),
    );
    VariantStats {
        name: format!("vus={vus}"),
        runs: (0..throughputs.len())
            .map(|i| format!("r{vus}-{i}"))
            .collect(),
        excluded_runs: vec![],
        unstable: false,
        thresholds_failed: 0,
        load: None,
        metrics,
        drift: vec![],
    }
}

/// Three runs per level around `f(n)` (±1%, deterministic).
fn sweep(levels: &[f64], f: impl Fn(f64) -> f64) -> Vec<VariantStats> {
    levels
        .iter()
        .map(|&n| {
            let x = f(n);
            level(n, &[x * 0.99, x, x * 1.01])
        })
        .collect()
}

fn analyze(vs: &[VariantStats]) -> loadlab_analysis::study::SweepResult {
    let points: Vec<(f64, &VariantStats)> = vs
        .iter()
        .map(|v| (v.name[4..].parse().unwrap(), v))
        .collect();
    analyze_sweep(LoadKind::Vus, &points)
}

#[test]
fn a_saturating_target_gets_no_n_star() {
    // A pool of 8 workers at 100 req/s each: linear to 8 VUs, then flat at 800 req/s.
    let vs = sweep(&[1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0], |n| {
        100.0 * n.min(8.0)
    });
    let s = analyze(&vs);
    let u = s.usl.expect("a fit is made");
    assert!(u.issues.contains(&UslIssue::NotIdentifiable), "{u:?}");
    assert_eq!((u.n_star, u.peak, &u.n_star_ci), (None, None, &None));
    assert!(!u.reliable());
    // The knee is real here: linear, then flat.
    assert_eq!(s.knee, Some(8.0));
}

#[test]
fn lambda_far_from_the_first_level_is_flagged() {
    // A pool of 20 workers swept from 1 to 60 VUs: the USL fits with R² ≈ 0.98 but puts λ
    // 27% above the measured X(1) and a peak at N* ≈ 37 that was never observed.
    let vs = sweep(&[1.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0], |n| {
        40.0 * n.min(20.0)
    });
    let u = analyze(&vs).usl.unwrap();
    assert!(u.r2 > 0.9, "{u:?}");
    assert!(
        u.issues
            .iter()
            .any(|i| matches!(i, UslIssue::SmallestLevelMisfit { .. })),
        "{u:?}"
    );
    assert!(u.issues.contains(&UslIssue::NotIdentifiable), "{u:?}");
    assert!(
        u.poor_fit,
        "λ 27% off the measured X(1) is a poor fit whatever R² says"
    );
}

#[test]
fn a_hard_saturation_is_a_poor_fit_and_the_plateau_is_named() {
    // Flat at ~930 req/s from 4 to 16 VUs, 233 req/s at 1 VU: the fit gave λ = 284 (22% off),
    // R² = 0.95 and `poor_fit: false`.
    let vs = sweep(&[1.0, 2.0, 4.0, 8.0, 12.0, 16.0], |n| match n as u32 {
        1 => 233.0,
        2 => 466.0,
        _ => 930.0,
    });
    let s = analyze(&vs);
    let u = s.usl.as_ref().unwrap();
    assert!(u.r2 > 0.9, "{u:?}");
    assert!(u.poor_fit, "{u:?}");
    assert!(!u.reliable());
    assert_eq!(u.n_star, None);
    let plateau = s.saturation.expect("the sweep saturates");
    assert_eq!(plateau.from, 4.0);
    assert!((plateau.throughput - 930.0).abs() < 1.0, "{plateau:?}");
}

#[test]
fn residuals_with_a_shape_of_their_own_are_a_misfit() {
    // A curve with a step in the middle: the best USL lies above the points, then below,
    // then above again, while R² stays high.
    let vs = sweep(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0], |n| {
        100.0 * n + if (3.0..=6.0).contains(&n) { 60.0 } else { 0.0 }
    });
    let u = analyze(&vs).usl.unwrap();
    assert!(u.r2 > 0.9, "{u:?}");
    assert!(
        u.issues
            .iter()
            .any(|i| matches!(i, UslIssue::SystematicResiduals { .. })),
        "{u:?}"
    );
    assert!(u.poor_fit);
}

#[test]
fn a_model_that_fits_is_not_flagged_for_its_noise() {
    let usl = |n: f64| 100.0 * n / (1.0 + 0.03 * (n - 1.0) + 0.001 * n * (n - 1.0));
    let vs: Vec<VariantStats> = [1.0, 4.0, 8.0, 16.0, 24.0, 32.0, 48.0, 64.0]
        .iter()
        .enumerate()
        .map(|(i, &n)| {
            let x = usl(n);
            // Noise whose sign does not follow the levels.
            let e = [0.012, -0.007, 0.004, -0.011, 0.009, -0.003, 0.006, -0.010][i];
            level(n, &[x * (1.0 + e), x * (1.0 - e), x * (1.0 + e / 2.0)])
        })
        .collect();
    let u = analyze(&vs).usl.unwrap();
    assert!(!u.poor_fit && u.reliable(), "{u:?}");
}

#[test]
fn a_retrograde_sweep_gets_n_star_with_a_bootstrap_ci() {
    let (sigma, kappa, lambda) = (0.05, 0.002, 100.0);
    let usl = |n: f64| lambda * n / (1.0 + sigma * (n - 1.0) + kappa * n * (n - 1.0));
    let vs = sweep(&[1.0, 4.0, 8.0, 16.0, 24.0, 32.0, 48.0, 64.0], usl);
    let s = analyze(&vs);
    let u = s.usl.unwrap();
    let expected = ((1.0 - sigma) / kappa).sqrt(); // 21.8
    let n_star = u.n_star.expect("N* is identifiable");
    assert!((n_star - expected).abs() < 1.0, "{u:?}");
    let ci = u.n_star_ci.as_ref().unwrap();
    assert!(ci.low <= n_star && ci.high.unwrap() >= n_star, "{ci:?}");
    assert!(ci.high.unwrap() - ci.low < 10.0, "{ci:?}");
    assert!(u.issues.is_empty() && u.reliable(), "{u:?}");
}

#[test]
fn a_curve_still_rising_has_no_knee_and_an_extrapolated_peak() {
    let usl = |n: f64| 100.0 * n / (1.0 + 0.01 * (n - 1.0) + 0.0001 * n * (n - 1.0));
    let vs = sweep(&[1.0, 2.0, 4.0, 6.0, 8.0, 10.0, 12.0], usl);
    let s = analyze(&vs);
    assert_eq!(s.knee, None, "{s:?}");
    let u = s.usl.unwrap();
    assert!(u.n_star.unwrap() > 12.0);
    assert!(
        u.issues.contains(&UslIssue::Extrapolated {
            low: 1.0,
            high: 12.0
        }),
        "{u:?}"
    );
}

#[test]
fn rate_sweeps_and_small_sweeps_say_why_there_is_no_fit() {
    let vs = sweep(&[1.0, 2.0, 4.0], |n| 100.0 * n);
    let points: Vec<(f64, &VariantStats)> = vs.iter().map(|v| (1.0, v)).collect();
    let s = analyze_sweep(LoadKind::Rate, &points);
    assert!(s.usl.is_none() && s.usl_skipped.is_some());
    let few = vec![
        level(1.0, &[100.0]),
        level(2.0, &[200.0]),
        level(4.0, &[400.0]),
    ];
    let s = analyze(&few);
    assert!(matches!(
        s.usl_skipped,
        Some(loadlab_analysis::study::UslSkipped::TooFewRuns { runs: 3, needed: 6 })
    ));
}
