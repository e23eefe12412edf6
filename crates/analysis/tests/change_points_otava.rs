//! Change points agree with Apache Otava's `compute_change_points` on synthetic series with
//! known shifts (fixtures written by scripts/otava_reference.py): the same indices, and the
//! same t-test p-values, means, deviations and magnitudes within float tolerance.

mod common;

use common::{assert_close, cases, fixture, num, nums};
use loadlab_analysis::change_points::{detect_change_points, ChangePointParams};

#[test]
fn change_points_match_otava() {
    let fx = fixture("otava/change_points.json");
    let all = cases(&fx, "cases");
    assert!(all.len() >= 40, "fixture holds {} cases", all.len());
    for case in all {
        let params = &case["params"];
        let params = ChangePointParams {
            max_p_value: num(&params["max_p_value"]),
            window: params["window"].as_u64().unwrap() as usize,
            min_magnitude: num(&params["min_magnitude"]),
        };
        let name = format!("{} {params:?}", case["name"].as_str().unwrap());
        let found = detect_change_points(&nums(&case["values"]), &params)
            .unwrap()
            .change_points;
        let expected = case["change_points"].as_array().unwrap();
        let got: Vec<usize> = found.iter().map(|c| c.index).collect();
        let want: Vec<usize> = expected
            .iter()
            .map(|c| c["index"].as_u64().unwrap() as usize)
            .collect();
        assert_eq!(got, want, "{name}: change point indices");
        for (point, reference) in found.iter().zip(expected) {
            let what = format!("{name} at {}", point.index);
            let t = &point.test;
            // p-values below 1e-300 underflow differently; both are "certain".
            let p_ref = num(&reference["p_value"]);
            let p_tol = 1e-9 * p_ref.max(1e-300);
            assert!(
                (t.p_value - p_ref).abs() <= p_tol.max(1e-300),
                "{what}: p {} vs Otava {p_ref}",
                t.p_value
            );
            assert_close(t.mean_before, num(&reference["mean_before"]), 1e-12, &what);
            assert_close(t.mean_after, num(&reference["mean_after"]), 1e-12, &what);
            assert_close(t.std_before, num(&reference["std_before"]), 1e-10, &what);
            assert_close(t.std_after, num(&reference["std_after"]), 1e-10, &what);
            assert_close(t.magnitude(), num(&reference["magnitude"]), 1e-12, &what);
        }
    }
}
