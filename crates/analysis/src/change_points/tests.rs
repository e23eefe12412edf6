//! Unit checks of the split-and-merge bookkeeping; agreement with Otava itself is in
//! tests/change_points_otava.rs.

use super::*;

fn step(len: usize, at: usize, before: f64, after: f64) -> Vec<f64> {
    // A small deterministic wiggle so neither side is constant.
    (0..len)
        .map(|i| {
            let wiggle = [0.0, 0.3, -0.2, 0.1, -0.3, 0.2][i % 6];
            if i < at {
                before + wiggle
            } else {
                after + wiggle
            }
        })
        .collect()
}

#[test]
fn finds_one_step() {
    let series = step(60, 37, 10.0, 12.0);
    let found = detect_change_points(&series, &ChangePointParams::default()).unwrap();
    let indices: Vec<usize> = found.change_points.iter().map(|c| c.index).collect();
    assert_eq!(indices, vec![37]);
    let test = found.change_points[0].test;
    assert!(test.p_value < 1e-10, "{test:?}");
    assert!((test.forward_change() - 0.2).abs() < 0.01, "{test:?}");
}

#[test]
fn min_magnitude_drops_small_changes() {
    let series = step(60, 30, 10.0, 10.5);
    let params = ChangePointParams {
        min_magnitude: 0.1,
        ..ChangePointParams::default()
    };
    assert!(detect_change_points(&series, &params)
        .unwrap()
        .change_points
        .is_empty());
    assert_eq!(
        detect_change_points(&series, &ChangePointParams::default())
            .unwrap()
            .change_points
            .len(),
        1
    );
}

#[test]
fn short_and_empty_series_have_no_change_points() {
    let params = ChangePointParams::default();
    assert!(detect_change_points(&[], &params)
        .unwrap()
        .change_points
        .is_empty());
    assert!(detect_change_points(&[1.0], &params)
        .unwrap()
        .change_points
        .is_empty());
    assert!(detect_change_points(&[1.0, 5.0], &params)
        .unwrap()
        .change_points
        .is_empty());
}

#[test]
fn bad_input_is_refused() {
    let params = ChangePointParams::default();
    assert!(matches!(
        detect_change_points(&[1.0, f64::NAN], &params),
        Err(StatsError::NotFinite { index: 1, .. })
    ));
    for bad in [
        ChangePointParams {
            window: 1,
            ..params
        },
        ChangePointParams {
            max_p_value: 0.0,
            ..params
        },
        ChangePointParams {
            min_magnitude: -0.1,
            ..params
        },
    ] {
        assert!(matches!(
            detect_change_points(&[1.0, 2.0], &bad),
            Err(StatsError::InvalidArgument { .. })
        ));
    }
}

#[test]
fn bounds_skip_empty_segments() {
    assert_eq!(bounds(&[], 5), vec![(0, 5)]);
    assert_eq!(bounds(&[2, 4], 5), vec![(0, 2), (2, 4), (4, 5)]);
    assert_eq!(bounds(&[], 0), Vec::<(usize, usize)>::new());
}
