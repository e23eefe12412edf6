//! One run against a study: the log-scale prediction test checked against SciPy's Student t.

mod common;

use common::{assert_close, cases, fixture, num, nums, pair};
use loadlab_analysis::stats::{detectable_change, log_prediction, rank_prediction_p};

#[test]
fn log_prediction_matches_scipy() {
    let fx = fixture("prediction.json");
    for case in cases(&fx, "cases") {
        let name = case["name"].as_str().unwrap();
        let got = log_prediction(&nums(&case["baseline"]), num(&case["run"])).unwrap();
        assert_close(got.p_value, num(&case["p"]), 1e-9, &format!("{name}: p"));
        assert_close(got.change.change, num(&case["change"]), 1e-9, name);
        let (lo, hi) = pair(&case["ci"]);
        assert_close(got.change.ci.0, lo, 1e-9, &format!("{name}: lo"));
        assert_close(got.change.ci.1, hi, 1e-9, &format!("{name}: hi"));
        // The CI excludes 0 exactly when the test rejects at 5%.
        assert_eq!(
            got.p_value < 0.05,
            got.change.ci.0 > 0.0 || got.change.ci.1 < 0.0,
            "{name}"
        );
    }
}

#[test]
fn rank_prediction_is_one_over_n_plus_one_at_best() {
    let base = [0.0; 10];
    assert_close(
        rank_prediction_p(&base, 0.01).unwrap(),
        2.0 / 11.0,
        1e-15,
        "above all",
    );
    assert_eq!(rank_prediction_p(&base, 0.0).unwrap(), 1.0);
    let base = [1.0, 2.0, 3.0, 4.0];
    assert_close(rank_prediction_p(&base, 2.5).unwrap(), 1.0, 1e-15, "middle");
}

#[test]
fn one_run_can_only_show_large_changes() {
    // 10 runs at CV 10% (log SD ≈ 0.0998), Bonferroni over 5 metrics (two-sided 1%):
    // t(0.995, 9) · 0.0998 · √1.1 = 0.340 on logs, i.e. −29% … +40%.
    let sd = (1.0f64 + 0.01).ln().sqrt();
    let (lo, hi) = detectable_change(10, sd, 0.05 / 5.0).unwrap();
    assert_close(hi, 0.405, 2e-3, "upper");
    assert_close(lo, -0.288, 2e-3, "lower");
}
