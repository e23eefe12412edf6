//! A steered run's load as driven and its stretches of constant load: the curve its commands
//! make, the intervals each stretch holds (none in which the load changed), and a merge of
//! steered segments whose loads and counts add up exactly.

use super::*;
use loadlab_metrics::result::PlannedLoad;
use loadlab_metrics::steering::{driven_points, stretches_of, summed_points, StretchLevel};
use loadlab_metrics::{SteerAction, SteerEvent, SteerSource};

fn event(
    at_s: f64,
    action: SteerAction,
    before: f64,
    after: f64,
    over_s: Option<f64>,
) -> SteerEvent {
    SteerEvent {
        at_s,
        source: SteerSource::Api,
        action,
        before,
        after,
        over_s,
    }
}

/// A name, the commands, and the stretches they make of [`FLAT_100`].
type Case = (&'static str, Vec<SteerEvent>, Vec<(f64, f64, StretchLevel)>);

const FLAT_100: [(f64, f64); 2] = [(0.0, 100.0), (60.0, 100.0)];

#[test]
fn commands_turn_the_plan_into_the_load_as_driven() {
    use SteerAction::*;
    let steady = |level| StretchLevel::Steady { level };
    let cases: Vec<Case> = vec![
        (
            "a raise, a pause, a resume",
            vec![
                event(10.0, Rate, 100.0, 400.0, None),
                event(20.0, Pause, 400.0, 0.0, None),
                event(30.0, Resume, 0.0, 400.0, None),
            ],
            vec![
                (0.0, 10.0, steady(100.0)),
                (10.0, 20.0, steady(400.0)),
                (20.0, 30.0, StretchLevel::Paused),
                (30.0, 60.0, steady(400.0)),
            ],
        ),
        (
            "a ramp cut short by the next command",
            vec![
                event(10.0, Rate, 100.0, 200.0, Some(10.0)),
                event(15.0, Rate, 150.0, 300.0, None),
            ],
            vec![
                (0.0, 10.0, steady(100.0)),
                (
                    10.0,
                    15.0,
                    StretchLevel::Ramp {
                        from: 100.0,
                        to: 150.0,
                    },
                ),
                (15.0, 60.0, steady(300.0)),
            ],
        ),
        (
            "a ramp, then a stop",
            vec![
                event(10.0, Rate, 100.0, 200.0, Some(10.0)),
                event(40.0, Stop, 200.0, 0.0, None),
            ],
            vec![
                (0.0, 10.0, steady(100.0)),
                (
                    10.0,
                    20.0,
                    StretchLevel::Ramp {
                        from: 100.0,
                        to: 200.0,
                    },
                ),
                (20.0, 40.0, steady(200.0)),
            ],
        ),
        (
            "the same level set again is one stretch",
            vec![event(10.0, Rate, 100.0, 100.0, None)],
            vec![(0.0, 60.0, steady(100.0))],
        ),
    ];
    for (name, events, want) in cases {
        let got = stretches_of(&driven_points(&FLAT_100, &events, 60.0));
        assert_eq!(got, want, "{name}");
    }
}

#[test]
fn the_loads_of_segments_driven_at_once_add_up() {
    let a = vec![(0.0, 50.0), (10.0, 50.0), (10.0, 100.0), (20.0, 100.0)];
    let b = vec![(0.0, 50.0), (20.0, 50.0)];
    let sum = summed_points(&[a, b]);
    assert_eq!(
        stretches_of(&sum),
        vec![
            (0.0, 10.0, StretchLevel::Steady { level: 100.0 }),
            (10.0, 20.0, StretchLevel::Steady { level: 150.0 }),
        ]
    );
}

fn steerable_meta(segment: Option<Segment>, start: f64) -> RecordMeta {
    let mut m = meta(1, segment, start);
    m.steerable = true;
    m.warmup_s = 1.0;
    m.load.planned_duration_s = 10.0;
    m.load.planned = Some(PlannedLoad {
        vus: false,
        points: vec![(0.0, 100.0), (10.0, 100.0)],
    });
    m
}

/// Ten 1-second intervals (the first is warm-up) of `n(k)` requests of `latency_us(k)` each.
fn slices(n: impl Fn(u32) -> u64, latency_us: impl Fn(u32) -> u64) -> Vec<IntervalRecord> {
    (0..10)
        .map(|k| {
            let mut d = IntervalDelta::new(1);
            d.cpu_seconds = 0.01;
            for _ in 0..n(k) {
                d.steps[0].requests += 1;
                d.steps[0].add_status(200, 1);
                d.steps[0].latency.record(latency_us(k));
                d.steps[0].service.record(latency_us(k));
            }
            interval(k, d)
        })
        .collect()
}

fn steered_end(steering: Vec<SteerEvent>) -> RecordEnd {
    RecordEnd {
        stop: StopReason::Completed,
        aborted_by_threshold: None,
        signal: None,
        wall_s: 10.0,
        max_rss_bytes: 1,
        intervals: 10,
        monitor_cpu_percent: None,
        host_timer: None,
        steering,
        driven: None,
        data_use: Vec::new(),
    }
}

/// 100/s at 10 ms until a raise to 400/s at 4.5 s, then 50 ms.
fn raised_at_4_5() -> (Vec<IntervalRecord>, RecordEnd) {
    let n = |k: u32| if k < 5 { 100 } else { 400 };
    let latency = |k: u32| if k < 5 { 10_000 } else { 50_000 };
    let end = steered_end(vec![event(4.5, SteerAction::Rate, 100.0, 400.0, None)]);
    (slices(n, latency), end)
}

#[test]
fn each_stretch_holds_the_intervals_wholly_inside_it() {
    let (intervals, end) = raised_at_4_5();
    let meta = steerable_meta(None, 1e9);
    let mut s = Summarizer::for_record(&meta);
    for i in &intervals {
        s.add(i);
    }
    let r = s.finish(&meta, Some(&end));
    assert!(r.steered);
    let driven = r.load.driven.as_ref().expect("driven load");
    assert_eq!(
        driven.points,
        vec![(0.0, 100.0), (4.5, 100.0), (4.5, 400.0), (10.0, 400.0)]
    );
    let [low, high] = &r.stretches[..] else {
        panic!("two stretches: {:?}", r.stretches)
    };
    // Interval 0 is warm-up; interval 4 (4 s to 5 s) was sent at both levels.
    assert_eq!((low.measured_s, low.requests), (3.0, 300));
    assert_eq!((high.measured_s, high.requests), (5.0, 2000));
    assert_eq!(low.rate, 100.0);
    assert_eq!(high.rate, 400.0);
    assert!(
        (low.latency_ms.p99 - 10.0).abs() < 0.1,
        "{:?}",
        low.latency_ms
    );
    assert!(
        (high.latency_ms.p50 - 50.0).abs() < 0.1,
        "{:?}",
        high.latency_ms
    );
    // What no row holds is the interval of the change.
    assert_eq!(r.requests.total - low.requests - high.requests, 100);
}

#[test]
fn a_run_no_command_steered_has_no_stretches() {
    let (intervals, _) = raised_at_4_5();
    let meta = steerable_meta(None, 1e9);
    let mut s = Summarizer::for_record(&meta);
    for i in &intervals {
        s.add(i);
    }
    let r = s.finish(&meta, Some(&steered_end(Vec::new())));
    assert!(!r.steered && r.stretches.is_empty() && r.load.driven.is_none());
}

#[test]
fn a_merge_of_steered_segments_adds_their_loads_and_counts_up_exactly() {
    let (intervals, end) = raised_at_4_5();
    let dirs: Vec<tempfile::TempDir> = (0..2).map(|_| tempfile::tempdir().unwrap()).collect();
    let mut own = Vec::new();
    for (i, dir) in dirs.iter().enumerate() {
        let meta = steerable_meta(
            Some(Segment {
                index: i as u32,
                count: 2,
            }),
            1e9,
        );
        let mut w = RecordWriter::new(dir.path()).without_sync();
        w.begin(&meta).unwrap();
        for interval in &intervals {
            w.interval(interval).unwrap();
        }
        w.end(&end).unwrap();
        own.push(summarize(&StoredRecord::open(dir.path()).unwrap()).unwrap());
    }
    let records: Vec<StoredRecord> = dirs
        .iter()
        .map(|d| StoredRecord::open(d.path()).unwrap())
        .collect();
    let merged = merge_records(&records, None).unwrap();
    assert!(merged.steered);
    let levels: Vec<StretchLevel> = merged.stretches.iter().map(|s| s.level).collect();
    assert_eq!(
        levels,
        vec![
            StretchLevel::Steady { level: 200.0 },
            StretchLevel::Steady { level: 800.0 }
        ]
    );
    for (k, stretch) in merged.stretches.iter().enumerate() {
        let parts: u64 = own.iter().map(|r| r.stretches[k].requests).sum();
        assert_eq!(stretch.requests, parts);
        assert_eq!(stretch.measured_s, own[0].stretches[k].measured_s);
    }
}
