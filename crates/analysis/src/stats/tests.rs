//! Hand-computed table tests for the stats module (independent of the SciPy fixtures).

use super::*;

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * b.abs().max(1.0)
}

#[test]
fn describe_table() {
    // (values, mean, sd, median)
    let table: &[(&[f64], f64, f64, f64)] = &[
        (&[5.0], 5.0, 0.0, 5.0),
        (&[1.0, 3.0], 2.0, std::f64::consts::SQRT_2, 2.0),
        (
            &[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0],
            5.0,
            2.138089935299395,
            4.5,
        ),
        (&[3.0, 1.0, 2.0], 2.0, 1.0, 2.0),
    ];
    for (values, mean, sd, median) in table {
        let s = describe(values).unwrap();
        assert!(close(s.mean, *mean, 1e-12), "{values:?}");
        assert!(close(s.sd, *sd, 1e-12), "{values:?}");
        assert_eq!(s.median, *median, "{values:?}");
    }
    // n = 1: degenerate CI, cv 0, no median CI.
    let one = describe(&[7.0]).unwrap();
    assert_eq!(
        (one.mean_ci, one.cv, one.median_ci),
        ((7.0, 7.0), 0.0, None)
    );
    // n = 2: t(0.975, 1) = 12.706204736174707; mean 2, sd √2 → half = 12.7062 · √2/√2.
    let two = describe(&[1.0, 3.0]).unwrap();
    assert!(close(two.mean_ci.1 - 2.0, 12.706204736174707, 1e-12));
}

#[test]
fn median_ci_table() {
    // n = 6: P(Bin ≤ 0) = 1/64, 2/64 ≤ .05 → k = 1, coverage 1 − 1/32.
    assert_eq!(median_ci_rank(5), None);
    assert_eq!(median_ci_rank(6), Some(1));
    assert_eq!(median_ci_coverage(6), Some(1.0 - 1.0 / 32.0));
    // n = 10: 2·P(Bin ≤ 1) = 22/1024 = 0.0215 ≤ .05, 2·P(Bin ≤ 2) = 112/1024 > .05 → k = 2.
    assert_eq!(median_ci_rank(10), Some(2));
    assert!(close(
        median_ci_coverage(10).unwrap(),
        1.0 - 22.0 / 1024.0,
        1e-15
    ));
    let ci = median_ci(&[10.0, 1.0, 9.0, 2.0, 8.0, 3.0, 7.0, 4.0, 6.0, 5.0]).unwrap();
    assert_eq!(ci, Some((2.0, 9.0)));
}

#[test]
fn mann_whitney_table() {
    // Completely separated 3 vs 4: U_a = 0, exact p = 2 / C(7,3) = 2/35.
    let r = mann_whitney_u(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0, 7.0]).unwrap();
    assert_eq!((r.u, r.method), (0.0, Method::Exact));
    assert!(close(r.p_value, 2.0 / 35.0, 1e-15));
    // Interleaved 1,3,5,7 vs 2,4,6,8: ranks of a = 1+3+5+7 = 16, U = 16 − 10 = 6;
    // P(U ≤ 6) for 4×4 = 19/70 (counts 1,1,2,3,5,5,7 → 24/70?) — check symmetric p = 2·P(U ≤ 6).
    let r = mann_whitney_u(&[1.0, 3.0, 5.0, 7.0], &[2.0, 4.0, 6.0, 8.0]).unwrap();
    assert_eq!(r.u, 6.0);
    // Partitions of u into ≤ 4 parts each ≤ 4: u = 0..6 → 1,1,2,3,5,5,7 = 24 of 70.
    assert!(close(r.p_value, 2.0 * 24.0 / 70.0, 1e-15));
    // All tied: asymptotic, p = 1.
    let r = mann_whitney_u(&[2.0, 2.0], &[2.0, 2.0, 2.0]).unwrap();
    assert_eq!((r.u, r.p_value, r.method), (3.0, 1.0, Method::Asymptotic));
}

#[test]
fn holm_table() {
    // sorted .005,.01,.03,.04 × 4,3,2,1 = .02,.03,.06,.04 → running max .02,.03,.06,.06
    let adj = holm(&[0.01, 0.04, 0.03, 0.005]).unwrap();
    let expected = [0.03, 0.06, 0.06, 0.02];
    for (a, e) in adj.iter().zip(expected) {
        assert!(close(*a, e, 1e-15), "{adj:?}");
    }
    assert_eq!(holm(&[0.6, 0.9]).unwrap(), vec![1.0, 1.0]);
}

#[test]
fn ratio_table() {
    // Every variant exactly twice its baseline → HL and Welch both give +100%.
    let b = [100.0, 120.0, 140.0, 160.0, 180.0];
    let v: Vec<f64> = b.iter().map(|x| 2.0 * x).collect();
    let w = welch_log_ratio(&b, &v).unwrap();
    assert!(close(w.change, 1.0, 1e-12));
    let hl = hodges_lehmann_ratio(&b, &b.map(|x| x * 2.0)).unwrap();
    assert!(close(hl.change, 1.0, 1e-12));
    assert!(hl.ci.0 < 1.0 && hl.ci.1 > 1.0);
    // Zero spread: Welch CI collapses.
    let flat = welch_log_ratio(&[10.0, 10.0], &[15.0, 15.0]).unwrap();
    assert!(close(flat.change, 0.5, 1e-12) && flat.ci.0 == flat.ci.1);
    // 3×3 cannot reach 95% (min two-sided level 2/20 = 10%).
    assert_eq!(
        hodges_lehmann_ratio(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]),
        Err(StatsError::TooSmallForInterval { m: 3, n: 3 })
    );
    // Seed study: 2.14× load → 3.99× latency.
    assert!(close(
        degradation_factor(100.0, 399.0).unwrap(),
        3.99,
        1e-15
    ));
    assert!(degradation_factor(0.0, 1.0).is_err());
    assert!(degradation_factor(f64::NAN, 1.0).is_err());
}

#[test]
fn kneedle_table() {
    // y rises steeply then flattens at x = 3.
    let xs = [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0];
    let ys = [0.0, 4.0, 7.0, 9.0, 9.5, 9.8, 9.9, 10.0, 10.0];
    let knee = kneedle(&xs, &ys, Curve::Concave, Direction::Increasing, 1.0)
        .unwrap()
        .unwrap();
    assert_eq!(knee.index, 3);
    assert_eq!((knee.x, knee.y), (3.0, 9.0));
    // A straight line has no knee.
    let line: Vec<f64> = xs.iter().map(|x| 2.0 * x + 1.0).collect();
    assert_eq!(
        kneedle(&xs, &line, Curve::Concave, Direction::Increasing, 1.0).unwrap(),
        None
    );
}

#[test]
fn usl_table() {
    // Exact USL data: the fit recovers σ, κ, λ and N* = √((1 − σ)/κ).
    let (sigma, kappa, lambda) = (0.1, 0.001, 50.0);
    let n = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0];
    let x: Vec<f64> = n
        .iter()
        .map(|n| lambda * n / (1.0 + sigma * (n - 1.0) + kappa * n * (n - 1.0)))
        .collect();
    let fit = fit_usl(&n, &x).unwrap();
    assert!(close(fit.sigma, sigma, 1e-8), "{fit:?}");
    assert!(close(fit.kappa, kappa, 1e-8), "{fit:?}");
    assert!(close(fit.lambda, lambda, 1e-8), "{fit:?}");
    assert!(close(fit.n_star.unwrap(), (0.9f64 / 0.001).sqrt(), 1e-8));
    assert!(close(fit.r2, 1.0, 1e-12) && !poor_fit(&fit));
    assert!(close(fit.predict(1.0), lambda, 1e-8));
    // Linear scaling: σ = κ = 0 at the bounds, no peak.
    let lin: Vec<f64> = n.iter().map(|n| 10.0 * n).collect();
    let fit = fit_usl(&n, &lin).unwrap();
    assert_eq!((fit.kappa, fit.n_star, fit.peak), (0.0, None, None));
    assert!(close(fit.lambda, 10.0, 1e-10));
}

#[test]
fn errors_table() {
    assert_eq!(describe(&[]), Err(StatsError::Empty));
    assert!(matches!(
        describe(&[1.0, f64::NAN]),
        Err(StatsError::NotFinite { index: 1, .. })
    ));
    assert!(matches!(
        describe(&[1.0, f64::INFINITY]),
        Err(StatsError::NotFinite { index: 1, .. })
    ));
    assert!(mean_ci(&[]).is_err());
    assert!(median_ci(&[f64::NAN]).is_err());
}
