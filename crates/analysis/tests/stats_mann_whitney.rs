//! Mann–Whitney U (statistic, p-value, exact/asymptotic choice) checked against `scipy.stats.mannwhitneyu`.

mod common;

use common::{assert_close, cases, fixture, num, nums};
use loadlab_analysis::stats::{
    mann_whitney_u, mann_whitney_u_with, rank_sum_test, Method, MwuMethod,
};

#[test]
fn mann_whitney_matches_scipy() {
    let fx = fixture("mann_whitney.json");
    let all = cases(&fx, "cases");
    assert!(all.len() > 100);
    for case in all {
        let name = case["name"].as_str().unwrap();
        let a = nums(&case["a"]);
        let b = nums(&case["b"]);
        let requested = case["method"].as_str().unwrap();
        let method = match requested {
            "auto" => MwuMethod::Auto,
            "exact" => MwuMethod::Exact,
            _ => MwuMethod::Asymptotic,
        };
        let res = mann_whitney_u_with(&a, &b, method).unwrap();
        let what = format!("{name} ({requested})");
        let used = match res.method {
            Method::Exact => "exact",
            Method::Asymptotic => "asymptotic",
            Method::Conditional => "conditional",
        };
        assert_eq!(used, case["used"].as_str().unwrap(), "{what}: method");
        assert_close(res.u, num(&case["u"]), 1e-9, &format!("{what}: U"));
        assert_close(res.p_value, num(&case["p"]), 1e-9, &format!("{what}: p"));
        if requested == "auto" {
            assert_eq!(
                mann_whitney_u(&a, &b).unwrap(),
                res,
                "{what}: default is auto"
            );
        }
    }
}

/// Exact p-values with ties, from enumerating every split of the pooled values
/// (`scripts/stats_reference.py`, cross-checked there with `scipy.stats.permutation_test`).
#[test]
fn exact_p_with_ties_matches_enumeration() {
    let fx = fixture("mann_whitney_ties.json");
    let all = cases(&fx, "cases");
    assert!(all.len() >= 20);
    for case in all {
        let name = case["name"].as_str().unwrap();
        let a = nums(&case["a"]);
        let b = nums(&case["b"]);
        let res = rank_sum_test(&a, &b).unwrap();
        assert_eq!(res.method, Method::Conditional, "{name}");
        assert_close(res.p_value, num(&case["p"]), 1e-9, name);
        let forced = mann_whitney_u_with(&a, &b, MwuMethod::Conditional).unwrap();
        assert_eq!(forced, res, "{name}");
    }
    // Beyond 25 runs per side with ties: the tie-corrected normal approximation.
    for case in cases(&fx, "asymptotic") {
        let res = rank_sum_test(&nums(&case["a"]), &nums(&case["b"])).unwrap();
        assert_eq!(res.method, Method::Asymptotic);
        assert_close(res.p_value, num(&case["p"]), 1e-9, "quantized_30x30");
    }
}

/// The two cases of the issue: SciPy's `auto` switches to the normal approximation on a
/// single tie and gets them wrong in both directions.
#[test]
fn ties_no_longer_switch_to_the_normal_approximation() {
    let fx = fixture("mann_whitney_ties.json");
    let case = |name: &str| {
        cases(&fx, "cases")
            .iter()
            .find(|c| c["name"] == name)
            .unwrap()
            .clone()
    };
    // 5 vs 5, complete separation, one tie: exact 2/252 = 0.0079, SciPy 0.0119.
    let c = case("separated_5x5_one_tie");
    let p = rank_sum_test(&nums(&c["a"]), &nums(&c["b"]))
        .unwrap()
        .p_value;
    assert_close(p, 2.0 / 252.0, 1e-12, "5x5");
    assert_close(
        num(&c["p_scipy_auto"]),
        0.011_925_233_593_017_6,
        1e-12,
        "5x5 SciPy",
    );
    // 6 vs 7, heavy ties: exact 0.068 (not significant), SciPy 0.040 ("slower").
    let c = case("heavy_ties_6x7");
    let p = rank_sum_test(&nums(&c["a"]), &nums(&c["b"]))
        .unwrap()
        .p_value;
    assert!(p > 0.05 && num(&c["p_scipy_auto"]) < 0.05, "{p}");
}

#[test]
fn mann_whitney_rejects_bad_input() {
    assert!(mann_whitney_u(&[], &[1.0]).is_err());
    assert!(mann_whitney_u(&[1.0], &[f64::NAN]).is_err());
}
