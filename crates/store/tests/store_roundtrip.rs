//! The store keeps what it is given: runs and studies survive a reopen, a run whose process
//! died is marked interrupted, and the HDR log is a readable interval log.

use loadlab_metrics::result::{LoadInfo, RunMeta};
use loadlab_metrics::{Outcome, Recorder, RunResult};
use loadlab_store::{NewRun, Store};
use std::time::{Duration, SystemTime};

fn sample_run() -> RunResult {
    let mut rec = Recorder::new(1);
    for i in 0..1000u64 {
        rec.record(&Outcome {
            step: 0,
            latency_us: 1000 + i * 10,
            service_us: 900 + i * 10,
            lag_us: None,
            status: 200,
            error: None,
            warmup: false,
        });
    }
    let meta = RunMeta {
        name: "roundtrip".into(),
        scenario_file: Some("x.yaml".into()),
        target: Some("http://127.0.0.1:1".into()),
        started_at: SystemTime::now(),
        measured: Duration::from_secs(2),
        warmup: Duration::ZERO,
        interrupted: false,
        load: LoadInfo {
            model: "open".into(),
            peak_rate: Some(500.0),
            ..LoadInfo::default()
        },
        generator: Default::default(),
        intervals: Vec::new(),
        steps: vec![loadlab_metrics::StepInfo {
            name: "ping".into(),
            group: None,
        }],
    };
    RunResult::build(&rec, meta)
}

#[test]
fn runs_and_studies_survive_a_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let result = sample_run();
    let (run_id, study_id, study_path);
    {
        let store = Store::open(dir.path()).unwrap();
        let (sid, sdir) = store
            .begin_study("study", "roundtrip", Some("x.yaml"))
            .unwrap();
        run_id = store
            .begin_run(&NewRun {
                scenario: "roundtrip".into(),
                variant: Some("baseline".into()),
                study: Some(sid.clone()),
                load: Some("500/s".into()),
                ..NewRun::default()
            })
            .unwrap();
        let json = store.finish_run(&run_id, &result).unwrap();
        assert!(json.ends_with("run.json"));
        study_path = sdir.join("study.json");
        std::fs::write(&study_path, "{}").unwrap();
        store.finish_study(&sid, &study_path, false).unwrap();
        study_id = sid;
    }
    let store = Store::open(dir.path()).unwrap();
    let (rec, loaded) = store
        .load_run(&run_id[..run_id.len() - 2])
        .unwrap_or_else(|_| store.load_run(&run_id).unwrap());
    assert_eq!(loaded, result);
    assert_eq!(rec.status, "done");
    assert_eq!(rec.variant.as_deref(), Some("baseline"));
    assert_eq!(rec.rate, Some(result.requests.rate));
    assert_eq!(rec.p95_ms, Some(result.latency_ms.p95));
    assert_eq!(rec.valid, Some(result.valid));
    assert_eq!(store.study_runs(&study_id).unwrap().len(), 1);
    let s = store.study("last").unwrap();
    assert_eq!(s.id, study_id);
    assert_eq!(s.path.as_deref(), Some(study_path.as_path()));
    assert_eq!(store.runs(10).unwrap().len(), 1);
    assert!(store.run("nope").is_err());
}

#[test]
fn a_run_whose_process_died_is_interrupted() {
    let dir = tempfile::tempdir().unwrap();
    {
        let store = Store::open(dir.path()).unwrap();
        let id = store
            .begin_run(&NewRun {
                scenario: "crash".into(),
                ..NewRun::default()
            })
            .unwrap();
        // Simulate a crash: the row still says running, but with a process id that is gone.
        let conn = rusqlite_free_update(dir.path(), &id);
        assert!(conn);
    }
    let store = Store::open(dir.path()).unwrap();
    let runs = store.runs(10).unwrap();
    assert_eq!(runs[0].status, "interrupted");
    assert!(runs[0].path.is_none());
}

/// Points the run's pid at a process that cannot exist, through the store's own database.
fn rusqlite_free_update(dir: &std::path::Path, id: &str) -> bool {
    loadlab_store::debug_set_pid(dir, id, i64::from(u32::MAX)).is_ok()
}

#[test]
fn hdr_log_is_a_readable_interval_log() {
    use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
    let result = sample_run();
    let log = loadlab_store::hdr_log(&result);
    let text = String::from_utf8(log.clone()).unwrap();
    assert!(text.contains("#[StartTime: "), "{text}");
    let mut tags = Vec::new();
    for entry in IntervalLogIterator::new(&log) {
        if let LogEntry::Interval(h) = entry.unwrap() {
            tags.push(h.tag().unwrap().as_str().to_string());
            use base64::Engine;
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(h.encoded_histogram())
                .unwrap();
            let hist: hdrhistogram::Histogram<u64> =
                hdrhistogram::serialization::Deserializer::new()
                    .deserialize(&mut bytes.as_slice())
                    .unwrap();
            assert_eq!(hist.len(), 1000);
        }
    }
    assert_eq!(tags, vec!["latency", "service_time"]);
}
