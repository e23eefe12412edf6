//! The study runner with fake runs: order, re-runs of invalid runs, interruption and resume.

use super::*;
use crate::executor::{ExecutedRun, Executor, RunRequest};
use crate::usable::RunUse;
use loadlab_analysis::study::StudyResult;
use loadlab_metrics::{InvalidKind, RunResult, Validity};
use loadlab_scenario::study::StudyDocument;
use std::collections::VecDeque;
use std::time::Duration;

const FILE: &str = "
name: s
target: http://127.0.0.1:1
load: { model: open, rate: 10/s, duration: 2s }
steps: [ { get: / } ]
study:
  repeat: 5
  retry_invalid: 2
  variants:
    - { name: a }
    - { name: b, load: { model: open, rate: 20/s, duration: 2s } }
";

fn plan(text: &str) -> StudyPlan {
    let doc = StudyDocument::parse(text, "s.yaml").unwrap();
    StudyPlan::from_document(&doc, None, None).unwrap()
}

/// What the fake run of each request returns, in order; then valid runs.
#[derive(Default)]
struct Fake {
    script: VecDeque<Option<InvalidKind>>,
    made: Vec<(String, usize)>,
    cancel_after: Option<usize>,
    next_id: usize,
    paused: Vec<Duration>,
}

impl Fake {
    /// Runs that are invalid as `script` says, in order; then valid runs.
    fn scripted(script: impl IntoIterator<Item = Option<InvalidKind>>) -> Self {
        Fake {
            script: script.into_iter().collect(),
            ..Fake::default()
        }
    }

    /// The labels of the runs made, in order.
    fn order(&self) -> Vec<&str> {
        self.made.iter().map(|(l, _)| l.as_str()).collect()
    }
}

fn result(rate: f64, invalid: Option<InvalidKind>) -> RunResult {
    let mut r = RunResult::default();
    r.requests.total = 100;
    r.requests.rate = rate;
    r.duration_s = 2.0;
    r.latency_ms.count = 100;
    r.latency_ms.p50 = 10.0;
    r.latency_ms.p95 = 20.0;
    // A closed model's (the fake's) compensated latency, three times the raw.
    r.latency_compensated_ms = Some(loadlab_metrics::result::LatencySummary {
        count: 300,
        p50: 30.0,
        p95: 60.0,
        ..Default::default()
    });
    if let Some(kind) = invalid {
        r.validity = Validity::default();
        r.validity
            .push(kind, format!("{} for the test", kind.as_str()));
        r.interrupted = kind == InvalidKind::Interrupted;
    }
    r.valid = r.validity.is_valid();
    r
}

impl Executor for Fake {
    type Error = String;

    fn execute(&mut self, request: &RunRequest<'_>) -> Result<ExecutedRun, String> {
        self.made.push((request.label.clone(), request.attempt));
        self.next_id += 1;
        let invalid = self.script.pop_front().flatten();
        let rate = if request.label == "a" { 10.0 } else { 20.0 } + self.next_id as f64 * 0.01;
        Ok(ExecutedRun {
            id: format!("r{}", self.next_id),
            result: result(rate, invalid),
        })
    }

    fn cancelled(&self) -> bool {
        self.cancel_after.is_some_and(|n| self.made.len() >= n)
    }

    fn pause(&mut self, duration: Duration) {
        self.paused.push(duration);
    }
}

#[derive(Default)]
struct Journal {
    saved: Vec<StudyResult>,
    retries: usize,
    warmups: Vec<String>,
}

impl StudyObserver for Journal {
    fn run_finished(&mut self, _: &RunRequest<'_>, _: &ExecutedRun, _: RunUse, retrying: bool) {
        self.retries += usize::from(retrying);
    }

    fn warmup_finished(&mut self, request: &RunRequest<'_>, run: &ExecutedRun) {
        self.warmups.push(format!("{} {}", request.label, run.id));
    }

    fn save(&mut self, study: &StudyResult) -> Result<(), String> {
        self.saved.push(study.clone());
        Ok(())
    }
}

/// The runs a study made, given back to resume it (each as valid as its entry says).
fn made_runs(study: &StudyResult) -> Vec<MadeRun> {
    study
        .run_log
        .iter()
        .map(|e| MadeRun {
            entry: e.clone(),
            result: result(10.0, e.invalid.first().copied()),
        })
        .collect()
}

/// The study of `p` from the start, by `exec`, saved nowhere anyone reads.
fn unobserved(p: &StudyPlan, allow_saturated: bool, exec: &mut Fake) -> StudyOutcome<String> {
    run_study(
        p,
        &ids(),
        vec![],
        allow_saturated,
        exec,
        &mut Journal::default(),
    )
}

fn ids() -> StudyIds {
    StudyIds {
        id: "s1".into(),
        started_at: "2026-11-23T10:00:00Z".into(),
    }
}

#[test]
fn runs_are_interleaved_and_saved_after_each() {
    let p = plan(FILE);
    let mut exec = Fake::default();
    let mut journal = Journal::default();
    let out = run_study(&p, &ids(), vec![], false, &mut exec, &mut journal);
    assert!(out.stop.is_none());
    let order = exec.order();
    assert_eq!(order, ["a", "b", "a", "b", "a", "b", "a", "b", "a", "b"]);
    assert_eq!(
        journal.saved.len(),
        11,
        "after each of 10 runs, and at the end"
    );
    assert!(!out.study.interrupted);
    assert_eq!(out.study.variants[0].runs.len(), 5);
    assert_eq!(out.study.run_log.len(), 10);
    assert!(
        !out.study.comparisons.is_empty(),
        "5 vs 5 runs are compared"
    );
}

/// `compare_on: compensated` compares every latency metric, default or listed, on its
/// compensated figure; the others stay as they are.
#[test]
fn compare_on_compensated_reads_each_latency_metric_compensated() {
    let compared = |file: &str| {
        let p = plan(file);
        let mut exec = Fake::default();
        let out = unobserved(&p, false, &mut exec);
        let names: Vec<String> = out
            .study
            .comparisons
            .iter()
            .map(|c| c.metric.to_string())
            .collect();
        (out.study, names)
    };
    let (raw, names) = compared(FILE);
    assert_eq!(raw.compare_on, loadlab_metrics::LatencyBasis::Raw);
    assert!(names.contains(&"latency_ms.p95".to_string()), "{names:?}");
    let on = FILE.replace(
        "retry_invalid: 2",
        "retry_invalid: 2\n  compare_on: compensated",
    );
    let (study, names) = compared(&on);
    assert_eq!(study.compare_on, loadlab_metrics::LatencyBasis::Compensated);
    assert!(names.contains(&"requests.rate".to_string()), "{names:?}");
    assert!(
        names.contains(&"latency_compensated_ms.p95".to_string()),
        "{names:?}"
    );
    assert!(
        !names.iter().any(|n| n.starts_with("latency_ms.")),
        "{names:?}"
    );
    let p95 = study
        .comparisons
        .iter()
        .find(|c| c.metric.to_string() == "latency_compensated_ms.p95")
        .unwrap();
    assert_eq!(p95.baseline_median, 60.0);
    // A listed raw metric is read compensated too, and not twice.
    let listed = on.replace(
        "compare_on: compensated",
        "compare_on: compensated\n  metrics: [latency_ms.p95, latency_compensated_ms.p95]",
    );
    assert_eq!(compared(&listed).1, ["latency_compensated_ms.p95"]);
}

#[test]
fn warm_up_runs_come_first_and_stay_out_of_the_statistics() {
    let p = plan(&FILE.replace("retry_invalid: 2", "retry_invalid: 2\n  warmup_runs: 1"));
    assert_eq!(p.warmup_runs, 1);
    // An invalid warm-up run is not re-run: warming up is all it is for.
    let mut exec = Fake::scripted([Some(InvalidKind::GeneratorSaturated)]);
    let mut journal = Journal::default();
    let out = run_study(&p, &ids(), vec![], false, &mut exec, &mut journal);
    assert!(out.stop.is_none());
    let order = exec.order();
    assert_eq!(order[..2], ["a (warm-up)", "b (warm-up)"]);
    assert_eq!(order.len(), 12, "2 warm-up runs, then 5 + 5 measured");
    assert_eq!(journal.warmups, ["a (warm-up) r1", "b (warm-up) r2"]);
    assert_eq!(journal.retries, 0);
    assert_eq!(out.study.warmup_runs, 1);
    assert_eq!(out.study.run_log.len(), 10);
    for v in &out.study.variants {
        assert_eq!(v.runs.len(), 5);
        assert!(
            !v.runs.iter().any(|r| r == "r1" || r == "r2"),
            "{:?}",
            v.runs
        );
        assert!(v.excluded_runs.is_empty());
    }
    // A resumed study warms up again; a finished one has nothing to warm up for.
    let prior: Vec<MadeRun> = Vec::new();
    let mut exec = Fake::default();
    let mut journal = Journal::default();
    let done = run_study(&p, &ids(), prior, false, &mut exec, &mut journal);
    assert_eq!(journal.warmups.len(), 2);
    let mut exec = Fake::default();
    let mut journal = Journal::default();
    let prior = made_runs(&done.study);
    run_study(&p, &ids(), prior, false, &mut exec, &mut journal);
    assert!(journal.warmups.is_empty() && exec.made.is_empty());
}

#[test]
fn an_invalid_run_is_run_again_so_the_variant_keeps_its_runs() {
    let p = plan(FILE);
    let mut exec = Fake::scripted([
        None,
        Some(InvalidKind::GeneratorSaturated),
        Some(InvalidKind::HostContended),
    ]);
    let mut journal = Journal::default();
    let out = run_study(&p, &ids(), vec![], false, &mut exec, &mut journal);
    assert_eq!(
        &exec.made[..4],
        &[
            ("a".into(), 0),
            ("b".into(), 0),
            ("b".into(), 1),
            ("b".into(), 2)
        ]
    );
    assert_eq!(journal.retries, 2);
    // The generator's own saturation is not waited out; the host's disturbance is, for
    // twice the first wait at the second re-run.
    assert_eq!(exec.paused, vec![2 * crate::SETTLE_FIRST]);
    assert_eq!(
        out.study.variants[1].runs.len(),
        5,
        "b still has 5 valid runs"
    );
    assert_eq!(out.study.variants[1].excluded_runs.len(), 2);
    let retried: Vec<_> = out.study.run_log.iter().filter(|e| !e.used).collect();
    assert_eq!(retried.len(), 2);
    assert_eq!(retried[0].invalid, vec![InvalidKind::GeneratorSaturated]);
    assert!(out
        .study
        .warnings
        .iter()
        .any(|w| w.contains("re-runs of invalid runs")));
}

#[test]
fn re_runs_are_bounded_and_allow_saturated_accepts_generator_limits() {
    let p = plan(FILE);
    let mut exec = Fake::scripted(std::iter::repeat_n(
        Some(InvalidKind::GeneratorSaturated),
        50,
    ));
    let out = unobserved(&p, false, &mut exec);
    assert_eq!(exec.made.len(), 30, "10 slots × (1 + 2 re-runs)");
    assert!(out.study.variants.iter().all(|v| v.runs.is_empty()));

    let mut exec = Fake::scripted(std::iter::repeat_n(
        Some(InvalidKind::GeneratorSaturated),
        50,
    ));
    let out = unobserved(&p, true, &mut exec);
    assert_eq!(exec.made.len(), 10, "--allow-saturated: nothing re-run");
    assert_eq!(out.study.variants[0].runs.len(), 5);
}

#[test]
fn a_run_that_a_re_run_would_repeat_is_excluded_without_re_runs() {
    let p = plan(FILE);
    let mut exec = Fake::scripted(std::iter::repeat_n(Some(InvalidKind::NothingMeasured), 50));
    let mut journal = Journal::default();
    let out = run_study(&p, &ids(), vec![], false, &mut exec, &mut journal);
    assert_eq!(exec.made.len(), 10, "10 slots, none made again");
    assert_eq!(journal.retries, 0);
    assert!(exec.paused.is_empty());
    assert!(out.study.variants.iter().all(|v| v.runs.is_empty()));
    assert_eq!(out.study.variants[0].excluded_runs.len(), 5);
}

#[test]
fn an_interrupted_study_resumes_to_the_same_result() {
    let p = plan(FILE);
    // Stopped by a signal during the 4th run.
    let mut exec = Fake::scripted([None, None, None, Some(InvalidKind::Interrupted)]);
    let mut journal = Journal::default();
    let first = run_study(&p, &ids(), vec![], false, &mut exec, &mut journal);
    assert!(matches!(first.stop, Some(StudyStop::Cancelled)));
    assert!(first.study.interrupted);
    assert_eq!(first.study.run_log.len(), 4);
    assert!(first
        .study
        .warnings
        .iter()
        .any(|w| w.contains("--resume s1")));

    // Resume: the runs made are given back; only the missing ones are run, in order.
    let prior = made_runs(&first.study);
    let mut exec = Fake::default();
    let second = run_study(&p, &ids(), prior, false, &mut exec, &mut Journal::default());
    assert!(second.stop.is_none());
    let order = exec.order();
    assert_eq!(
        order,
        ["b", "a", "b", "a", "b", "a", "b"],
        "rep 1 of b again, then the rest"
    );
    assert!(!second.study.interrupted);
    assert_eq!(second.study.variants[0].runs.len(), 5);
    assert_eq!(second.study.variants[1].runs.len(), 5);
}

#[test]
fn a_signal_between_runs_stops_the_study() {
    let p = plan(FILE);
    let mut exec = Fake {
        cancel_after: Some(3),
        ..Fake::default()
    };
    let out = unobserved(&p, false, &mut exec);
    assert_eq!(exec.made.len(), 3);
    assert!(out.study.interrupted);
    assert!(matches!(out.stop, Some(StudyStop::Cancelled)));
}

#[test]
fn the_fingerprint_changes_with_the_plan() {
    let a = plan(FILE);
    assert_eq!(a.fingerprint(), plan(FILE).fingerprint());
    assert_ne!(
        a.fingerprint(),
        plan(&FILE.replace("20/s", "30/s")).fingerprint()
    );
    assert_ne!(
        a.fingerprint(),
        plan(&FILE.replace("repeat: 5", "repeat: 6")).fingerprint()
    );
}

/// Records every estimate the runner gives.
#[derive(Default)]
struct Estimates {
    seen: Vec<Estimate>,
}

impl StudyObserver for Estimates {
    fn starting(&mut self, _: &StudyPlan, _: usize, estimate: Estimate) {
        self.seen.push(estimate);
    }

    fn run_starting(&mut self, _: &RunRequest<'_>, remaining: Estimate) {
        self.seen.push(remaining);
    }

    fn save(&mut self, _: &StudyResult) -> Result<(), String> {
        Ok(())
    }
}

#[test]
fn the_time_left_is_a_bound_until_runs_that_end_when_done_are_measured() {
    // Runs end after their iterations (the fake ones take 2 s); the plan only bounds them
    // by max_duration. Variant `b` has the same load plan (another target), `c` does not.
    let p = plan(
        "
name: s
target: http://127.0.0.1:1
load: { model: closed, vus: 2, iterations: 50, max_duration: 1m }
steps: [ { get: / } ]
study:
  repeat: 2
  variants:
    - { name: a }
    - { name: b, target: http://127.0.0.1:2 }
    - { name: c, load: { model: closed, vus: 4, iterations: 50, max_duration: 1m } }
",
    );
    let mut exec = Fake::default();
    let mut seen = Estimates::default();
    run_study(&p, &ids(), vec![], false, &mut exec, &mut seen);
    let e = &seen.seen;
    // Start and before the first run: every run bounded by its minute.
    assert!(
        e[0].upper_bound && (e[0].seconds - 6.0 * 60.0).abs() < 1e-9,
        "{e:?}"
    );
    assert_eq!(e[0], e[1]);
    // Before `b`'s first run: `a` took 2 s, `b` has its plan, `c` is still bounded.
    assert!(e[2].upper_bound, "c is unmeasured: {e:?}");
    assert!(
        (e[2].seconds - (2.0 + 60.0 + 2.0 + 2.0 + 60.0)).abs() < 1e-9,
        "{e:?}"
    );
    // Once every plan has been measured: an estimate, no bound.
    let last = e.last().unwrap();
    assert!(
        !last.upper_bound && (last.seconds - 2.0).abs() < 1e-9,
        "{e:?}"
    );
}
