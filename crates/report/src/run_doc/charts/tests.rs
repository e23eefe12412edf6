//! The run report's charts over time checked on hand-built results: slices and windows in
//! the captions, the tail drawn as neither latency nor throughput falling, one time axis,
//! the planned load dashed, in-flight samples, threshold lines.

use super::*;
use crate::chart::{RuleAxis, Series};
use loadlab_metrics::result::{IntervalStats, LoadInfo, ThresholdResult};

fn slice(t: f64, length_s: f64, requests: u64, active: u64) -> IntervalStats {
    IntervalStats {
        t,
        length_s,
        warmup: t < 1.0,
        requests,
        failed: 0,
        rate: requests as f64 / length_s,
        latency_ms: IntervalLatency {
            p50: 2.0,
            p95: 5.0,
            p99: 9.0,
            max: 12.0,
        },
        active,
        in_flight: active,
    }
}

/// An open-model run of 4 s at 100/s: four whole seconds, then the drain after the
/// arrivals stopped (two requests in 30 ms).
fn open_run() -> RunResult {
    RunResult {
        warmup_s: 1.0,
        duration_s: 3.0,
        load: LoadInfo {
            model: loadlab_metrics::LoadModel::Open,
            planned_duration_s: 4.0,
            planned: Some(PlannedLoad {
                vus: false,
                points: vec![(0.0, 100.0), (4.0, 100.0)],
            }),
            ..LoadInfo::default()
        },
        intervals: vec![
            slice(0.0, 1.0, 100, 1),
            slice(1.0, 1.0, 100, 0),
            slice(2.0, 1.0, 100, 2),
            slice(3.0, 1.0, 100, 1),
            slice(4.0, 0.03, 2, 0),
        ],
        thresholds: vec![ThresholdResult {
            expr: "latency.p95 < 2.8s".into(),
            actual: Some(5.0),
            ok: true,
        }],
        ..RunResult::default()
    }
}

fn series<'a>(c: &'a Chart, name: &str) -> &'a Series {
    c.series
        .iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("no series `{name}` in {}", c.id))
}

/// The caption says what a point is, from the run's own slices.
#[test]
fn the_latency_caption_names_the_slices_the_run_has() {
    let r = open_run();
    let c = latency_over_time(&r, "latency");
    assert!(
        c.description.contains("each 1s slice (drawn at its middle; the slices cut where the warm-up or the run ends are shorter)"),
        "{}",
        c.description
    );
    let mut whole = open_run();
    whole.intervals.pop();
    assert_eq!(slice_words(&whole), "each 1s slice (drawn at its middle)");
    let mut fine = open_run();
    for i in &mut fine.intervals {
        i.length_s = 0.1;
    }
    assert_eq!(slice_words(&fine), "each 100ms slice (drawn at its middle)");
}

/// A short run's slices are 100 ms; at a few requests each, the latency and rate charts
/// draw the run's windows (slices merged to hold enough requests), and say so.
#[test]
fn sparse_short_slices_are_drawn_as_their_windows() {
    let mut r = open_run();
    r.intervals = (0..20)
        .map(|k| slice(f64::from(k) / 10.0, 0.1, 3, 1))
        .collect();
    r.load.planned_duration_s = 2.0;
    let window = |t: f64, length_s: f64, requests: u64, p95: f64| WindowStats {
        t,
        length_s,
        requests,
        rate: requests as f64 / length_s,
        latency_ms: IntervalLatency {
            p95,
            ..IntervalLatency::default()
        },
        ..WindowStats::default()
    };
    r.windows = vec![
        window(0.0, 0.7, 21, 4.0),
        window(0.7, 0.7, 21, 6.0),
        window(1.4, 0.6, 18, 5.0),
    ];
    let p95 = latency_points(&r, |l| l.p95);
    assert_eq!(p95.len(), 3, "{p95:?}");
    assert!((p95[1].0 - 1.05).abs() < 1e-9 && p95[1].1 == 6.0, "{p95:?}");
    let ok = ok_rate_points(&r);
    assert!(ok.iter().all(|(_, y)| (*y - 30.0).abs() < 1e-9), "{ok:?}");
    let c = latency_over_time(&r, "latency");
    assert!(
        c.description
            .contains("each window of consecutive 100ms slices holding at least 20 requests"),
        "{}",
        c.description
    );
    // The VUs chart keeps every slice.
    assert_eq!(active_points(&r).len(), 20);
}

/// A last slice of a few requests in a millisecond: its p95 is no point of a line.
#[test]
fn the_short_tail_is_not_drawn_as_latency_falling() {
    let r = open_run();
    let p95 = latency_points(&r, |l| l.p95);
    assert_eq!(p95.len(), 4, "{p95:?}");
    assert!(p95.iter().all(|(t, _)| *t < 4.0), "{p95:?}");
}

#[test]
fn the_tail_is_not_drawn_as_throughput_falling_to_zero() {
    let r = open_run();
    let ok = ok_rate_points(&r);
    assert_eq!(
        ok.len(),
        4,
        "the drain after the arrivals stopped is left out"
    );
    assert!(ok.iter().all(|(_, y)| (*y - 100.0).abs() < 1e-9), "{ok:?}");
    // A partial slice inside the plan is a rate over its real length.
    let mut r = open_run();
    r.intervals.pop();
    r.intervals.push(slice(3.5, 0.5, 50, 0));
    r.intervals[3].length_s = 0.5;
    r.intervals[3].requests = 50;
    r.intervals[3].rate = 100.0;
    let ok = ok_rate_points(&r);
    assert_eq!(
        ok.last(),
        Some(&(3.75, 100.0)),
        "in the middle of its slice"
    );
    // A closed run that ended when its iterations were done: a 50 ms tail is too short.
    let mut r = open_run();
    r.load.model = loadlab_metrics::LoadModel::Closed;
    r.load.planned_duration_s = 600.0;
    r.intervals[4] = slice(4.0, 0.05, 1, 0);
    assert_eq!(ok_rate_points(&r).len(), 4);
    assert_eq!(failed_rate_points(&r).len(), 4);
}

#[test]
fn every_time_chart_of_a_run_shares_one_axis() {
    let r = open_run();
    let plan = r.load.planned.clone();
    let charts = [
        latency_over_time(&r, "l"),
        throughput_over_time(&r, plan.as_ref(), "t"),
        active_over_time(&r, plan.as_ref(), "a"),
    ];
    for c in &charts {
        assert_eq!(c.x.range, Some((0.0, 4.03)), "{}", c.id);
    }
    // The same x range gives the same ticks in every SVG.
    let ticks = |svg: &str| -> Vec<String> {
        svg.split("text-anchor=\"middle\" fill=\"#57606a\">")
            .skip(1)
            .map(|s| s.split('<').next().unwrap_or("").to_string())
            .collect()
    };
    let first = ticks(&crate::svg::render_svg(&charts[0]));
    assert!(first.contains(&"4s".to_string()), "{first:?}");
    for c in &charts[1..] {
        assert_eq!(ticks(&crate::svg::render_svg(c)), first, "{}", c.id);
    }
}

#[test]
fn the_planned_load_is_drawn_dashed() {
    let r = open_run();
    let t = throughput_over_time(&r, r.load.planned.as_ref(), "t");
    let planned = series(&t, "planned arrivals/s");
    assert!(planned.dashed);
    assert!(crate::svg::render_svg(&t).contains("stroke-dasharray=\"5 3\""));
    assert!(t.description.contains("dashed: the planned arrival rate"));
    // Without a plan, the caption promises no dashed line.
    let bare = throughput_over_time(&r, None, "t");
    assert!(!bare.description.contains("dashed"));
    // The closed model's planned VUs go with the active VUs.
    let mut r = open_run();
    r.load.model = loadlab_metrics::LoadModel::Closed;
    let plan = PlannedLoad {
        vus: true,
        points: vec![(0.0, 0.0), (2.0, 10.0), (4.0, 10.0)],
    };
    let a = active_over_time(&r, Some(&plan), "a");
    assert!(series(&a, "planned VUs").dashed);
    assert_eq!(series(&a, "active VUs").kind, SeriesKind::Points);
}

#[test]
fn in_flight_is_a_whole_number_sampled_at_the_end_of_each_slice() {
    let r = open_run();
    let a = active_over_time(&r, None, "a");
    let s = series(&a, "requests in flight");
    assert_eq!(
        s.kind,
        SeriesKind::Points,
        "samples are dots, not a trend line"
    );
    assert_eq!(s.points[0], (1.0, 1.0), "drawn at the end of its slice");
    let svg = crate::svg::render_svg(&a);
    for label in svg
        .split("text-anchor=\"end\" fill=\"#57606a\">")
        .skip(1)
        .map(|s| s.split('<').next().unwrap_or(""))
    {
        assert!(!label.contains('.'), "y tick `{label}` of a count");
    }
}

#[test]
fn latency_thresholds_are_read_from_the_parsed_threshold() {
    let r = open_run();
    let c = latency_over_time(&r, "l");
    assert_eq!(c.rules.len(), 1);
    assert_eq!(c.rules[0].axis, RuleAxis::Y);
    assert_eq!(c.rules[0].value, 2800.0);
}
