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
fn generator_health_and_delivery_come_from_the_intervals() {
    let mut s = Summarizer::new(1);
    for k in 0..4 {
        let mut d = IntervalDelta::new(1);
        d.cpu_seconds = 0.95;
        d.iterations_dropped = if k == 3 { 100 } else { 0 };
        s.add(&interval(k, d));
    }
    let r = s.finish(&meta(1, None, 1e9), Some(&completed(4)));
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

#[test]
fn a_run_whose_warmup_took_every_request_measured_nothing_and_is_invalid() {
    use loadlab_metrics::InvalidKind::NothingMeasured;
    let mut m = meta(2, None, 1e9);
    m.load.model = loadlab_metrics::LoadModel::Closed;
    m.load.planned_arrivals = None;
    let busy = deltas(&outcomes(5, 1, 40), |_| true).remove(0);
    let quiet = |k| interval(k, IntervalDelta::new(2));
    // An `iterations:` load that ended inside its 1 s warm-up (interval 0).
    let mut s = Summarizer::new(2);
    for record in [busy.clone(), quiet(1), quiet(2)] {
        s.add(&record);
    }
    let r = s.finish(&m, Some(&completed(3)));
    assert_eq!((r.requests.total, r.requests.warmup), (0, 40));
    assert!(!r.valid, "{:?}", r.validity);
    let reason = &r.validity.reasons[0];
    assert_eq!(reason.kind, NothingMeasured);
    assert!(
        reason.message.contains("within the 1 s warm-up") && reason.message.contains("40 request"),
        "{}",
        reason.message
    );
    // The same load measured after the warm-up is not flagged; nor is a run cut short (it is
    // `interrupted`, which says more).
    let mut measured = busy.clone();
    measured.index = 1;
    measured.warmup = false;
    let mut s = Summarizer::new(2);
    for record in [busy, measured, quiet(2)] {
        s.add(&record);
    }
    assert!(!s
        .finish(&m, Some(&completed(3)))
        .validity
        .has(NothingMeasured));
    let mut s = Summarizer::new(2);
    s.add(&quiet(0));
    assert!(!s.finish(&m, None).validity.has(NothingMeasured));
}

#[path = "merge_tests.rs"]
mod merge_tests;

#[path = "resource_tests.rs"]
mod resource_tests;
#[path = "slice_tests.rs"]
mod slice_tests;

#[path = "grpc_tests.rs"]
mod grpc_tests;

#[path = "send_delay_tests.rs"]
mod send_delay_tests;

#[path = "stretch_tests.rs"]
mod stretch_tests;
