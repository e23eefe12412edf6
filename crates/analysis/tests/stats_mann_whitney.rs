//! Mann–Whitney U (statistic, p-value, exact/asymptotic choice) checked against `scipy.stats.mannwhitneyu`.

mod common;

use common::{assert_close, cases, fixture, num, nums};
use loadlab_analysis::stats::{mann_whitney_u, mann_whitney_u_with, Method, MwuMethod};

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

#[test]
fn mann_whitney_rejects_bad_input() {
    assert!(mann_whitney_u(&[], &[1.0]).is_err());
    assert!(mann_whitney_u(&[1.0], &[f64::NAN]).is_err());
}
