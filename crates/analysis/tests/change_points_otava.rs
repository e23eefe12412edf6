//! Change points agree with Apache Otava's `compute_change_points` on synthetic series with
//! known shifts (fixtures written by scripts/otava_reference.py): the same indices, and the
//! same t-test p-values, means, deviations and magnitudes within float tolerance.

mod common;

use common::{assert_fixture_close, cases, fixture, num, nums};
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
            let file = "otava/change_points.json";
            for (key, got) in [
                ("p_value", t.p_value),
                ("mean_before", t.mean_before),
                ("mean_after", t.mean_after),
                ("std_before", t.std_before),
                ("std_after", t.std_after),
                ("magnitude", t.magnitude()),
            ] {
                let what = format!("{what}: {key}");
                assert_fixture_close(file, key, got, num(&reference[key]), &what);
            }
        }
    }
}
