//! The remote record and barrier against a `file://` store (the same `object_store` API as
//! S3; tests/distributed.rs runs the binary against a real S3 server): a record uploaded in
//! batches downloads into the same summary as the record written locally, an unended upload
//! reads as far as its committed batches, and segments racing at the barrier agree on one start.

use loadlab_metrics::result::{LoadInfo, StopReason};
use loadlab_metrics::Segment;
use loadlab_metrics::{Environment, Outcome, Recorder, StepInfo};
use loadlab_record::{
    summarize, IntervalRecord, RecordEnd, RecordMeta, RecordSink, RecordWriter, StoredRecord,
    RECORD_SCHEMA,
};
use loadlab_remote::{download_run, Barrier, BarrierOptions, Remote, UploadSink};
use std::time::Duration;
use url::Url;

fn meta(segment: Segment) -> RecordMeta {
    RecordMeta {
        schema: RECORD_SCHEMA.into(),
        tool_version: "test".into(),
        name: "remote".into(),
        scenario_file: None,
        target: None,
        start_unix_s: 1_800_000_000.25,
        warmup_s: 0.0,
        slice_s: 1.0,
        load: LoadInfo {
            model: loadlab_metrics::LoadModel::Open,
            planned_duration_s: 6.0,
            ..LoadInfo::default()
        },
        plan_hash: "hash".into(),
        scenario: serde_json::json!({}),
        segment: Some(segment),
        steerable: false,
        steps: vec![StepInfo {
            name: "ping".into(),
            group: None,
            tags: vec![],
            checks: vec![],
        }],
        data_sets: vec![],
        thresholds: vec![],
        environment: Environment::default(),
        threads: 1,
        cores: 1,
        max_cpu_percent: 90.0,
        max_lag_ms: 10.0,
        host_timer: None,
        cpus_allowed: vec![],
        batch_window_ms: None,
        reads_at_wakeups: false,
        pid: 1,
        merged_from: None,
        clock: None,
        imported: None,
        origins: vec![],
    }
}

fn intervals(n: u32) -> Vec<IntervalRecord> {
    let mut rng = fastrand::Rng::with_seed(7);
    let mut r = Recorder::new(1);
    (0..n)
        .map(|k| {
            for _ in 0..50 {
                r.begin(0);
                r.record(&Outcome {
                    step: 0,
                    latency_us: rng.u64(100..50_000),
                    service_us: rng.u64(50..10_000),
                    lag_us: Some(rng.u64(0..500)),
                    server_us: None,
                    status: 200,
                    error: None,
                    bytes_sent: 80,
                    bytes_received: 120,
                    trace_id: None,
                    phases: Default::default(),
                });
            }
            IntervalRecord {
                index: k,
                start_s: f64::from(k),
                length_s: 1.0,
                warmup: false,
                delta: r.take_interval(1, 0.01),
                resources: vec![],
            }
        })
        .collect()
}

fn end(n: u32) -> RecordEnd {
    RecordEnd {
        stop: StopReason::Completed,
        aborted_by_threshold: None,
        signal: None,
        wall_s: f64::from(n),
        max_rss_bytes: 1,
        intervals: n,
        monitor_cpu_percent: None,
        host_timer: None,
        steering: Vec::new(),
        driven: None,
        data_use: Vec::new(),
    }
}

fn file_url(dir: &std::path::Path) -> Url {
    Url::from_directory_path(dir).unwrap()
}

#[test]
fn an_uploaded_record_downloads_into_the_same_summary() {
    let dir = tempfile::tempdir().unwrap();
    let seg = Segment { index: 0, count: 2 };
    let (m, ivs) = (meta(seg), intervals(6));
    let local = dir.path().join("local");
    let mut w = RecordWriter::new(&local).without_sync();
    w.begin(&m).unwrap();
    let run = Remote::open(&file_url(&dir.path().join("bucket"))).unwrap();
    let mut up =
        UploadSink::start(&run.at("segments/0"), Duration::from_millis(200), None).unwrap();
    let stats = up.stats_handle();
    up.begin(&m).unwrap();
    for i in &ivs {
        w.interval(i).unwrap();
        up.interval(i).unwrap();
        std::thread::sleep(Duration::from_millis(90));
    }
    w.end(&end(6)).unwrap();
    up.end(&end(6)).unwrap();
    let s = stats();
    assert_eq!(s.intervals, 6);
    assert!(s.batches >= 2 && s.batches < 6, "batched: {s:?}");
    assert_eq!(s.puts, 1 + 2 * s.batches + 1, "header, two per batch, end");

    let down = download_run(&run).unwrap();
    assert_eq!(down.count, Some(2));
    assert_eq!(down.records.len(), 1);
    let want = summarize(&StoredRecord::open(&local).unwrap()).unwrap();
    let got = summarize(&down.records[0]).unwrap();
    assert_eq!(got.to_json(), want.to_json());
}

#[test]
fn a_record_without_an_end_reads_as_far_as_its_committed_batches() {
    let dir = tempfile::tempdir().unwrap();
    let seg = Segment { index: 1, count: 2 };
    let run = Remote::open(&file_url(dir.path())).unwrap();
    let record = run.at("segments/1");
    let mut up = UploadSink::start(&record, Duration::from_secs(3600), None).unwrap();
    up.begin(&meta(seg)).unwrap();
    let ivs = intervals(3);
    // The first interval goes up at once; the rest wait for a batch that never comes.
    for i in &ivs {
        up.interval(i).unwrap();
    }
    std::thread::sleep(Duration::from_millis(300));
    // A dead pod: a batch whose histograms arrived but not its counters does not count.
    record
        .put(
            "intervals/00000001.hlog",
            b"garbage without its counters\n".to_vec(),
        )
        .unwrap();
    let down = download_run(&run).unwrap();
    let r = &down.records[0];
    assert!(r.end.is_none());
    assert_eq!(r.intervals().unwrap().count(), 1);
    let summary = summarize(r).unwrap();
    assert!(summary.interrupted);
    assert_eq!(summary.requests.total, 50);
    drop(up);
}

#[test]
fn racing_segments_agree_on_one_start() {
    let dir = tempfile::tempdir().unwrap();
    let url = file_url(dir.path());
    let options = BarrierOptions {
        timeout: Duration::from_secs(20),
        poll: Duration::from_millis(50),
        lead: Duration::from_secs(2),
        probes: 3,
    };
    let handles: Vec<_> = (0..4u32)
        .map(|i| {
            let url = url.clone();
            std::thread::spawn(move || {
                let run = Remote::open(&url).unwrap();
                let seg = Segment { index: i, count: 4 };
                Barrier::new(&run, seg, "plan", options)
                    .meet(&mut |_| {})
                    .unwrap()
            })
        })
        .collect();
    let met: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    assert!(met.iter().all(|m| m.start == met[0].start), "{met:?}");
    for m in &met {
        let c = m.clock.as_ref().expect("a clock estimate");
        assert!(
            c.offset_ms.abs() <= c.uncertainty_ms + 1.0,
            "one machine, one clock: {c:?}"
        );
    }
    // A segment of another plan on the same prefix is refused.
    let run = Remote::open(&url).unwrap();
    let e = Barrier::new(&run, Segment { index: 0, count: 4 }, "other", options)
        .meet(&mut |_| {})
        .unwrap_err();
    assert!(e.to_string().contains("another plan"), "{e}");
}

#[test]
fn a_barrier_that_times_out_names_the_missing_segments() {
    let dir = tempfile::tempdir().unwrap();
    let run = Remote::open(&file_url(dir.path())).unwrap();
    let options = BarrierOptions {
        timeout: Duration::from_millis(600),
        poll: Duration::from_millis(50),
        ..BarrierOptions::default()
    };
    let e = Barrier::new(&run, Segment { index: 1, count: 3 }, "plan", options)
        .meet(&mut |_| {})
        .unwrap_err();
    let text = e.to_string();
    assert!(
        text.contains("only 1 of 3 segments arrived within 0 s"),
        "{text}"
    );
    assert!(text.contains("missing: 0, 2"), "{text}");
    // The next one to come is told at once.
    let e = Barrier::new(&run, Segment { index: 0, count: 3 }, "plan", options)
        .meet(&mut |_| {})
        .unwrap_err();
    assert!(e.to_string().contains("failed earlier"), "{e}");
}
