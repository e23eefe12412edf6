//! The plan's arithmetic checked on small loads: VU ramps and jumps, arrival times of
//! constant, ramping and Poisson rates, and segments that partition the arrivals.

use super::*;
use crate::model::VuStage;

fn secs(s: f64) -> Duration {
    Duration::from_secs_f64(s)
}

fn closed(start: u32, stages: &[(f64, u32)]) -> ClosedLoad {
    ClosedLoad {
        start_vus: start,
        stages: stages
            .iter()
            .map(|&(d, vus)| VuStage {
                duration: secs(d),
                vus,
            })
            .collect(),
        iterations_per_vu: None,
        shared_iterations: None,
        max_duration: secs(600.0),
        pace: None,
    }
}

#[test]
fn ramping_vus_table() {
    // seed 000 baseline: 30s 0→10, 8m30s 10→35, 30s 35→0
    let plan = closed(0, &[(30.0, 10), (510.0, 35), (30.0, 0)]);
    let table = [
        (0.0, 0),
        (2.99, 0),
        (3.0, 1),
        (15.0, 5),
        (29.999, 9),
        (30.0, 10),
        (30.0 + 510.0 / 25.0, 11),
        (539.99, 34),
        (540.0, 35),
        (540.0 + 30.0 / 35.0 * 0.5, 35),
        (555.0, 18),
        (569.99, 1),
        (570.0, 0),
        (1000.0, 0),
    ];
    for (t, want) in table {
        assert_eq!(plan.vus_at(secs(t)), want, "t={t}");
    }
    assert_eq!(plan.max_vus(), 35);
    assert_eq!(plan.duration(), secs(570.0));
}

#[test]
fn zero_length_stage_jumps() {
    // seed 000 stress: 30s 0→25, 0s jump to 75, 6m30s hold, 30s 75→0
    let plan = closed(0, &[(30.0, 25), (0.0, 75), (390.0, 75), (30.0, 0)]);
    assert_eq!(plan.vus_at(secs(29.9)), 24);
    assert_eq!(plan.vus_at(secs(30.0)), 75);
    assert_eq!(plan.vus_at(secs(200.0)), 75);
}

#[test]
fn constant_vus_start_immediately() {
    let plan = closed(10, &[(5.0, 10)]);
    assert_eq!(plan.vus_at(Duration::ZERO), 10);
    assert_eq!(plan.vus_at(secs(4.999)), 10);
    assert_eq!(plan.vus_at(secs(5.0)), 0);
}

#[test]
fn next_change_follows_the_ramp() {
    let plan = closed(0, &[(10.0, 10), (5.0, 10)]);
    let mut t = Duration::ZERO;
    let mut seen = vec![];
    while let Some(next) = plan.next_change_after(t) {
        seen.push((next.as_secs_f64() * 1000.0).round() as u64);
        t = next;
    }
    assert_eq!(
        seen,
        vec![1000, 2000, 3000, 4000, 5000, 6000, 7000, 8000, 9000, 10000, 15000]
    );
}

fn open(stages: &[(f64, f64, Option<f64>)]) -> OpenLoad {
    OpenLoad {
        stages: stages
            .iter()
            .map(|&(d, rate, ramp_to)| RateStage {
                duration: secs(d),
                rate,
                ramp_to,
            })
            .collect(),
        poisson: false,
        max_in_flight: 100,
        max_in_flight_given: true,
        max_arrivals: None,
        batch_window: OpenLoad::DEFAULT_BATCH_WINDOW,
    }
}

#[test]
fn constant_rate_arrivals() {
    let plan = open(&[(2.0, 10.0, None)]);
    let times: Vec<f64> = plan
        .arrivals(Segment::WHOLE, 1)
        .map(|d| d.as_secs_f64())
        .collect();
    assert_eq!(times.len(), 20);
    for (n, t) in times.iter().enumerate() {
        assert!((t - n as f64 * 0.1).abs() < 1e-9, "arrival {n} at {t}");
    }
}

#[test]
fn ramping_rate_arrivals() {
    // 0 → 10/s over 10s: Λ(t) = t²/2, so arrival n at √(2n).
    let plan = open(&[(10.0, 0.0, Some(10.0)), (1.0, 10.0, None)]);
    assert!((plan.expected_arrivals() - 60.0).abs() < 1e-9);
    for (n, want) in [
        (0u64, 0.0),
        (2, 2.0),
        (8, 4.0),
        (18, 6.0),
        (49, 9.899_494_936_611_665),
        (50, 10.0),
        (55, 10.5),
    ] {
        let t = plan.time_of(n as f64).unwrap().as_secs_f64();
        assert!((t - want).abs() < 1e-6, "n={n}: {t} vs {want}");
    }
    assert_eq!(plan.time_of(60.0), None);
    assert!((plan.rate_at(secs(5.0)) - 5.0).abs() < 1e-9);
}

#[test]
fn segments_partition_the_arrivals() {
    let plan = open(&[(1.0, 100.0, None), (1.0, 100.0, Some(300.0))]);
    let mut all: Vec<Duration> = plan.arrivals(Segment::WHOLE, 7).collect();
    let mut parts: Vec<Duration> = (0..3)
        .flat_map(|i| {
            plan.arrivals(Segment { index: i, count: 3 }, 7)
                .collect::<Vec<_>>()
        })
        .collect();
    all.sort();
    parts.sort();
    assert_eq!(all, parts);
    assert_eq!(all.len(), 300);
}

#[test]
fn max_arrivals_caps_every_segment() {
    let mut plan = open(&[(10.0, 100.0, None)]);
    plan.max_arrivals = Some(10);
    let total: usize = (0..4)
        .map(|i| plan.arrivals(Segment { index: i, count: 4 }, 1).count())
        .sum();
    assert_eq!(total, 10);
}

#[test]
fn remaining_arrivals_are_computed_not_counted() {
    let mut plan = open(&[(1.0, 100.0, None), (2.0, 100.0, Some(300.0))]);
    for max in [None, Some(250)] {
        plan.max_arrivals = max;
        for count in [1u32, 3, 4] {
            for index in 0..count {
                let segment = Segment { index, count };
                let mut it = plan.arrivals(segment, 1);
                for taken in 0..200 {
                    let left = it.remaining();
                    let rest = plan.arrivals(segment, 1).skip(taken).count() as u64;
                    assert_eq!(left, rest, "max {max:?} segment {segment:?} after {taken}");
                    if it.next().is_none() {
                        break;
                    }
                }
            }
        }
    }
    // 10¹² arrivals left: answered at once.
    let huge = open(&[(10_000.0, 1e8, None)]);
    assert_eq!(
        huge.arrivals(Segment::WHOLE, 1).remaining(),
        1_000_000_000_000
    );
    let mut poisson = open(&[(100.0, 50.0, None)]);
    poisson.poisson = true;
    let it = poisson.arrivals(Segment { index: 0, count: 2 }, 3);
    assert_eq!(it.remaining(), 2500);
}

#[test]
fn poisson_arrivals_have_the_planned_mean() {
    let mut plan = open(&[(100.0, 50.0, None)]);
    plan.poisson = true;
    let n: usize = (0..2)
        .map(|i| plan.arrivals(Segment { index: i, count: 2 }, 42).count())
        .sum();
    // 5000 expected; sd ≈ 71
    assert!((4700..5300).contains(&n), "{n}");
}

#[test]
fn split_segments_partition_like_the_whole() {
    let plan = open(&[(1.0, 300.0, None)]);
    let mut all: Vec<Duration> = plan.arrivals(Segment::WHOLE, 7).collect();
    let mut parts: Vec<Duration> = Vec::new();
    for i in 0..3 {
        let process = Segment { index: i, count: 3 };
        for t in 0..2 {
            parts.extend(plan.arrivals(process.split(t, 2), 7));
        }
    }
    all.sort();
    parts.sort();
    assert_eq!(all, parts);
    for total in [0u64, 1, 5, 66_668] {
        let sum: u64 = (0..4)
            .flat_map(|i| (0..3).map(move |t| Segment { index: i, count: 4 }.split(t, 3)))
            .map(|s| s.share(total))
            .sum();
        assert_eq!(sum, total);
    }
}
