//! Round trips through the files, cut-off records, and exact merges of segments.

use super::*;
use loadlab_metrics::result::{LoadInfo, StopReason};
use loadlab_metrics::Segment;
use loadlab_metrics::{
    Environment, ErrorKind, IntervalDelta, Outcome, Recorder, StepDelta, StepInfo,
};

pub(crate) fn meta(steps: usize, segment: Option<Segment>, start: f64) -> RecordMeta {
    RecordMeta {
        schema: RECORD_SCHEMA.into(),
        tool_version: "test".into(),
        name: "t".into(),
        scenario_file: None,
        // Not this machine: `shares_host_with_target` has tests of its own.
        target: Some("http://192.0.2.1:1".into()),
        start_unix_s: start,
        warmup_s: 1.0,
        slice_s: 1.0,
        load: LoadInfo {
            model: loadlab_metrics::LoadModel::Open,
            planned_duration_s: 4.0,
            planned_arrivals: Some(1000.0),
            ..LoadInfo::default()
        },
        plan_hash: "abc".into(),
        scenario: serde_json::json!({}),
        segment,
        steerable: false,
        origins: vec![OriginInfo {
            url: "http://127.0.0.1:1".into(),
            version: "2".into(),
            shared_connections: Some(2),
            negotiated: Some(loadlab_metrics::Protocol::H2c),
        }],
        steps: (0..steps)
            .map(|i| StepInfo {
                name: format!("step {i}"),
                group: Some(if i == 0 { "auth" } else { "api" }.into()),
                tags: vec!["tier=gold".into()],
                checks: vec!["status == 200".into()],
            })
            .collect(),
        data_sets: vec![],
        thresholds: vec![],
        environment: Environment::default(),
        threads: 1,
        cores: 2,
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
    }
}

/// A deterministic stream of outcomes: interval `k` of `intervals`, `n` per interval.
pub(crate) fn outcomes(seed: u64, intervals: u32, n: u64) -> Vec<Vec<Outcome>> {
    let mut rng = fastrand::Rng::with_seed(seed);
    (0..intervals)
        .map(|_| {
            (0..n)
                .map(|_| {
                    let status = if rng.u8(..) < 20 { 503 } else { 200 };
                    Outcome {
                        step: rng.u16(0..2),
                        // Sent on time: latency is service time and a little lag.
                        latency_us: 0,
                        service_us: rng.u64(50..2_000_000),
                        lag_us: Some(rng.u64(0..300)),
                        server_us: rng.bool().then(|| rng.u64(10..5000)),
                        status,
                        error: ErrorKind::from_status(status),
                        bytes_sent: 80,
                        bytes_received: rng.u64(100..300),
                        trace_id: rng.bool().then(|| rng.u128(1..)),
                        phases: loadlab_metrics::Phases {
                            connect_us: (rng.u8(..) < 10).then(|| rng.u64(30..400)),
                            tls_us: (rng.u8(..) < 5).then(|| rng.u64(300..3000)),
                            waiting_us: Some(rng.u64(40..90_000)),
                            receiving_us: Some(rng.u64(1..900)),
                        },
                    }
                })
                .map(|mut o| {
                    o.latency_us = o.service_us + o.lag_us.unwrap_or(0);
                    o
                })
                .collect()
        })
        .collect()
}

fn interval(index: u32, delta: IntervalDelta) -> IntervalRecord {
    IntervalRecord {
        index,
        start_s: f64::from(index),
        length_s: 1.0,
        warmup: index == 0,
        delta,
        resources: Vec::new(),
    }
}

/// Records `stream` into intervals; outcome `j` goes to this writer when `owns(j)`.
pub(crate) fn deltas(stream: &[Vec<Outcome>], owns: impl Fn(usize) -> bool) -> Vec<IntervalRecord> {
    let mut r = Recorder::new(2);
    let mut j = 0;
    stream
        .iter()
        .enumerate()
        .map(|(k, outs)| {
            for o in outs {
                if owns(j) {
                    r.begin(o.step);
                    r.record(o);
                    if o.error.is_some() {
                        r.record_check_failure(o.step, 0);
                        r.note_error(ErrorKind::Http5xx, || "503 from the test".into());
                        // Connections and stream waits add like every other counter.
                        r.delayed_by_stream_limit();
                        let protocol = loadlab_metrics::Protocol::ALL[o.step as usize];
                        r.connections_opened(o.step, protocol, 1);
                    }
                    if o.step == 1 {
                        // Step 1 is also a WebSocket session: its counters and durations.
                        let mut ws = loadlab_metrics::WsCounts {
                            messages_sent: o.service_us % 7,
                            messages_received: o.service_us % 11,
                            bytes_sent: o.service_us % 700,
                            bytes_received: o.service_us % 1100,
                            ..Default::default()
                        };
                        ws.add_ending(if o.error.is_some() { 1006 } else { 1000 }, 1);
                        r.record_ws(1, &ws, Some(o.service_us / 2 + 1));
                    } else {
                        // Step 0 is also a gRPC call (a server stream every third one).
                        let grpc = loadlab_metrics::GrpcCounts {
                            messages_sent: 1,
                            messages_received: o.service_us % 5,
                            bytes_sent: o.service_us % 300,
                            bytes_received: o.service_us % 500,
                            ..Default::default()
                        };
                        let code = if o.error.is_some() {
                            loadlab_metrics::GrpcCode::Unavailable
                        } else {
                            loadlab_metrics::GrpcCode::Ok
                        };
                        let first = (o.service_us % 3 == 0).then_some(o.service_us / 3 + 1);
                        r.record_grpc(0, &grpc, Some(code), first);
                        // And a streamed response (tokens every 5 ms after the first).
                        let tokens = o.service_us % 6;
                        let gaps: Vec<u64> = (1..tokens).map(|i| 5_000 + i).collect();
                        r.record_stream(
                            0,
                            &loadlab_metrics::StreamSample {
                                ttft_us: (tokens > 0).then_some(o.service_us / 4 + 1),
                                itl_us: &gaps,
                                tpot_us: (tokens > 1).then_some(5_000),
                                e2e_us: Some(o.service_us),
                                events: tokens + 1,
                                input_tokens: 3,
                                output_tokens: tokens,
                                good: o.error.is_none() && tokens > 2,
                            },
                        );
                    }
                    r.record_scheduler_lag(o.lag_us.unwrap_or(0));
                    r.iteration_completed(o.latency_us + 250);
                }
                j += 1;
            }
            interval(k as u32, r.take_interval(3, 0.01))
        })
        .collect()
}

fn write(dir: &std::path::Path, meta: &RecordMeta, intervals: &[IntervalRecord], end: bool) {
    let mut w = RecordWriter::new(dir).without_sync();
    w.begin(meta).unwrap();
    for i in intervals {
        w.interval(i).unwrap();
    }
    if end {
        w.end(&completed(intervals.len() as u32)).unwrap();
    }
}

/// The end of a run of `intervals` one-second intervals that completed.
pub(crate) fn completed(intervals: u32) -> RecordEnd {
    RecordEnd {
        stop: StopReason::Completed,
        aborted_by_threshold: None,
        signal: None,
        wall_s: f64::from(intervals),
        max_rss_bytes: 1,
        intervals,
        monitor_cpu_percent: None,
        host_timer: None,
        steering: Vec::new(),
        driven: None,
        data_use: Vec::new(),
    }
}

/// A delta with its histograms as their encodings (a decoded histogram keeps its values
/// exactly, but not the raw max it was recorded with).
fn comparable(d: &IntervalDelta) -> String {
    let enc = |h: &loadlab_metrics::LazyHistogram| {
        h.get()
            .map(loadlab_metrics::result::encode_histogram)
            .unwrap_or_default()
    };
    let mut out = format!(
        "sched {}\nstream waits {} connections {:?}\niterations {} {} vus {}\n",
        enc(&d.scheduler_lag),
        d.delayed_by_stream_limit,
        d.connections,
        d.iterations_completed,
        enc(&d.iteration_duration),
        d.active_max
    );
    for s in &d.steps {
        let mut exemplars = s.exemplars.clone();
        exemplars.at(0);
        let counters = StepDelta {
            latency: Default::default(),
            service: Default::default(),
            lag: Default::default(),
            server: Default::default(),
            exemplars: Default::default(),
            phases: Default::default(),
            session: Default::default(),
            first_message: Default::default(),
            stream_series: Default::default(),
            ..s.clone()
        };
        let exemplars: Vec<(u64, u128)> = exemplars
            .iter()
            .map(|e| (e.latency_us, e.trace_id))
            .collect();
        out += &format!("{exemplars:?}\n");
        out += &format!(
            "{counters:?} {} {} {} {} {} {}\n",
            enc(&s.latency),
            enc(&s.service),
            enc(&s.lag),
            enc(&s.server),
            enc(&s.session),
            enc(&s.first_message)
        );
        for t in loadlab_metrics::StreamTime::ALL {
            out += &format!("{} {}\n", t.as_str(), enc(s.stream_series.get(t)));
        }
        out += &format!("events {}\n", enc(&s.stream_series.events));
        for phase in loadlab_metrics::Phase::ALL {
            out += &format!("{} {}\n", phase.as_str(), enc(s.phases.get(phase)));
        }
    }
    out
}

#[test]
fn intervals_round_trip_through_the_files() {
    let dir = tempfile::tempdir().unwrap();
    let written = deltas(&outcomes(1, 4, 500), |_| true);
    write(dir.path(), &meta(2, None, 1_800_000_000.25), &written, true);
    let record = StoredRecord::open(dir.path()).unwrap();
    assert!(record.end.is_some());
    let read: Vec<IntervalRecord> = record.intervals().unwrap().collect();
    assert_eq!(read.len(), written.len());
    for (a, b) in read.iter().zip(&written) {
        let mut b = b.clone();
        // Examples are written once per kind; the first interval holds it.
        if a.index > 0 {
            b.delta.error_examples.clear();
        }
        assert_eq!(
            comparable(&a.delta),
            comparable(&b.delta),
            "interval {}",
            a.index
        );
        assert_eq!(
            (a.start_s, a.length_s, a.warmup),
            (b.start_s, b.length_s, b.warmup)
        );
        assert_eq!(a.delta.active, 3);
    }
}

#[test]
fn the_interval_log_is_readable_by_hdrhistogram() {
    use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        &meta(2, None, 1_800_000_000.0),
        &deltas(&outcomes(2, 3, 200), |_| true),
        true,
    );
    let bytes = std::fs::read(dir.path().join(HLOG_FILE)).unwrap();
    let mut histograms = 0;
    let mut tags = std::collections::BTreeSet::new();
    for entry in IntervalLogIterator::new(&bytes) {
        match entry.expect("a valid interval log") {
            LogEntry::Interval(h) => {
                histograms += 1;
                if let Some(t) = h.tag() {
                    tags.insert(t.as_str().to_string());
                }
                assert!(loadlab_metrics::result::decode_histogram(h.encoded_histogram()).is_some());
            }
            LogEntry::StartTime(t) | LogEntry::BaseTime(t) => {
                assert_eq!(t.as_secs(), 1_800_000_000)
            }
        }
    }
    assert!(histograms > 10);
    for t in [
        "latency.s0",
        "service_time.s1",
        "lag.s0",
        "server_latency.s1",
        "connect.s0",
        "tls_handshake.s1",
        "waiting.s0",
        "receiving.s1",
        "iteration_duration",
        "scheduler_lag",
    ] {
        assert!(tags.contains(t), "missing tag {t}: {tags:?}");
    }
}

#[test]
fn a_record_cut_off_mid_line_keeps_every_complete_interval() {
    let dir = tempfile::tempdir().unwrap();
    let written = deltas(&outcomes(3, 5, 100), |_| true);
    write(
        dir.path(),
        &meta(2, None, 1_800_000_000.0),
        &written[..3],
        false,
    );
    // The process died while writing interval 3: half a histogram line, no counters line.
    use std::io::Write;
    let mut hlog = std::fs::OpenOptions::new()
        .append(true)
        .open(dir.path().join(HLOG_FILE))
        .unwrap();
    hlog.write_all(&hlog_lines(&written[3]).as_bytes()[..40])
        .unwrap();
    let mut counters = std::fs::OpenOptions::new()
        .append(true)
        .open(dir.path().join(COUNTERS_FILE))
        .unwrap();
    counters.write_all(b"{\"i\":3,\"t\":3.0,\"len").unwrap();
    let record = StoredRecord::open(dir.path()).unwrap();
    assert!(record.end.is_none());
    let result = summarize(&record).unwrap();
    assert!(result.interrupted);
    assert_eq!(result.stop, StopReason::Crashed);
    assert!(result
        .validity
        .has(loadlab_metrics::InvalidKind::Interrupted));
    let expected: u64 = written[1..3].iter().map(|i| i.delta.requests()).sum();
    assert_eq!(
        result.requests.total, expected,
        "warm-up interval 0 excluded, 1 and 2 kept"
    );
    assert_eq!(result.requests.warmup, written[0].delta.requests());
}

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
fn records_written_before_the_phases_still_read() {
    let dir = tempfile::tempdir().unwrap();
    let written = deltas(&outcomes(7, 3, 200), |_| true);
    write(dir.path(), &meta(2, None, 1e9), &written, true);
    let now = summarize(&StoredRecord::open(dir.path()).unwrap()).unwrap();
    assert!(now.phases_ms.is_some() && now.iterations.duration_ms.is_some());
    // What an older loadlab wrote: no phase or iteration series.
    let hlog = dir.path().join(HLOG_FILE);
    let old: String = std::fs::read_to_string(&hlog)
        .unwrap()
        .lines()
        .filter(|l| {
            ![
                "Tag=connect",
                "Tag=tls_",
                "Tag=waiting",
                "Tag=receiving",
                "Tag=iteration",
            ]
            .iter()
            .any(|t| l.starts_with(t))
        })
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(&hlog, old).unwrap();
    let before = summarize(&StoredRecord::open(dir.path()).unwrap()).unwrap();
    assert_eq!(before.phases_ms, None);
    assert_eq!(before.iterations.duration_ms, None);
    assert!(before.steps.iter().all(|s| s.phases_ms.is_none()));
    assert_eq!(before.latency_ms, now.latency_ms);
    assert_eq!(before.requests, now.requests);
    // A newer loadlab's unknown series are skipped, not misread.
    let mut newer = std::fs::read_to_string(&hlog).unwrap();
    let line = newer
        .lines()
        .find(|l| l.starts_with("Tag=latency.s0"))
        .unwrap();
    newer.push_str(&line.replace("Tag=latency.s0", "Tag=sending.s0"));
    newer.push('\n');
    std::fs::write(&hlog, newer).unwrap();
    let read = summarize(&StoredRecord::open(dir.path()).unwrap()).unwrap();
    assert_eq!(read.latency_ms, now.latency_ms);
}

#[test]
fn vus_max_is_the_peak_of_the_closed_model() {
    let mut m = meta(1, None, 1e9);
    m.load.model = loadlab_metrics::LoadModel::Closed;
    let mut s = Summarizer::new(1);
    for (k, (active, peak)) in [(2, 2), (5, 9), (4, 5), (0, 4)].into_iter().enumerate() {
        let mut d = IntervalDelta::new(1);
        d.active = active;
        d.active_max = peak;
        s.add(&interval(k as u32, d));
    }
    assert_eq!(s.finish(&m, None).vus_max, Some(9));
    m.load.model = loadlab_metrics::LoadModel::Open;
    assert_eq!(s.finish(&m, None).vus_max, None, "closed model only");
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

#[test]
fn generator_health_and_delivery_come_from_the_intervals() {
    let mut s = Summarizer::new(1);
    for k in 0..4 {
        let mut d = IntervalDelta::new(1);
        d.cpu_seconds = 0.95;
        d.iterations_dropped = if k == 3 { 100 } else { 0 };
        s.add(&interval(k, d));
    }
    let end = RecordEnd {
        stop: StopReason::Completed,
        aborted_by_threshold: None,
        signal: None,
        wall_s: 4.0,
        max_rss_bytes: 0,
        intervals: 4,
        monitor_cpu_percent: None,
        host_timer: None,
        steering: Vec::new(),
        driven: None,
        data_use: Vec::new(),
    };
    let r = s.finish(&meta(1, None, 1e9), Some(&end));
    assert!(r
        .validity
        .has(loadlab_metrics::InvalidKind::GeneratorSaturated));
    assert!(!r.interrupted);
    assert_eq!(
        r.verdicts.len(),
        1,
        "100 of 1000 arrivals dropped: the target was overloaded"
    );
    assert_eq!(
        r.verdicts[0].kind,
        loadlab_metrics::TargetVerdictKind::TargetOverloaded
    );
}

#[path = "resource_tests.rs"]
mod resource_tests;

#[path = "grpc_tests.rs"]
mod grpc_tests;

#[path = "send_delay_tests.rs"]
mod send_delay_tests;

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

#[path = "stretch_tests.rs"]
mod stretch_tests;
