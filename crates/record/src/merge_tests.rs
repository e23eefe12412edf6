//! Merges of segments: equal to the whole run, invalid with a segment missing, refused across
//! plans.

use super::*;

#[test]
fn merged_segments_equal_the_whole() {
    let stream = outcomes(4, 4, 900);
    let whole = deltas(&stream, |_| true);
    let dirs: Vec<tempfile::TempDir> = (0..3).map(|_| tempfile::tempdir().unwrap()).collect();
    for (i, dir) in dirs.iter().enumerate() {
        let part = deltas(&stream, |j| j % 3 == i);
        let seg = Segment {
            index: i as u32,
            count: 3,
        };
        let mut m = meta(2, Some(seg), 1_800_000_000.0 + i as f64 * 0.001);
        m.load.planned_arrivals = Some(1000.0 / 3.0);
        write(dir.path(), &m, &part, true);
    }
    let records: Vec<StoredRecord> = dirs
        .iter()
        .rev()
        .map(|d| StoredRecord::open(d.path()).unwrap())
        .collect();
    let out = tempfile::tempdir().unwrap();
    let mut sink = Guarded::new(Box::new(RecordWriter::new(out.path()).without_sync()));
    let merged = merge_records(&records, Some(&mut sink)).unwrap();
    assert!(sink.error().is_none());

    let mut expected = Summarizer::new(2);
    for i in &whole {
        expected.add(i);
    }
    let expected = expected.finish(&meta(2, None, 1_800_000_000.0), None);
    assert_eq!(merged.requests.total, expected.requests.total);
    assert_eq!(merged.errors, expected.errors);
    assert_eq!(
        merged.histograms, expected.histograms,
        "histograms add exactly"
    );
    for (a, b) in merged.steps.iter().zip(&expected.steps) {
        assert_eq!(a.histograms, b.histograms);
        assert_eq!(
            a.slowest, b.slowest,
            "the slowest traced requests merge exactly"
        );
        assert_eq!(a.slowest.len(), loadlab_metrics::EXEMPLARS);
        assert_eq!(a.checks, b.checks);
        assert_eq!(a.bytes, b.bytes);
        assert_eq!(
            a.ws, b.ws,
            "WebSocket counters and session durations merge exactly"
        );
    }
    let ws = merged.steps[1].ws.as_ref().expect("step 1's sessions");
    assert!(ws.messages_sent > 0 && ws.close_codes["1000"] > 0 && ws.close_codes["1006"] > 0);
    assert!(ws.session_ms.count > 0 && !merged.steps[1].histograms.session.is_empty());
    assert!(merged.steps[0].ws.is_none());
    for (a, b) in merged.steps.iter().zip(&expected.steps) {
        assert_eq!(
            a.grpc, b.grpc,
            "gRPC counters and first-message times merge exactly"
        );
    }
    let grpc = merged.steps[0].grpc.as_ref().expect("step 0's calls");
    let step0 = &expected.steps[0];
    assert_eq!(grpc.calls(), step0.requests, "a status per call");
    assert_eq!(grpc.messages_sent, step0.requests);
    assert!(grpc.status_codes["OK"] > 0 && grpc.status_codes["UNAVAILABLE"] > 0);
    assert!(grpc.messages_received > 0 && grpc.message_bytes_received > 0);
    assert!(grpc.first_message_ms.count > 0 && grpc.first_message_ms.count < grpc.calls());
    assert!(!merged.steps[0].histograms.first_message.is_empty());
    assert!(merged.steps[1].grpc.is_none());
    for (a, b) in merged.steps.iter().zip(&expected.steps) {
        assert_eq!(
            a.stream, b.stream,
            "stream counters and histograms merge exactly"
        );
    }
    let stream = merged.steps[0].stream.as_ref().expect("step 0 streamed");
    assert_eq!(stream.streams, step0.requests, "a stream per request");
    assert!(stream.output_tokens > 0 && stream.good > 0 && stream.good < stream.streams);
    assert!(stream.itl_ms.count > 0 && (stream.itl_ms.p50 - 5.0).abs() < 0.1);
    assert_eq!(
        merged.stream, expected.stream,
        "the run's streams merge exactly"
    );
    assert_eq!(merged.histograms.ttft, expected.histograms.ttft);
    assert!(merged.steps[1].stream.is_none());
    assert!(merged.steps[1].histograms.first_message.is_empty());
    assert_eq!(merged.groups, expected.groups);
    assert!(merged.phases_ms.is_some_and(|p| p.connect.is_some()));
    assert_eq!(merged.phases_ms, expected.phases_ms, "phases merge exactly");
    assert!(merged.iterations.duration_ms.is_some());
    assert_eq!(merged.iterations, expected.iterations);
    for (a, b) in merged.steps.iter().zip(&expected.steps) {
        assert_eq!(a.phases_ms, b.phases_ms);
    }
    assert_eq!(merged.segments.len(), 3);
    assert!(merged.valid, "{:?}", merged.validity);
    assert_eq!(merged.load.planned_arrivals.map(f64::round), Some(1000.0));

    // The merged record on disk summarises to the same result, and a second merge of the
    // same inputs gives the same bytes.
    let again = summarize(&StoredRecord::open(out.path()).unwrap()).unwrap();
    assert_eq!(again.histograms, merged.histograms);
    let second = merge_records(&records, None).unwrap();
    assert_eq!(second.to_json(), merged.to_json());
}

#[test]
fn a_missing_segment_makes_the_merge_invalid() {
    let stream = outcomes(5, 2, 100);
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        &meta(2, Some(Segment { index: 1, count: 2 }), 1e9),
        &deltas(&stream, |_| true),
        true,
    );
    let merged = merge_records(&[StoredRecord::open(dir.path()).unwrap()], None).unwrap();
    assert!(!merged.valid);
    let missing = merged
        .validity
        .reasons
        .iter()
        .find(|r| r.kind == loadlab_metrics::InvalidKind::SegmentMissing)
        .unwrap();
    assert!(
        missing.message.starts_with("segment 0/2 missing"),
        "{}",
        missing.message
    );
}

#[test]
fn merges_refuse_records_of_different_plans() {
    let stream = outcomes(6, 2, 10);
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    write(
        a.path(),
        &meta(2, Some(Segment { index: 0, count: 2 }), 1e9),
        &deltas(&stream, |_| true),
        true,
    );
    let mut other = meta(2, Some(Segment { index: 1, count: 2 }), 1e9);
    other.plan_hash = "def".into();
    write(b.path(), &other, &deltas(&stream, |_| true), true);
    let records = [
        StoredRecord::open(a.path()).unwrap(),
        StoredRecord::open(b.path()).unwrap(),
    ];
    assert!(matches!(
        merge_records(&records, None),
        Err(MergeError::DifferentPlans { .. })
    ));
    let whole = tempfile::tempdir().unwrap();
    write(
        whole.path(),
        &meta(2, None, 1e9),
        &deltas(&stream, |_| true),
        true,
    );
    let not_segment = [StoredRecord::open(whole.path()).unwrap()];
    assert!(matches!(
        merge_records(&not_segment, None),
        Err(MergeError::NotASegment { .. })
    ));
}
