//! USL fits checked against `scipy.optimize.curve_fit` with σ, κ ≥ 0 bounds (relative 1e-6,
//! the rule for usl.json in tests/fixtures/tolerances.json).

mod common;

use common::{assert_fixture_close, cases, fixture, num, nums};
use loadlab_analysis::stats::{fit_usl, poor_fit, StatsError};

/// Parameters agree to 1e-6 relative, or 1e-12 absolute for a parameter at its bound 0.
fn assert_param(got: f64, expected: f64, what: &str) {
    let key = what.rsplit(": ").next().unwrap_or(what);
    assert_fixture_close("usl.json", key, got, expected, what);
}

#[test]
fn usl_fit_matches_scipy_curve_fit() {
    let fx = fixture("usl.json");
    for case in cases(&fx, "cases") {
        let name = case["name"].as_str().unwrap();
        let exp = &case["expected"];
        let fit = fit_usl(&nums(&case["n"]), &nums(&case["x"])).unwrap();
        assert_param(fit.sigma, num(&exp["sigma"]), &format!("{name}: sigma"));
        assert_param(fit.kappa, num(&exp["kappa"]), &format!("{name}: kappa"));
        assert_param(fit.lambda, num(&exp["lambda"]), &format!("{name}: lambda"));
        assert_fixture_close(
            "usl.json",
            "r2",
            fit.r2,
            num(&exp["r2"]),
            &format!("{name}: r2"),
        );
        // Our optimum is never worse than SciPy's.
        let (ns, xs) = (nums(&case["n"]), nums(&case["x"]));
        let sse: f64 = ns
            .iter()
            .zip(&xs)
            .map(|(n, x)| (fit.predict(*n) - x).powi(2))
            .sum();
        let ref_sse = num(&exp["sse"]);
        assert!(
            sse <= ref_sse * (1.0 + 1e-12) + 1e-12,
            "{name}: sse {sse} > {ref_sse}"
        );
        match (fit.n_star, exp["n_star"].as_f64()) {
            (Some(g), Some(e)) => assert_param(g, e, &format!("{name}: n_star")),
            (None, None) => {}
            (g, e) => panic!("{name}: n_star {g:?} vs {e:?}"),
        }
        match (fit.peak, exp["peak"].as_f64()) {
            (Some(g), Some(e)) => assert_param(g, e, &format!("{name}: peak")),
            (None, None) => {}
            (g, e) => panic!("{name}: peak {g:?} vs {e:?}"),
        }
        assert_eq!(poor_fit(&fit), num(&exp["r2"]) < 0.9, "{name}: poor_fit");
        assert!(fit.sigma >= 0.0 && fit.kappa >= 0.0);
    }
}

#[test]
fn usl_needs_six_points_and_valid_values() {
    let n = [1.0, 2.0, 4.0, 8.0, 16.0];
    let x = [100.0, 190.0, 350.0, 600.0, 800.0];
    assert!(matches!(
        fit_usl(&n, &x),
        Err(StatsError::TooFew { needed: 6, got: 5 })
    ));
    let n6 = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0];
    assert!(fit_usl(&n6, &[100.0, 190.0, 350.0, f64::NAN, 800.0, 900.0]).is_err());
    assert!(fit_usl(&n6, &[100.0, 190.0, 350.0, -1.0, 800.0, 900.0]).is_err());
    assert!(fit_usl(&[1.0, 1.0, 1.0, 2.0, 2.0, 2.0], &[1.0; 6]).is_err());
    assert!(fit_usl(&n6, &[1.0; 5]).is_err());
}
