//! What the writer puts where: a run's intervals reach the device about once a second and at
//! its end, not once per 100 ms interval, nothing written is lost meanwhile, and each
//! interval's untagged line is the latency of all its steps.

use crate::tests::{completed as end, deltas, meta, outcomes};
use crate::{IntervalRecord, RecordSink, RecordWriter, StoredRecord};

/// A writer begun in `dir` with `intervals` one-second intervals of two steps to write; the
/// first is written.
fn begun_with(
    dir: &std::path::Path,
    seed: u64,
    intervals: u32,
) -> (RecordWriter, Vec<IntervalRecord>) {
    let written = deltas(&outcomes(seed, intervals, 40), |_| true);
    let mut w = RecordWriter::new(dir);
    w.begin(&meta(2, None, 1_800_000_000.0)).unwrap();
    w.interval(&written[0]).unwrap();
    (w, written)
}

#[test]
fn intervals_written_within_a_second_share_one_sync_and_the_end_syncs_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let (mut w, written) = begun_with(dir.path(), 3, 30);
    assert_eq!(
        w.device_syncs(),
        1,
        "the first interval goes to the device at once"
    );
    for i in &written[1..] {
        w.interval(i).unwrap();
    }
    // 30 intervals appended in far less than a second: no second sync yet...
    assert_eq!(w.device_syncs(), 1);
    // ...but every one of them is in the files already (a killed process loses nothing).
    let read = StoredRecord::open(dir.path())
        .unwrap()
        .intervals()
        .unwrap()
        .count();
    assert_eq!(read, written.len());
    std::thread::sleep(crate::writer::SYNC_EVERY);
    w.interval(&written[0]).unwrap();
    assert_eq!(
        w.device_syncs(),
        2,
        "a second later, the next interval syncs"
    );
    w.interval(&written[1]).unwrap();
    assert_eq!(w.device_syncs(), 2);
    w.end(&end(32)).unwrap();
    assert_eq!(w.device_syncs(), 3, "the end syncs what was appended since");
}

#[test]
fn an_end_with_nothing_appended_since_the_last_sync_does_not_sync_again() {
    let dir = tempfile::tempdir().unwrap();
    let (mut w, _) = begun_with(dir.path(), 4, 1);
    w.end(&end(1)).unwrap();
    assert_eq!(w.device_syncs(), 1);
}

/// The untagged line of an interval is the latency of all steps: with one step holding
/// values it is that step's line (encoded once), with several their sum.
#[test]
fn the_untagged_line_is_the_latency_of_every_step_together() {
    use crate::codec::parse_hlog_line;
    use loadlab_metrics::result::decode_histogram;
    let mut one = deltas(&outcomes(5, 2, 200), |_| true).remove(1);
    one.delta.steps[1] = Default::default();
    let mut both = deltas(&outcomes(6, 2, 200), |_| true).remove(1);
    assert!(both.delta.steps.iter().all(|s| !s.latency.is_empty()));
    for (case, r) in [("one step", &mut one), ("two steps", &mut both)] {
        let lines = crate::hlog_lines(r);
        let entries: Vec<_> = lines.lines().filter_map(parse_hlog_line).collect();
        let untagged = entries.iter().find(|e| e.tag.is_none()).expect(case);
        let all = decode_histogram(&untagged.encoded).expect(case);
        let mut sum = loadlab_metrics::LazyHistogram::new();
        for s in &r.delta.steps {
            sum.add(&s.latency);
        }
        let sum = sum.get().expect(case);
        assert_eq!(
            (all.len(), all.max(), all.value_at_quantile(0.99)),
            (sum.len(), sum.max(), sum.value_at_quantile(0.99)),
            "{case}"
        );
        let s0 = entries
            .iter()
            .find(|e| e.tag.as_deref() == Some("latency.s0"))
            .expect(case);
        assert_eq!(
            untagged.encoded == s0.encoded,
            case == "one step",
            "{case}: the untagged line repeats step 0's only when step 0 holds every value"
        );
    }
}
