//! `describe`, mean/median CIs and binomial median-CI ranks checked against SciPy fixtures.

mod common;

use common::{assert_close, cases, fixture, num, nums, pair};
use loadlab_analysis::stats::{describe, median_ci_coverage, median_ci_rank, unstable, Summary};

const TOL: f64 = 1e-9;

#[test]
fn describe_matches_scipy() {
    let fx = fixture("describe.json");
    for case in cases(&fx, "cases") {
        let name = case["name"].as_str().unwrap();
        let values = nums(&case["values"]);
        let exp = &case["expected"];
        let s = describe(&values).unwrap();
        assert_eq!(s.n, exp["n"].as_u64().unwrap() as usize, "{name}: n");
        assert_eq!(s.values, values, "{name}: values copied");
        for (field, got) in [
            ("mean", s.mean),
            ("sd", s.sd),
            ("cv", s.cv),
            ("median", s.median),
            ("min", s.min),
            ("max", s.max),
        ] {
            assert_close(got, num(&exp[field]), TOL, &format!("{name}: {field}"));
        }
        let (lo, hi) = pair(&exp["mean_ci"]);
        assert_close(s.mean_ci.0, lo, TOL, &format!("{name}: mean_ci lo"));
        assert_close(s.mean_ci.1, hi, TOL, &format!("{name}: mean_ci hi"));
        match (s.median_ci, exp["median_ci"].is_null()) {
            (None, true) => {}
            (Some((l, h)), false) => {
                let (lo, hi) = pair(&exp["median_ci"]);
                assert_eq!((l, h), (lo, hi), "{name}: median_ci");
            }
            (got, _) => panic!("{name}: median_ci {got:?} vs {}", exp["median_ci"]),
        }
    }
}

#[test]
fn median_ci_rank_and_coverage_match_scipy_binom() {
    let fx = fixture("median_ci.json");
    for case in cases(&fx, "cases") {
        let n = case["n"].as_u64().unwrap() as usize;
        let k = case["k"].as_u64().map(|k| k as usize);
        assert_eq!(median_ci_rank(n), k, "n = {n}");
        match median_ci_coverage(n) {
            None => assert!(case["coverage"].is_null(), "n = {n}"),
            Some(c) => {
                let expected = num(&case["coverage"]);
                assert_close(c, expected, TOL, &format!("coverage n = {n}"));
                assert!(c >= 0.95, "coverage below 95% for n = {n}");
            }
        }
    }
}

#[test]
fn seed_study_baseline_is_unstable_and_stress_is_not() {
    let fx = fixture("describe.json");
    let find = |name: &str| {
        let case = cases(&fx, "cases")
            .iter()
            .find(|c| c["name"] == name)
            .unwrap();
        describe(&nums(&case["values"])).unwrap()
    };
    let baseline = find("seed_baseline_p95");
    let stress = find("seed_stress_p95");
    // cv = 91.17 / 610.89 ≈ 0.149 ≥ 0.10; stress cv ≈ 0.067.
    assert!(unstable(&baseline));
    assert!(!unstable(&stress));
    assert_close(baseline.mean, 610.894, 1e-12, "seed mean");
}

#[test]
fn summary_round_trips_through_json_with_median_ci_as_array_or_null() {
    let s = describe(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap();
    let json = serde_json::to_value(&s).unwrap();
    assert_eq!(json["median_ci"], serde_json::json!([1.0, 6.0]));
    let back: Summary = serde_json::from_value(json).unwrap();
    assert_eq!(back, s);
    let small = describe(&[1.0, 2.0]).unwrap();
    assert!(serde_json::to_value(&small).unwrap()["median_ci"].is_null());
}
