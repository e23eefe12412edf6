//! Student-t and normal quantiles checked against `scipy.stats.t.ppf` / `norm.ppf`.

mod common;

use common::{assert_close, cases, fixture, num};
use loadlab_analysis::stats::{normal_quantile, t_quantile, StatsError};

#[test]
fn t_quantile_matches_scipy_t_ppf() {
    let fx = fixture("t_ppf.json");
    for case in cases(&fx, "cases") {
        let (p, df, q) = (num(&case["p"]), num(&case["df"]), num(&case["q"]));
        let got = t_quantile(p, df).unwrap();
        assert_close(got, q, 1e-9, &format!("t_quantile({p}, {df})"));
    }
}

#[test]
fn normal_quantile_matches_scipy_norm_ppf() {
    let fx = fixture("t_ppf.json");
    for case in cases(&fx, "normal") {
        let (p, q) = (num(&case["p"]), num(&case["q"]));
        assert_close(normal_quantile(p).unwrap(), q, 1e-9, &format!("norm({p})"));
        assert_close(t_quantile(p, f64::INFINITY).unwrap(), q, 1e-9, "df = inf");
    }
}

#[test]
fn quantiles_reject_invalid_arguments() {
    for p in [0.0, 1.0, -0.1, 1.5, f64::NAN] {
        assert!(matches!(
            t_quantile(p, 5.0),
            Err(StatsError::InvalidArgument { .. })
        ));
        assert!(normal_quantile(p).is_err());
    }
    for df in [0.0, -1.0, f64::NAN] {
        assert!(t_quantile(0.9, df).is_err());
    }
}
