//! Kneedle knee/elbow indices checked for exact equality against the `kneed` package (offline mode).

mod common;

use common::{cases, fixture, num, nums};
use loadlab_analysis::stats::{kneedle, Curve, Direction};

#[test]
fn kneedle_matches_kneed() {
    let fx = fixture("kneedle.json");
    for case in cases(&fx, "cases") {
        let name = case["name"].as_str().unwrap();
        let xs = nums(&case["x"]);
        let ys = nums(&case["y"]);
        let curve = match case["curve"].as_str().unwrap() {
            "concave" => Curve::Concave,
            _ => Curve::Convex,
        };
        let direction = match case["direction"].as_str().unwrap() {
            "increasing" => Direction::Increasing,
            _ => Direction::Decreasing,
        };
        let s = num(&case["sensitivity"]);
        let got = kneedle(&xs, &ys, curve, direction, s).unwrap();
        let what = format!("{name} (S = {s})");
        match (&got, case["knee"].is_null()) {
            (None, true) => {}
            (Some(k), false) => {
                let exp = &case["knee"];
                assert_eq!(k.index as u64, exp["index"].as_u64().unwrap(), "{what}");
                assert_eq!(k.x, num(&exp["x"]), "{what}: x");
                assert_eq!(k.y, num(&exp["y"]), "{what}: y");
            }
            _ => panic!("{what}: got {got:?}, expected {}", case["knee"]),
        }
    }
}

#[test]
fn kneedle_rejects_bad_input() {
    let inc = Direction::Increasing;
    assert!(kneedle(&[1.0, 2.0], &[1.0, 2.0], Curve::Concave, inc, 1.0).is_err());
    assert!(kneedle(&[1.0, 2.0, 3.0], &[1.0, 2.0], Curve::Concave, inc, 1.0).is_err());
    assert!(kneedle(&[1.0, 3.0, 2.0], &[1.0, 2.0, 3.0], Curve::Concave, inc, 1.0).is_err());
    assert!(kneedle(&[1.0, 2.0, 3.0], &[5.0, 5.0, 5.0], Curve::Concave, inc, 1.0).is_err());
    assert!(kneedle(
        &[1.0, 2.0, 3.0],
        &[1.0, 2.0, 3.0],
        Curve::Concave,
        inc,
        -1.0
    )
    .is_err());
}
