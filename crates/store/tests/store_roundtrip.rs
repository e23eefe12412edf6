//! The store keeps what it is given: runs and studies survive a reopen, a run whose process
//! died is marked interrupted and offered for recovery from its record.

use loadlab_metrics::result::{LoadInfo, StopReason};
use loadlab_metrics::{Outcome, Recorder, RunResult, StepInfo};
use loadlab_record::{
    IntervalRecord, RecordEnd, RecordMeta, RecordSink, RecordWriter, Summarizer, RECORD_SCHEMA,
};
use loadlab_store::{NewRun, RunStatus, Store};

fn meta() -> RecordMeta {
    RecordMeta {
        schema: RECORD_SCHEMA.into(),
        tool_version: "test".into(),
        name: "roundtrip".into(),
        scenario_file: Some("x.yaml".into()),
        target: Some("http://127.0.0.1:1".into()),
        start_unix_s: 1.8e9,
        warmup_s: 0.0,
        slice_s: 1.0,
        load: LoadInfo {
            model: loadlab_metrics::LoadModel::Open,
            peak_rate: Some(500.0),
            ..LoadInfo::default()
        },
        plan_hash: "h".into(),
        scenario: serde_json::json!({}),
        segment: None,
        steerable: false,
        origins: vec![],
        steps: vec![StepInfo {
            name: "ping".into(),
            ..StepInfo::default()
        }],
        data_sets: vec![],
        thresholds: vec![],
        environment: Default::default(),
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
    }
}

fn intervals() -> Vec<IntervalRecord> {
    (0..2)
        .map(|k| {
            let mut rec = Recorder::new(1);
            for i in 0..500u64 {
                rec.begin(0);
                rec.record(&Outcome {
                    step: 0,
                    latency_us: 1000 + i * 10,
                    service_us: 900 + i * 10,
                    status: 200,
                    ..Outcome::default()
                });
            }
            IntervalRecord {
                index: k,
                start_s: f64::from(k),
                length_s: 1.0,
                warmup: false,
                delta: rec.take_interval(1, 0.01),
                resources: Vec::new(),
            }
        })
        .collect()
}

fn sample_run() -> RunResult {
    let mut s = Summarizer::new(1);
    for i in intervals() {
        s.add(&i);
    }
    s.finish(
        &meta(),
        Some(&RecordEnd {
            stop: StopReason::Completed,
            aborted_by_threshold: None,
            signal: None,
            wall_s: 2.0,
            max_rss_bytes: 0,
            intervals: 2,
            monitor_cpu_percent: None,
            host_timer: None,
            steering: Vec::new(),
            driven: None,
            data_use: Vec::new(),
        }),
    )
}

#[test]
fn runs_and_studies_survive_a_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let result = sample_run();
    let (run_id, study_id, study_path);
    {
        let store = Store::open(dir.path()).unwrap();
        let (sid, sdir) = store
            .begin_study(
                loadlab_store::StudyKind::Study,
                "roundtrip",
                Some("x.yaml"),
                Some("hash"),
            )
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
        store.update_study(&sid, &study_path, 1, 4).unwrap();
        store.finish_study(&sid, &study_path, false).unwrap();
        study_id = sid;
    }
    let store = Store::open(dir.path()).unwrap();
    let (rec, loaded) = store.load_run(&run_id).unwrap();
    assert_eq!(loaded, result);
    assert_eq!(rec.status, RunStatus::Done);
    assert_eq!(rec.variant.as_deref(), Some("baseline"));
    assert_eq!(rec.rate, Some(result.requests.rate));
    assert_eq!(rec.p95_ms, Some(result.latency_ms.p95));
    assert_eq!(rec.valid, Some(result.valid));
    assert_eq!(rec.requests, Some(1000));
    assert_eq!(store.study_runs(&study_id).unwrap().len(), 1);
    let s = store.study("last").unwrap();
    assert_eq!(s.id, study_id);
    assert_eq!(s.path.as_deref(), Some(study_path.as_path()));
    assert_eq!((s.runs_done, s.runs_planned), (Some(1), Some(4)));
    assert_eq!(s.plan_hash.as_deref(), Some("hash"));
    let (runs, total) = store.runs(10).unwrap();
    assert_eq!((runs.len(), total), (1, 1));
    assert_eq!(store.run("last").unwrap().id, run_id);
    assert!(store.run("nope").is_err());
}

/// A store reads the same from any directory and after it is moved (a CI cache, an
/// artifact): the index keeps its files relative to it. A copy reads its own files, never
/// the original's, and so does a store whose index kept another directory's paths (as
/// stores written before did).
#[test]
fn a_moved_or_copied_store_reads_its_own_files() {
    let dir = tempfile::tempdir().unwrap();
    let first = dir.path().join("first");
    let result = sample_run();
    let (run_id, study_id) = {
        let store = Store::open(&first).unwrap();
        let (sid, sdir) = store
            .begin_study(loadlab_store::StudyKind::Study, "moved", None, None)
            .unwrap();
        let rid = store.begin_run(&NewRun::default()).unwrap();
        store.finish_run(&rid, &result).unwrap();
        std::fs::write(sdir.join("study.json"), "{}").unwrap();
        store
            .finish_study(&sid, &sdir.join("study.json"), false)
            .unwrap();
        (rid, sid)
    };
    let moved = dir.path().join("moved");
    std::fs::rename(&first, &moved).unwrap();
    let store = Store::open(&moved).unwrap();
    let (rec, loaded) = store.load_run(&run_id).unwrap();
    assert_eq!(loaded, result);
    assert!(rec.path.unwrap().starts_with(&moved));
    assert!(store
        .study(&study_id)
        .unwrap()
        .path
        .unwrap()
        .starts_with(&moved));
    // A copy beside the original reads its own files.
    let copy = dir.path().join("copy");
    std::fs::create_dir_all(copy.join("runs")).unwrap();
    std::fs::copy(moved.join("loadlab.db"), copy.join("loadlab.db")).unwrap();
    let run_dir = copy.join("runs").join(&run_id);
    std::fs::create_dir_all(&run_dir).unwrap();
    std::fs::copy(
        moved.join("runs").join(&run_id).join("run.json"),
        run_dir.join("run.json"),
    )
    .unwrap();
    let copied = Store::open(&copy).unwrap();
    assert!(copied
        .run(&run_id)
        .unwrap()
        .path
        .unwrap()
        .starts_with(&copy));
    // An index that kept the absolute paths of where the store was first written.
    let conn = rusqlite::Connection::open(copy.join("loadlab.db")).unwrap();
    let old = moved.join("runs").join(&run_id).join("run.json");
    conn.execute("UPDATE runs SET path = ?1", [old.display().to_string()])
        .unwrap();
    drop(conn);
    let copied = Store::open(&copy).unwrap();
    assert_eq!(
        copied.run(&run_id).unwrap().path.unwrap(),
        run_dir.join("run.json")
    );
}

#[test]
fn a_run_whose_process_died_is_interrupted_and_recoverable() {
    let dir = tempfile::tempdir().unwrap();
    let id;
    {
        let store = Store::open(dir.path()).unwrap();
        id = store
            .begin_run(&NewRun {
                scenario: "crash".into(),
                ..NewRun::default()
            })
            .unwrap();
        // Its record holds two intervals, then the process "dies" (no end, no summary).
        let mut w = RecordWriter::new(&store.run_dir(&id)).without_sync();
        w.begin(&meta()).unwrap();
        for i in intervals() {
            w.interval(&i).unwrap();
        }
        assert!(loadlab_store::debug_set_pid(dir.path(), &id, i64::from(u32::MAX)).is_ok());
    }
    let store = Store::open(dir.path()).unwrap();
    let (runs, _) = store.runs(10).unwrap();
    assert_eq!(runs[0].status, RunStatus::Interrupted);
    assert!(runs[0].path.is_none());
    let todo = store.unrecovered().unwrap();
    assert_eq!(todo.len(), 1);
    let record = loadlab_record::StoredRecord::open(&store.run_dir(&id)).unwrap();
    let result = loadlab_record::summarize(&record).unwrap();
    assert!(result.interrupted);
    assert_eq!(result.requests.total, 1000);
    store.finish_run(&id, &result).unwrap();
    let (rec, _) = store.load_run(&id).unwrap();
    assert_eq!(
        (rec.status, rec.partial, rec.requests),
        (RunStatus::Interrupted, true, Some(1000))
    );
    assert!(store.unrecovered().unwrap().is_empty());
}

#[test]
fn a_run_measured_but_not_stored_is_not_listed_as_interrupted() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let completed = store.begin_run(&NewRun::default()).unwrap();
    let cut_short = store.begin_run(&NewRun::default()).unwrap();
    store.mark_not_stored(&completed, false).unwrap();
    store.mark_not_stored(&cut_short, true).unwrap();
    // Its process is gone: a run left `running` would now read as interrupted.
    for id in [&completed, &cut_short] {
        loadlab_store::debug_set_pid(dir.path(), id, i64::from(u32::MAX)).unwrap();
    }
    let store = Store::open(dir.path()).unwrap();
    let completed = store.run(&completed).unwrap();
    assert_eq!(
        (completed.status, completed.partial),
        (RunStatus::NotStored, false)
    );
    let cut_short = store.run(&cut_short).unwrap();
    assert_eq!(
        (cut_short.status, cut_short.partial),
        (RunStatus::NotStored, true)
    );
    assert!(store.unrecovered().unwrap().is_empty());
}

#[test]
fn a_summary_that_is_missing_beside_a_record_is_to_be_rebuilt_and_a_damaged_one_says_how() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let with_record = |store: &Store| {
        let id = store.begin_run(&NewRun::default()).unwrap();
        let mut w = RecordWriter::new(&store.run_dir(&id)).without_sync();
        w.begin(&meta()).unwrap();
        for i in intervals() {
            w.interval(&i).unwrap();
        }
        id
    };
    // A full disk at the end: the record was written, its summary was not.
    let first = with_record(&store);
    let result = || {
        let record = loadlab_record::StoredRecord::open(&store.run_dir(&first)).unwrap();
        loadlab_record::summarize(&record).unwrap()
    };
    store.mark_not_stored(&first, false).unwrap();
    // A summary deleted by hand, and one that is there.
    let deleted = with_record(&store);
    let kept = with_record(&store);
    let damaged = with_record(&store);
    for id in [&deleted, &kept, &damaged] {
        store.finish_run(id, &result()).unwrap();
    }
    std::fs::remove_file(store.run_dir(&deleted).join("run.json")).unwrap();
    std::fs::write(
        store.run_dir(&damaged).join("run.json"),
        "{\"schema\": \"loa",
    )
    .unwrap();
    let todo: Vec<String> = store
        .unrecovered()
        .unwrap()
        .into_iter()
        .map(|r| r.id)
        .collect();
    // Opening looks only at runs whose summary was never written; a deleted one is found
    // where it is read.
    assert_eq!(todo, vec![first.clone()]);
    let missing = |id: &str| store.summary_missing(&store.run(id).unwrap());
    assert_eq!(
        [&first, &deleted, &kept, &damaged].map(|id| missing(id)),
        [false, true, false, false]
    );
    // A damaged summary is not silently replaced: its error says how to have it rebuilt.
    let err = store.load_run(&damaged).unwrap_err().to_string();
    assert!(err.contains("EOF while parsing"), "{err}");
    assert!(
        err.contains("delete this file and the next loadlab command rebuilds it from the record"),
        "{err}"
    );
    for id in [&first, &deleted] {
        store.finish_run(id, &result()).unwrap();
    }
    assert!(store.unrecovered().unwrap().is_empty());
    assert!(!missing(&deleted));
    // These records have no end: what they held is a partial result, and listed as one.
    let rebuilt = store.run(&first).unwrap();
    assert_eq!(
        (rebuilt.status, rebuilt.partial),
        (RunStatus::Interrupted, true)
    );
    assert!(rebuilt.path.is_some());
}

#[test]
fn a_file_where_the_store_goes_is_named_as_one() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("ok.yaml");
    std::fs::write(&file, "load: {}\n").unwrap();
    for err in [
        Store::open(&file).err().unwrap().to_string(),
        loadlab_store::check_writable(&file)
            .unwrap_err()
            .to_string(),
    ] {
        assert!(
            err.contains("ok.yaml: is a file: --results (or LOADLAB_RESULTS) names the directory"),
            "{err}"
        );
    }
}
