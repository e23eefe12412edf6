//! Short slices: the charts' windows of enough requests, and segments cut in tenths of a
//! second merged on the same slices.

use super::*;

/// `n` requests of 5 ms in one slice of `length_s` at `start_s`.
fn slice_of(index: u32, start_s: f64, length_s: f64, warmup: bool, n: u64) -> IntervalRecord {
    let mut r = Recorder::new(1);
    for _ in 0..n {
        r.begin(0);
        r.record(&Outcome {
            step: 0,
            latency_us: 5_000,
            service_us: 5_000,
            lag_us: Some(10),
            server_us: None,
            status: 200,
            error: None,
            bytes_sent: 10,
            bytes_received: 10,
            trace_id: None,
            phases: loadlab_metrics::Phases::default(),
        });
    }
    IntervalRecord {
        index,
        start_s,
        length_s,
        warmup,
        delta: r.take_interval(1, 0.0),
        resources: Vec::new(),
    }
}

#[test]
fn short_slices_are_drawn_in_windows_of_enough_requests() {
    // A 2 s run in 100 ms slices at 30 requests/s (3 a slice), 0.5 s of warm-up: the
    // charts' windows hold at least 20 requests, never straddle the warm-up's end, and the
    // run's last window is what is left.
    let mut s = Summarizer::new(1);
    for k in 0..20u32 {
        let t = f64::from(k) / 10.0;
        s.add(&slice_of(k, t, 0.1, t < 0.45, 3));
    }
    let mut m = meta(1, None, 1_800_000_000.0);
    m.warmup_s = 0.5;
    m.slice_s = 0.1;
    let r = s.finish(&m, None);
    assert_eq!(r.intervals.len(), 20, "every slice stays in the intervals");
    let spans: Vec<(f64, f64, u64, bool)> = r
        .windows
        .iter()
        .map(|w| {
            (
                (w.t * 10.0).round() / 10.0,
                (w.length_s * 10.0).round() / 10.0,
                w.requests,
                w.warmup,
            )
        })
        .collect();
    assert_eq!(
        spans,
        vec![
            (0.0, 0.5, 15, true),
            (0.5, 0.7, 21, false),
            (1.2, 0.7, 21, false),
            (1.9, 0.1, 3, false)
        ]
    );
    assert!((r.windows[1].rate - 30.0).abs() < 1e-9);
    assert!((r.windows[1].latency_ms.p95 - 5.0).abs() < 0.01);
    // Busy slices are windows of their own; a second is the longest window.
    let mut busy = Summarizer::new(1);
    busy.add(&slice_of(0, 0.0, 0.1, false, 25));
    for k in 1..13u32 {
        busy.add(&slice_of(k, f64::from(k) / 10.0, 0.1, false, 1));
    }
    let r = busy.finish(&meta(1, None, 1_800_000_000.0), None);
    let lengths: Vec<f64> = r
        .windows
        .iter()
        .map(|w| (w.length_s * 10.0).round() / 10.0)
        .collect();
    assert_eq!(lengths, vec![0.1, 1.0, 0.2]);
}

#[test]
fn segments_cut_in_tenths_merge_on_the_same_slices() {
    // Two segments of a short run (100 ms slices); the second started 0.2 s after the first:
    // its slices shift by two, not by a rounded whole second (0 s, which put its slice k
    // beside the first's slice k, 200 ms off).
    let dirs: Vec<tempfile::TempDir> = (0..2).map(|_| tempfile::tempdir().unwrap()).collect();
    for (i, dir) in dirs.iter().enumerate() {
        let mut m = meta(
            1,
            Some(Segment {
                index: i as u32,
                count: 2,
            }),
            1_800_000_000.0 + 0.2 * i as f64,
        );
        m.slice_s = 0.1;
        m.warmup_s = 0.0;
        let slices: Vec<IntervalRecord> = (0..5u32)
            .map(|k| {
                slice_of(
                    k,
                    f64::from(k) / 10.0,
                    0.1,
                    false,
                    u64::from(k) + 1 + 10 * i as u64,
                )
            })
            .collect();
        write(dir.path(), &m, &slices, true);
    }
    let records: Vec<StoredRecord> = dirs
        .iter()
        .map(|d| StoredRecord::open(d.path()).unwrap())
        .collect();
    let merged = merge_records(&records, None).unwrap();
    let per_slice: Vec<(f64, u64)> = merged
        .intervals
        .iter()
        .map(|i| ((i.t * 10.0).round() / 10.0, i.requests))
        .collect();
    // First: 1..=5 at 0.0..0.4; second: 11..=15 at 0.2..0.6.
    assert_eq!(
        per_slice,
        vec![
            (0.0, 1),
            (0.1, 2),
            (0.2, 3 + 11),
            (0.3, 4 + 12),
            (0.4, 5 + 13),
            (0.5, 14),
            (0.6, 15)
        ]
    );
}
