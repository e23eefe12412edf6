//! Holm–Bonferroni adjusted p-values checked against statsmodels' `multipletests(method='holm')`.

mod common;

use common::{assert_close, cases, fixture, nums};
use loadlab_analysis::stats::holm;

#[test]
fn holm_matches_statsmodels() {
    let fx = fixture("holm.json");
    for case in cases(&fx, "cases") {
        let p = nums(&case["p"]);
        let expected = nums(&case["adjusted"]);
        let got = holm(&p).unwrap();
        assert_eq!(got.len(), expected.len());
        for (g, e) in got.iter().zip(&expected) {
            assert_close(*g, *e, 1e-9, &format!("holm({p:?})"));
        }
    }
}

#[test]
fn holm_rejects_invalid_p_values() {
    assert!(holm(&[0.1, f64::NAN]).is_err());
    assert!(holm(&[1.1]).is_err());
    assert_eq!(holm(&[]).unwrap(), Vec::<f64>::new());
}
