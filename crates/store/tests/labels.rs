//! Labels are stored with runs and studies, filter a scenario's history, and a store written
//! before labels existed (schema version 2) opens and reads with none.

use loadlab_metrics::RunResult;
use loadlab_store::{parse_label_list, Labels, NewRun, Store};

fn labels(text: &str) -> Labels {
    parse_label_list(text).unwrap()
}

/// A finished run of `scenario` with `labels`.
fn stored_run(store: &Store, scenario: &str, labels: Labels, study: Option<&str>) -> String {
    let id = store
        .begin_run(&NewRun {
            scenario: scenario.into(),
            plan_hash: Some("plan-a".into()),
            study: study.map(str::to_string),
            labels,
            ..NewRun::default()
        })
        .unwrap();
    store.finish_run(&id, &RunResult::default()).unwrap();
    id
}

#[test]
fn runs_keep_their_labels_and_history_filters_by_them() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let first = stored_run(&store, "shop", labels("commit=aaa,branch=main"), None);
    let second = stored_run(&store, "shop", labels("commit=bbb,branch=dev"), None);
    let _other = stored_run(&store, "other", labels("commit=ccc,branch=main"), None);
    let (study, _) = store
        .begin_study(loadlab_store::StudyKind::Study, "shop", None, Some("h"))
        .unwrap();
    store.set_labels(&study, &labels("commit=ddd")).unwrap();
    let _in_study = stored_run(&store, "shop", labels("commit=ddd"), Some(&study));

    let store = Store::open(dir.path()).unwrap();
    assert_eq!(
        store.run(&first).unwrap().labels,
        labels("commit=aaa,branch=main")
    );
    assert_eq!(
        store.run(&first).unwrap().plan_hash.as_deref(),
        Some("plan-a")
    );
    let all: Vec<String> = store
        .history_runs("shop", &Labels::new())
        .unwrap()
        .into_iter()
        .map(|r| r.id)
        .collect();
    assert_eq!(
        all,
        vec![first.clone(), second],
        "oldest first, study runs left out"
    );
    let main: Vec<String> = store
        .history_runs("shop", &labels("branch=main"))
        .unwrap()
        .into_iter()
        .map(|r| r.id)
        .collect();
    assert_eq!(main, vec![first]);
    assert_eq!(store.study(&study).unwrap().labels, labels("commit=ddd"));
}

#[test]
fn a_study_is_a_history_point_once_it_has_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let (begun, _) = store
        .begin_study(loadlab_store::StudyKind::Study, "shop", None, None)
        .unwrap();
    let (done, done_dir) = store
        .begin_study(loadlab_store::StudyKind::Study, "shop", None, None)
        .unwrap();
    let file = done_dir.join("study.json");
    std::fs::write(&file, "{}").unwrap();
    store.finish_study(&done, &file, false).unwrap();
    store.set_labels(&done, &labels("commit=abc")).unwrap();
    let points = store.history_studies("shop", &Labels::new()).unwrap();
    assert_eq!(points.len(), 1, "{begun} has no result yet");
    assert_eq!(points[0].id, done);
    assert!(store
        .history_studies("shop", &labels("commit=zzz"))
        .unwrap()
        .is_empty());
}

#[test]
fn a_store_from_before_labels_opens_with_none() {
    let dir = tempfile::tempdir().unwrap();
    let id = {
        let store = Store::open(dir.path()).unwrap();
        stored_run(&store, "shop", Labels::new(), None)
    };
    // Make it look like a version-2 store: no labels table.
    {
        let conn = rusqlite::Connection::open(dir.path().join("loadlab.db")).unwrap();
        conn.execute_batch("DROP TABLE labels; PRAGMA user_version = 2;")
            .unwrap();
    }
    let store = Store::open(dir.path()).unwrap();
    assert!(store.run(&id).unwrap().labels.is_empty());
    store.set_labels(&id, &labels("commit=abc")).unwrap();
    assert_eq!(store.run(&id).unwrap().labels, labels("commit=abc"));
}
