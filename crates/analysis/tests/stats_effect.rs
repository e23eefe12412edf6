//! Hodges–Lehmann (Moses CI) and Welch log-ratio effect sizes checked against SciPy-based fixtures.

mod common;

use common::{assert_close, cases, fixture, num, nums, pair};
use loadlab_analysis::stats::{
    hodges_lehmann_ratio, hodges_lehmann_ratio_with, hodges_lehmann_shift, welch_log_ratio,
    MwuMethod, StatsError,
};

const TOL: f64 = 1e-9;

#[test]
fn hodges_lehmann_matches_reference() {
    let fx = fixture("hodges_lehmann.json");
    for case in cases(&fx, "cases") {
        let name = case["name"].as_str().unwrap();
        let requested = case["method"].as_str().unwrap();
        let method = match requested {
            "auto" => MwuMethod::Auto,
            "exact" => MwuMethod::Exact,
            _ => MwuMethod::Asymptotic,
        };
        let b = nums(&case["baseline"]);
        let v = nums(&case["variant"]);
        let exp = &case["expected"];
        let what = format!("{name} ({requested})");
        let got = hodges_lehmann_ratio_with(&b, &v, method);
        if exp["ci"].is_null() {
            assert!(
                matches!(got, Err(StatsError::TooSmallForInterval { .. })),
                "{what}: expected no interval, got {got:?}"
            );
            continue;
        }
        let got = got.unwrap();
        assert_close(
            got.change,
            num(&exp["change"]),
            TOL,
            &format!("{what}: change"),
        );
        let (lo, hi) = pair(&exp["ci"]);
        assert_close(got.ci.0, lo, TOL, &format!("{what}: ci lo"));
        assert_close(got.ci.1, hi, TOL, &format!("{what}: ci hi"));
        if requested == "auto" {
            assert_eq!(hodges_lehmann_ratio(&b, &v).unwrap(), got);
        }
    }
}

/// Moses' interval on raw differences with ties (quantized percentiles, error rates of 0).
#[test]
fn hodges_lehmann_shift_with_ties_matches_reference() {
    let fx = fixture("hodges_lehmann.json");
    for case in cases(&fx, "shift") {
        let name = case["name"].as_str().unwrap();
        let got = hodges_lehmann_shift(&nums(&case["baseline"]), &nums(&case["variant"])).unwrap();
        let exp = &case["expected"];
        assert_close(
            got.change,
            num(&exp["shift"]),
            TOL,
            &format!("{name}: shift"),
        );
        let (lo, hi) = pair(&exp["ci"]);
        assert_close(got.ci.0, lo, TOL, &format!("{name}: ci lo"));
        assert_close(got.ci.1, hi, TOL, &format!("{name}: ci hi"));
    }
}

#[test]
fn welch_log_ratio_matches_scipy_ttest_ind() {
    let fx = fixture("hodges_lehmann.json");
    for case in cases(&fx, "welch") {
        let name = case["name"].as_str().unwrap();
        let b = nums(&case["baseline"]);
        let v = nums(&case["variant"]);
        let exp = &case["expected"];
        let got = welch_log_ratio(&b, &v).unwrap();
        assert_close(
            got.change,
            num(&exp["change"]),
            TOL,
            &format!("{name}: change"),
        );
        let (lo, hi) = pair(&exp["ci"]);
        assert_close(got.ci.0, lo, TOL, &format!("{name}: ci lo"));
        assert_close(got.ci.1, hi, TOL, &format!("{name}: ci hi"));
    }
}

#[test]
fn seed_study_stress_is_about_four_times_slower() {
    let fx = fixture("hodges_lehmann.json");
    let case = cases(&fx, "cases")
        .iter()
        .find(|c| c["name"] == "seed_p95")
        .unwrap();
    let r = hodges_lehmann_ratio(&nums(&case["baseline"]), &nums(&case["variant"])).unwrap();
    assert!(r.change > 2.5 && r.change < 3.5, "{r:?}");
    assert!(r.ci.0 < r.change && r.change < r.ci.1);
}

#[test]
fn effect_sizes_reject_non_positive_values() {
    assert!(matches!(
        hodges_lehmann_ratio(&[1.0, 0.0], &[1.0]),
        Err(StatsError::NonPositive { index: 1, .. })
    ));
    assert!(welch_log_ratio(&[1.0, -2.0], &[1.0, 2.0]).is_err());
    assert!(matches!(
        welch_log_ratio(&[1.0], &[1.0, 2.0]),
        Err(StatsError::TooFew { needed: 2, got: 1 })
    ));
}
