//! A study driven end to end through the library, as any program would: a fake executor
//! (no engine, no network) that stores its runs in a real run store, an interruption, a
//! resume, the saved `study.json`, the index, and the report beside it.

use loadlab_metrics::RunResult;
use loadlab_orchestrate::study::{StudyObserver, StudyPlan};
use loadlab_orchestrate::{ExecutedRun, Executor, RunRequest, RunUse};
use loadlab_pipeline::study::{begin_or_resume, run_stored};
use loadlab_pipeline::{Outcome, PipelineError};
use loadlab_scenario::study::StudyDocument;
use loadlab_store::{Labels, NewRun, Store, StudyKind, StudyStatus};
use std::path::Path;
use std::time::Duration;

const FILE: &str = "
name: checkout
target: http://127.0.0.1:1
load: { model: open, rate: 10/s, duration: 2s }
steps: [ { get: / } ]
study:
  repeat: 5
  variants:
    - { name: a }
    - { name: b, load: { model: open, rate: 20/s, duration: 2s } }
";

fn plan(text: &str) -> StudyPlan {
    let doc = StudyDocument::parse(text, "checkout.yaml").unwrap();
    StudyPlan::from_document(&doc, None, None).unwrap()
}

/// Runs that take no time: variant `b` is twice as fast, and every run is stored.
struct StoringFake<'a> {
    store: &'a Store,
    study: String,
    made: usize,
    cancel_after: Option<usize>,
}

impl Executor for StoringFake<'_> {
    type Error = PipelineError;

    fn execute(&mut self, request: &RunRequest<'_>) -> Result<ExecutedRun, PipelineError> {
        self.made += 1;
        let mut r = RunResult::default();
        let faster = request.label == "b";
        r.name = "checkout".into();
        r.requests.total = 100;
        r.requests.rate = if faster { 20.0 } else { 10.0 } + self.made as f64 * 0.01;
        r.duration_s = 2.0;
        r.latency_ms.count = 100;
        r.latency_ms.p50 = if faster { 5.0 } else { 10.0 } + self.made as f64 * 0.1;
        r.latency_ms.p95 = 2.0 * r.latency_ms.p50;
        r.valid = true;
        let id = self.store.begin_run(&NewRun {
            scenario: "checkout".into(),
            variant: Some(request.label.clone()),
            study: Some(self.study.clone()),
            ..Default::default()
        })?;
        self.store.finish_run(&id, &r)?;
        Ok(ExecutedRun { id, result: r })
    }

    fn cancelled(&self) -> bool {
        self.cancel_after.is_some_and(|n| self.made >= n)
    }

    fn pause(&mut self, _: Duration) {}
}

/// Counts what the library reports while it goes.
#[derive(Default)]
struct Seen {
    started: usize,
    valid_runs: usize,
}

impl StudyObserver for Seen {
    fn run_starting(&mut self, _: &RunRequest<'_>, _: loadlab_orchestrate::study::Estimate) {
        self.started += 1;
    }

    fn run_finished(&mut self, _: &RunRequest<'_>, _: &ExecutedRun, used: RunUse, _: bool) {
        self.valid_runs += usize::from(used == RunUse::Valid);
    }
}

fn read_study(path: &Path) -> loadlab_analysis::study::StudyResult {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn a_study_is_stored_interrupted_resumed_completed_and_reported() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let checkout = plan(FILE);
    let file = Path::new("checkout.yaml");
    let json_copy = dir.path().join("copy.json");

    // Interrupted after 3 of 10 runs: saved, indexed as interrupted, not a valid outcome.
    let labels: Labels = [("commit".to_string(), "abc123".to_string())].into();
    let stored = begin_or_resume(&store, &checkout, None, file, &labels, &mut |_| {}).unwrap();
    let id = stored.ids.id.clone();
    let mut fake = StoringFake {
        store: &store,
        study: id.clone(),
        made: 0,
        cancel_after: Some(3),
    };
    let mut seen = Seen::default();
    let end = run_stored(
        &store,
        &checkout,
        stored,
        Some(&json_copy),
        false,
        &mut fake,
        &mut seen,
    );
    assert!(end.stopped && end.failure.is_none());
    assert_eq!(end.outcome(), Outcome::Invalid);
    assert_eq!(seen.valid_runs, 3);
    assert_eq!(end.file, store.study_file(StudyKind::Study, &id));
    let partial = read_study(&end.file);
    assert!(partial.interrupted);
    assert_eq!(partial.run_log.len(), 3);
    assert_eq!(read_study(&json_copy).run_log.len(), 3);
    let record = store.study(&id).unwrap();
    assert_eq!(record.status, StudyStatus::Interrupted);
    assert_eq!(record.runs_done, Some(3));
    assert_eq!(record.runs_planned, Some(10));
    assert_eq!(record.labels, labels);

    // A changed plan cannot resume it.
    let other = plan(&FILE.replace("repeat: 5", "repeat: 6"));
    let refused = begin_or_resume(&store, &other, Some(&id), file, &labels, &mut |_| {})
        .err()
        .unwrap();
    assert!(refused.is_bad_input(), "{refused}");

    // Resumed: the 3 stored runs are read back, the 7 others made, the study completed.
    let stored = begin_or_resume(&store, &checkout, Some(&id), file, &labels, &mut |_| {}).unwrap();
    assert_eq!(stored.prior.len(), 3);
    let mut fake = StoringFake {
        store: &store,
        study: id.clone(),
        made: 3,
        cancel_after: None,
    };
    let mut seen = Seen::default();
    let end = run_stored(&store, &checkout, stored, None, false, &mut fake, &mut seen);
    assert!(!end.stopped && end.failure.is_none());
    assert_eq!(seen.started, 7);
    assert_eq!(end.outcome(), Outcome::Ok);
    let study = read_study(&end.file);
    assert!(!study.interrupted);
    assert_eq!(study.variants.len(), 2);
    assert!(study.variants.iter().all(|v| v.runs.len() == 5));
    let b = study.variants.iter().find(|v| v.name == "b").unwrap();
    let a = study.variants.iter().find(|v| v.name == "a").unwrap();
    assert!(b.runs.iter().all(|r| !a.runs.contains(r)));
    let record = store.study(&id).unwrap();
    assert_eq!(record.status, StudyStatus::Done);
    assert_eq!(record.runs_done, Some(10));

    // Complete: nothing to resume. Its report is written beside it, runs read from the store.
    let again = begin_or_resume(&store, &checkout, Some(&id), file, &labels, &mut |_| {})
        .err()
        .unwrap();
    assert!(again.to_string().contains("is complete"), "{again}");
    let (html, md) = loadlab_pipeline::reports::write_report_beside(&end.file).unwrap();
    assert_eq!(html.parent(), end.file.parent());
    let text = std::fs::read_to_string(md).unwrap();
    assert!(text.contains("checkout"), "{text}");
    assert!(text.contains("`b`") || text.contains(" b "), "{text}");
}

#[test]
fn a_capacity_search_id_is_not_resumed_as_a_study() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let (id, _) = store
        .begin_study(StudyKind::Capacity, "search", None, None)
        .unwrap();
    let e = begin_or_resume(
        &store,
        &plan(FILE),
        Some(&id),
        Path::new("f.yaml"),
        &Labels::new(),
        &mut |_| {},
    )
    .err()
    .unwrap();
    assert!(e.is_bad_input());
    assert!(e.to_string().contains("not a study"), "{e}");
}
