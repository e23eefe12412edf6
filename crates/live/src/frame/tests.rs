use super::*;
use loadlab_metrics::{ErrorKind, IntervalDelta};

/// A plan's points, a time, the planned value there.
type PlanCase<'a> = (&'a [(f64, f64)], f64, Option<f64>);

#[test]
fn planned_value_follows_the_plan() {
    let ramp = [(0.0, 0.0), (10.0, 100.0), (20.0, 100.0)];
    let cases: &[PlanCase] = &[
        (&ramp, -1.0, Some(0.0)),
        (&ramp, 5.0, Some(50.0)),
        (&ramp, 10.0, Some(100.0)),
        (&ramp, 15.0, Some(100.0)),
        (&ramp, 99.0, Some(100.0)),
        // A step: two points at the same time.
        (
            &[(0.0, 10.0), (5.0, 10.0), (5.0, 20.0), (9.0, 20.0)],
            6.0,
            Some(20.0),
        ),
        (&[], 1.0, None),
    ];
    for (points, t, want) in cases {
        assert_eq!(planned_value(points, *t), *want, "at {t} of {points:?}");
    }
}

fn interval(index: u32, start_s: f64, latencies_ms: &[&[u64]]) -> IntervalRecord {
    let mut delta = IntervalDelta::new(latencies_ms.len());
    for (step, values) in delta.steps.iter_mut().zip(latencies_ms) {
        for ms in *values {
            step.requests += 1;
            step.latency.record(ms * 1000);
            step.service.record(ms * 1000 / 2);
            step.add_status(200, 1);
        }
    }
    IntervalRecord {
        index,
        start_s,
        length_s: 0.5,
        warmup: false,
        delta,
        resources: Vec::new(),
    }
}

/// HDR histograms keep 3 significant digits: a value reads back within 0.1%.
fn assert_close(got: f64, want: f64) {
    assert!((got - want).abs() <= want * 1e-3, "{got} is not {want}");
}

#[test]
fn a_frame_has_exact_percentiles_per_step_and_together() {
    let steps = vec![("a".to_string(), None), ("b".to_string(), Some("g".into()))];
    let plan = PlannedLoad {
        vus: false,
        points: vec![(0.0, 10.0), (2.0, 30.0)],
    };
    let mut builder = FrameBuilder::from_parts("run", steps, Some(plan), 1_000.0);
    let mut first = interval(0, 0.5, &[&[10, 20, 30, 40], &[100]]);
    first.delta.steps[1].failed = 1;
    first.delta.steps[1].errors[ErrorKind::Timeout.index()] = 1;
    let frame = builder.frame(&first);
    assert_eq!(frame.requests, 5);
    assert_eq!(frame.failed, 1);
    assert_eq!(frame.rate, 10.0);
    assert_eq!(frame.planned, Some(20.0));
    assert_eq!(frame.planned_unit.as_deref(), Some("arrivals/s"));
    assert_eq!(frame.unix_ms, 1_001_000);
    assert_close(frame.steps[0].latency_ms.p50, 20.0);
    assert_close(frame.steps[0].latency_ms.max, 40.0);
    assert_eq!(frame.steps[1].group.as_deref(), Some("g"));
    assert_eq!(frame.latency_ms.count, 5);
    assert_close(frame.latency_ms.max, 100.0);
    assert_close(frame.service_time_ms.max, 50.0);
    assert_eq!(frame.statuses.get("200"), Some(&5));
    assert_eq!(frame.errors.get("timeout"), Some(&1));
    assert_eq!(frame.steps[0].errors.len(), 0);
    let second = builder.frame(&interval(1, 1.0, &[&[5], &[]]));
    assert_eq!(second.total_requests, 6);
    assert_eq!(second.total_failed, 1);
    assert_eq!(second.lag_ms.count, 0);
    let json = serde_json::to_string(&second).unwrap();
    let back: LiveFrame = serde_json::from_str(&json).unwrap();
    assert_eq!(back, second);
}

#[test]
fn every_error_kind_reaches_the_frame_by_name() {
    // 44 kinds since streams: the last ones (grpc_*, stream_*) are named like the first.
    let steps = vec![("call".to_string(), None)];
    let mut builder = FrameBuilder::from_parts("run", steps, None, 0.0);
    let mut i = interval(0, 0.0, &[&[10]]);
    for kind in ErrorKind::ALL {
        i.delta.steps[0].errors[kind.index()] = 1 + kind.index() as u64;
    }
    let frame = builder.frame(&i);
    assert_eq!(frame.errors.len(), ErrorKind::ALL.len());
    assert_eq!(frame.errors.get("timeout"), Some(&1));
    assert_eq!(
        frame.steps[0].errors.get("grpc_unavailable"),
        Some(&(1 + ErrorKind::GrpcUnavailable.index() as u64))
    );
    assert_eq!(
        frame.errors.get("stream_truncated"),
        Some(&(ErrorKind::ALL.len() as u64))
    );
}
