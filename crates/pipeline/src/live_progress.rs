//! A study's or capacity search's progress told to the live dashboard as well as to the
//! terminal: these observers pass every call on to the terminal's observer, and keep the
//! dashboard's [`Context`] (what runs now, the results so far) up to date.

use loadlab_analysis::capacity::{CapacityResult, CapacityStep, Phase};
use loadlab_analysis::study::StudyResult;
use loadlab_live::dashboard::{Context, Dashboard, ResultRow};
use loadlab_metrics::RunResult;
use loadlab_orchestrate::capacity::CapacityObserver;
use loadlab_orchestrate::study::{Estimate, StudyObserver, StudyPlan};
use loadlab_orchestrate::{ExecutedRun, RunRequest, RunUse};

/// Passes a study's progress to `inner` and to the dashboard.
pub struct StudyTee<'a> {
    pub inner: &'a mut dyn StudyObserver,
    pub dashboard: &'a Dashboard,
    context: Context,
}

impl<'a> StudyTee<'a> {
    pub fn new(inner: &'a mut dyn StudyObserver, dashboard: &'a Dashboard, id: &str) -> Self {
        let context = Context {
            kind: "study".into(),
            id: id.to_string(),
            ..Context::default()
        };
        Self {
            inner,
            dashboard,
            context,
        }
    }

    fn show(&self) {
        self.dashboard.set_context(self.context.clone());
    }
}

/// A finished run's row: its label, rate, p50, p95, error rate.
fn row(label: String, r: &RunResult, verdict: &str, note: String) -> ResultRow {
    let error_percent = if r.requests.total > 0 {
        100.0 * r.requests.failed as f64 / r.requests.total as f64
    } else {
        0.0
    };
    ResultRow {
        label,
        offered_rate: None,
        rate: r.requests.rate,
        p50_ms: r.latency_ms.p50,
        p95_ms: r.latency_ms.p95,
        error_percent,
        verdict: verdict.to_string(),
        note,
    }
}

impl StudyObserver for StudyTee<'_> {
    fn starting(&mut self, plan: &StudyPlan, remaining: usize, estimate: Estimate) {
        self.inner.starting(plan, remaining, estimate);
        self.context.name = plan.name.clone();
        self.context.total = Some(plan.repeat * plan.variants.len());
        self.show();
    }

    fn run_starting(&mut self, request: &RunRequest<'_>, remaining: Estimate) {
        self.inner.run_starting(request, remaining);
        let retry = match request.attempt {
            0 => String::new(),
            n => format!(" (re-run {n})"),
        };
        self.context.current = format!(
            "[{}/{}] {}{retry}",
            request.position, request.total, request.label
        );
        self.context.position = Some(request.position);
        self.context.total = Some(request.total);
        self.show();
    }

    fn warmup_finished(&mut self, request: &RunRequest<'_>, run: &ExecutedRun) {
        self.inner.warmup_finished(request, run);
        let label = format!("{} (warm-up)", request.label);
        let r = row(label, &run.result, "warm-up", String::new());
        self.context.results.push(r);
        self.show();
    }

    fn run_finished(
        &mut self,
        request: &RunRequest<'_>,
        run: &ExecutedRun,
        used: RunUse,
        retrying: bool,
    ) {
        self.inner.run_finished(request, run, used, retrying);
        let (verdict, note) = match used {
            RunUse::Valid => ("valid", String::new()),
            RunUse::Interrupted => ("interrupted", String::new()),
            RunUse::Retry | RunUse::Invalid => {
                ("invalid", run.result.invalid_messages().join("; "))
            }
        };
        let label = format!("[{}/{}] {}", request.position, request.total, request.label);
        self.context
            .results
            .push(row(label, &run.result, verdict, note));
        self.context.current.clear();
        self.show();
    }

    fn save(&mut self, study: &StudyResult) -> Result<(), String> {
        self.inner.save(study)
    }
}

/// Passes a capacity search's progress to `inner` and to the dashboard.
pub struct CapacityTee<'a> {
    pub inner: &'a mut dyn CapacityObserver,
    pub dashboard: &'a Dashboard,
    context: Context,
    steps_left: Option<usize>,
}

impl<'a> CapacityTee<'a> {
    pub fn new(
        inner: &'a mut dyn CapacityObserver,
        dashboard: &'a Dashboard,
        id: &str,
        name: &str,
    ) -> Self {
        let context = Context {
            kind: "capacity".into(),
            id: id.to_string(),
            name: name.to_string(),
            ..Context::default()
        };
        Self {
            inner,
            dashboard,
            context,
            steps_left: None,
        }
    }
}

impl CapacityObserver for CapacityTee<'_> {
    fn steps_ahead(&mut self, steps_left: Option<usize>) {
        self.inner.steps_ahead(steps_left);
        self.steps_left = steps_left;
    }

    fn step_starting(&mut self, number: usize, phase: Phase, rate: f64) {
        self.inner.step_starting(number, phase, rate);
        self.context.current = format!("step {number} · {} · {rate:.1}/s", phase.as_str());
        self.context.position = Some(number);
        self.context.total = self.steps_left.map(|left| number + left.saturating_sub(1));
        self.dashboard.set_context(self.context.clone());
    }

    fn step_finished(&mut self, step: &CapacityStep, run: &ExecutedRun) {
        self.inner.step_finished(step, run);
        let verdict = match (step.retried, step.passed) {
            _ if step.interrupted => "interrupted",
            (true, _) => "invalid",
            (false, true) => "pass",
            (false, false) => "fail",
        };
        let label = format!("{} {:.1}/s", step.phase, step.rate);
        let mut r = row(label, &run.result, verdict, step.reasons.join("; "));
        r.offered_rate = Some(step.rate);
        self.context.results.push(r);
        self.context.current.clear();
        self.dashboard.set_context(self.context.clone());
    }

    fn save(&mut self, result: &CapacityResult) -> Result<(), String> {
        self.inner.save(result)
    }
}
