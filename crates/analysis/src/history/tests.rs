//! Series are split by plan, indexed per series, and a step is reported with its verdict.

use super::*;
use loadlab_metrics::{LatencyStat, Quantity};

fn point(i: usize, plan: &str, p95: f64, rate: Option<f64>) -> HistoryPoint {
    let mut values = BTreeMap::new();
    values.insert(
        MetricId::latency(LatencyStat::P95),
        PointValue {
            value: p95,
            ci: None,
        },
    );
    if let Some(rate) = rate {
        values.insert(
            MetricId::run(Quantity::Throughput),
            PointValue {
                value: rate,
                ci: None,
            },
        );
    }
    HistoryPoint {
        id: format!("r{i:02}"),
        kind: PointKind::Run,
        started_at: format!("2026-11-{:02}T00:00:00Z", i + 1),
        labels: BTreeMap::from([("commit".to_string(), format!("c{i:02}"))]),
        plan: Some(plan.to_string()),
        values,
    }
}

fn wiggle(i: usize) -> f64 {
    [0.0, 0.2, -0.1, 0.15, -0.2, 0.05, -0.05][i % 7]
}

#[test]
fn a_regression_at_point_20_is_found_with_its_commit() {
    let points: Vec<HistoryPoint> = (0..30)
        .map(|i| {
            let level = if i < 20 { 10.0 } else { 11.0 };
            point(i, "a", level + wiggle(i), Some(100.0 + wiggle(i)))
        })
        .collect();
    let metrics = [
        MetricId::latency(LatencyStat::P95),
        MetricId::run(Quantity::Throughput),
    ];
    let h = build_history(
        "shop",
        PointKind::Run,
        &points,
        &metrics,
        &ChangePointParams::default(),
    )
    .unwrap();
    assert_eq!(h.series.len(), 2);
    assert_eq!(h.change_points.len(), 1, "{:?}", h.change_points);
    let cp = &h.change_points[0];
    assert_eq!((cp.index, cp.run_id.as_str()), (20, "r20"));
    assert_eq!(cp.labels["commit"], "c20");
    assert_eq!(cp.before_labels["commit"], "c19");
    assert_eq!(cp.verdict, Verdict::Slower);
    let [lo, hi] = cp.change_ci.unwrap();
    assert!(
        lo > 0.05 && hi < 0.15 && (cp.change - 0.1).abs() < 0.03,
        "{cp:?}"
    );
}

#[test]
fn plans_make_separate_series_indexed_from_zero() {
    let mut points: Vec<HistoryPoint> = (0..4).map(|i| point(i, "a", 10.0, None)).collect();
    points.extend((4..7).map(|i| point(i, "b", 50.0, Some(1.0))));
    let metrics = [
        MetricId::latency(LatencyStat::P95),
        MetricId::run(Quantity::Throughput),
    ];
    let h = build_history(
        "shop",
        PointKind::Run,
        &points,
        &metrics,
        &ChangePointParams::default(),
    )
    .unwrap();
    // Plan a has no throughput: three series, not four.
    assert_eq!(h.series.len(), 3);
    let b = h
        .series
        .iter()
        .find(|s| s.plan.as_deref() == Some("b") && s.metric.is_latency())
        .unwrap();
    assert_eq!(
        b.points.iter().map(|p| p.index).collect::<Vec<_>>(),
        vec![0, 1, 2]
    );
    assert!(
        h.change_points.is_empty(),
        "a new plan is not a change point"
    );
}

#[test]
fn the_stable_segment_starts_at_the_last_change_before_the_newest_point() {
    let step: Vec<f64> = (0..30)
        .map(|i| if i < 12 { 10.0 } else { 11.0 } + wiggle(i))
        .collect();
    let flat: Vec<f64> = (0..30).map(|i| 100.0 + wiggle(i)).collect();
    let params = ChangePointParams::default();
    assert_eq!(
        stable_segment_start(std::slice::from_ref(&flat), &params).unwrap(),
        0
    );
    assert_eq!(
        stable_segment_start(&[flat, step.clone()], &params).unwrap(),
        12
    );
    // The newest point is not part of the history it is compared with: a jump there is no
    // change point of the baseline.
    let mut jump = step;
    *jump.last_mut().unwrap() = 50.0;
    assert_eq!(stable_segment_start(&[jump], &params).unwrap(), 12);
    assert_eq!(stable_segment_start(&[vec![]], &params).unwrap(), 0);
}
