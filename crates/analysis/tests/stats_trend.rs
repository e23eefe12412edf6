//! Drift and outlier runs: Kendall's τ against run order checked against
//! `scipy.stats.kendalltau`, Tukey's fences against `numpy.percentile`.

mod common;

use common::{assert_close, cases, fixture, num, nums, pair};
use loadlab_analysis::stats::{
    kendall_trend, tukey_fences, tukey_outliers, OutlierKind, OutlierSide, StatsError,
};

#[test]
fn kendall_trend_matches_scipy() {
    let fx = fixture("kendall.json");
    for case in cases(&fx, "cases") {
        let name = case["name"].as_str().unwrap();
        let t = kendall_trend(&nums(&case["values"])).unwrap();
        assert_close(t.tau, num(&case["tau"]), 1e-12, &format!("{name}: tau"));
        assert_close(t.p_value, num(&case["p"]), 1e-9, &format!("{name}: p"));
    }
}

#[test]
fn kendall_trend_needs_variation() {
    assert_eq!(
        kendall_trend(&[3.0, 3.0, 3.0]),
        Err(StatsError::Degenerate("all values are equal"))
    );
    // Five rising runs: exact p = 2/5! = 0.0167.
    let t = kendall_trend(&[1.0, 2.0, 3.0, 4.0, 5.0]).unwrap();
    assert_close(t.tau, 1.0, 1e-15, "tau");
    assert_close(t.p_value, 2.0 / 120.0, 1e-15, "rising 5");
}

#[test]
fn tukey_fences_match_numpy() {
    let fx = fixture("tukey.json");
    for case in cases(&fx, "cases") {
        let name = case["name"].as_str().unwrap();
        let f = tukey_fences(&nums(&case["values"])).unwrap();
        assert_close(f.q1, num(&case["q1"]), 1e-12, name);
        assert_close(f.q3, num(&case["q3"]), 1e-12, name);
        let (lo, hi) = pair(&case["inner"]);
        assert_close(f.inner.0, lo, 1e-12, name);
        assert_close(f.inner.1, hi, 1e-12, name);
        let (lo, hi) = pair(&case["outer"]);
        assert_close(f.outer.0, lo, 1e-12, name);
        assert_close(f.outer.1, hi, 1e-12, name);
    }
}

#[test]
fn outlier_runs_are_classified_not_dropped() {
    let values = [100.0, 102.0, 101.0, 99.0, 180.0, 100.5, 101.5];
    assert_eq!(
        tukey_outliers(&values),
        vec![(4, OutlierKind::Extreme, OutlierSide::High)]
    );
    let values = [50.0, 51.0, 52.0, 50.5, 51.5, 48.0];
    assert_eq!(
        tukey_outliers(&values),
        vec![(5, OutlierKind::Mild, OutlierSide::Low)]
    );
    // Nearly constant values (a fixed arrival rate): fences alone would flag 39.9 among 40s.
    assert!(tukey_outliers(&[40.0, 40.0, 39.9, 40.0, 40.0, 40.0]).is_empty());
    // One run with errors among runs without: flagged, however small.
    assert_eq!(
        tukey_outliers(&[0.0, 0.0, 0.0, 0.004, 0.0, 0.0]),
        vec![(3, OutlierKind::Extreme, OutlierSide::High)]
    );
    // Too few runs to judge.
    assert!(tukey_outliers(&[1.0, 1.0, 1.0, 9.0]).is_empty());
}
