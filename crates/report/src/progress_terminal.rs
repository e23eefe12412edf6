//! Progress as lines of text, for a terminal or a log: the observers of a study and of a
//! capacity search that say what each run or step is and what it found, and the words for
//! durations and estimates they use.

use crate::verdict_words::format_value;
use crate::words::plain_number as fmt_num;
use loadlab_analysis::capacity::{CapacityFinding, CapacityResult, CapacityStep, Phase};
use loadlab_metrics::MetricId;
use loadlab_orchestrate::capacity::{CapacityObserver, CapacityPlan};
use loadlab_orchestrate::study::{Estimate, StudyObserver, StudyPlan};
use loadlab_orchestrate::{ExecutedRun, RunRequest, RunUse};
use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

/// `1m05s`, `42s`.
pub fn fmt_duration(d: Duration) -> String {
    let s = d.as_secs_f64().round() as u64;
    if s >= 3600 {
        format!("{}h{:02}m", s / 3600, (s % 3600) / 60)
    } else if s >= 60 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{s}s")
    }
}

/// A value of a metric named as in the run JSON (`requests.rate`, `latency_ms.p95`) with its
/// unit: `612.00ms`, `27.6/s`, `0.50%`.
pub fn fmt_metric(metric: &str, v: f64) -> String {
    match metric.parse::<MetricId>() {
        Ok(m) => format_value(m.unit(), v),
        Err(_) => format!("{v:.2}"),
    }
}

/// `about 1m50s`, or `at most 3h00m` when some runs end when their work is done and none of
/// them has been measured yet (`why` adds the reason, for the line that starts the study).
fn fmt_estimate(e: Estimate, why: bool) -> String {
    let d = fmt_duration(Duration::from_secs_f64(e.seconds.max(0.0)));
    if !e.upper_bound && e.seconds < 1.0 {
        return "under a second".to_string();
    }
    match (e.upper_bound, why) {
        (true, true) => format!(
            "at most {d} (runs that end when their work is done count at their max_duration until one is measured)"
        ),
        (true, false) => format!("at most {d}"),
        (false, _) => format!("about {d}"),
    }
}

/// A study's progress in lines of text: its plan, each run as it starts and ends.
pub struct StudyLines<W: Write> {
    pub out: W,
    /// The study's id and directory, named in the first line.
    pub id: String,
    pub dir: PathBuf,
}

impl<W: Write> StudyObserver for StudyLines<W> {
    fn starting(&mut self, plan: &StudyPlan, remaining: usize, estimate: Estimate) {
        let total = plan.repeat * plan.variants.len();
        let _ = writeln!(
            self.out,
            "study {} ({}): {} variant{} × {} run{} ({}), {} to run{}, {}; results in {}",
            plan.name,
            self.id,
            plan.variants.len(),
            if plan.variants.len() == 1 { "" } else { "s" },
            plan.repeat,
            if plan.repeat == 1 { "" } else { "s" },
            plan.order.as_str(),
            remaining,
            if remaining < total {
                format!(" (resumed: {} done)", total - remaining)
            } else {
                String::new()
            },
            fmt_estimate(estimate, true),
            self.dir.display()
        );
    }

    fn run_starting(&mut self, request: &RunRequest<'_>, remaining: Estimate) {
        let _ = writeln!(
            self.out,
            "[{}/{}] {}{} · {} left",
            request.position,
            request.total,
            request.label,
            if request.attempt > 0 {
                format!(" (re-run {} of an invalid run)", request.attempt)
            } else {
                String::new()
            },
            fmt_estimate(remaining, false)
        );
    }

    fn warmup_finished(&mut self, request: &RunRequest<'_>, run: &ExecutedRun) {
        let r = &run.result;
        let _ = writeln!(
            self.out,
            "[warm-up {}/{}] {}: {} · p95 {} · not in the statistics",
            request.position,
            request.total,
            request.label,
            fmt_metric("requests.rate", r.requests.rate),
            fmt_metric("latency_ms.p95", r.latency_ms.p95),
        );
    }

    fn run_finished(
        &mut self,
        _: &RunRequest<'_>,
        run: &ExecutedRun,
        used: RunUse,
        retrying: bool,
    ) {
        let r = &run.result;
        let error_rate = if r.requests.total > 0 {
            100.0 * r.requests.failed as f64 / r.requests.total as f64
        } else {
            0.0
        };
        let note = match used {
            RunUse::Valid => String::new(),
            RunUse::Interrupted => " · interrupted".into(),
            RunUse::Retry => format!(
                " · INVALID ({}){}",
                r.invalid_messages().join("; "),
                if retrying {
                    ", running it again"
                } else {
                    ", no re-runs left: excluded"
                }
            ),
            RunUse::Invalid => format!(
                " · INVALID ({}), a re-run would end the same way: excluded",
                r.invalid_messages().join("; ")
            ),
        };
        let _ = writeln!(
            self.out,
            "        {} · p50 {} · p95 {} · errors {error_rate:.2}%{note}",
            fmt_metric("requests.rate", r.requests.rate),
            fmt_metric("latency_ms.p50", r.latency_ms.p50),
            fmt_metric("latency_ms.p95", r.latency_ms.p95),
        );
    }
}

/// A capacity search's progress in lines of text: each step as it starts and ends.
pub struct StepLines<W: Write> {
    out: W,
    /// One step's wall time: warm-up, hold and cooldown.
    step_time: Duration,
    steps_left: Option<usize>,
}

impl<W: Write> StepLines<W> {
    pub fn new(out: W, plan: &CapacityPlan) -> Self {
        Self {
            out,
            step_time: plan.step_time(),
            steps_left: None,
        }
    }
}

impl<W: Write> CapacityObserver for StepLines<W> {
    fn steps_ahead(&mut self, steps_left: Option<usize>) {
        self.steps_left = steps_left;
    }

    fn step_starting(&mut self, number: usize, phase: Phase, rate: f64) {
        let ahead = match self.steps_left {
            Some(n) => format!(
                " (~{n} step{} left, about {})",
                if n == 1 { "" } else { "s" },
                fmt_duration(self.step_time.mul_f64(n as f64))
            ),
            None => String::new(),
        };
        // The step's result ends this line when it comes.
        let _ = write!(
            self.out,
            "step {number:>2} [{:<7}] {:>8}/s{ahead}: ",
            phase.as_str(),
            fmt_num(rate)
        );
        let _ = self.out.flush();
    }

    fn step_finished(&mut self, step: &CapacityStep, _run: &ExecutedRun) {
        let _ = writeln!(
            self.out,
            "{} (achieved {}, p95 {}, errors {:.2}%){}{}",
            match (step.passed, step.retried, step.interrupted) {
                (_, _, true) => "interrupted",
                (true, _, _) => "pass",
                (false, true, _) => "not counted",
                (false, false, _) => "FAIL",
            },
            fmt_metric("requests.rate", step.achieved_rate),
            fmt_metric("latency_ms.p95", step.p95_ms),
            step.error_rate * 100.0,
            if step.passed || step.interrupted {
                String::new()
            } else {
                format!(": {}", step.reasons.join("; "))
            },
            if step.retried && !step.interrupted {
                " — not the target's doing, running it again"
            } else {
                ""
            },
        );
    }
}

/// The line that starts a search: its settings, SLO and how long it takes.
pub fn starting_words(plan: &CapacityPlan, id: &str, steps_done: usize) -> String {
    format!(
        "capacity search {} ({}): start {}/s, {}s hold + {}s warm-up per step, precision {:.0}%, {} confirmation run(s){}\nSLO: {}\n{}",
        plan.name,
        id,
        fmt_num(plan.settings.start),
        fmt_num(plan.settings.hold_s),
        fmt_num(plan.settings.warmup_s),
        plan.settings.precision * 100.0,
        plan.settings.confirm,
        if steps_done == 0 {
            String::new()
        } else {
            format!(" — resumed after {steps_done} step(s)")
        },
        plan.slo().join("; "),
        duration_words(plan)
    )
}

/// How long the search takes, as far as it can be known before it starts: the number of
/// steps depends on where the target fails, so the time left is counted once it has.
pub fn duration_words(plan: &CapacityPlan) -> String {
    let s = &plan.settings;
    let bisections = plan.bisections();
    format!(
        "each step takes {}; how many depends on where the target fails (doubling from {}/s until a step fails, then about {bisections} bisections to {:.0}% and {} confirmations): the time left is shown once a step has failed",
        fmt_duration(plan.step_time()),
        fmt_num(s.start),
        s.precision * 100.0,
        s.confirm,
    )
}

/// The search's finding in one line: the same statement as the report's headline.
pub fn finding_line(result: &CapacityResult) -> String {
    match result.finding() {
        CapacityFinding::Capacity {
            rate,
            confirmed_by,
            ..
        } => format!(
            "capacity: {} req/s meets the SLO ({confirmed_by} confirmation run(s) passed); bracket [{}, {}]",
            fmt_num(rate),
            result.bracket[0].map(fmt_num).unwrap_or_else(|| "-".into()),
            result.bracket[1].map(fmt_num).unwrap_or_else(|| "-".into()),
        ),
        CapacityFinding::AtLeast { rate, steps } => format!(
            "capacity: interrupted after {steps} step(s); highest rate that met the SLO so far: {} req/s, so the capacity is at least that (not confirmed)",
            fmt_num(rate)
        ),
        CapacityFinding::NothingYet { steps } => format!(
            "capacity: interrupted after {steps} step(s), before any rate met the SLO: the capacity is not known yet"
        ),
        CapacityFinding::NoneMet => "capacity: no rate met the SLO".into(),
    }
}

/// Said when an invalid run is made again (even when quiet: an attempt thrown away must not go
/// unexplained): its reasons with their figures, the pause first, and which re-run of how many.
pub fn retry_line(
    run: &loadlab_metrics::RunResult,
    attempt: usize,
    retries: usize,
    settle: Duration,
) -> String {
    let why: Vec<String> = run
        .validity
        .reasons
        .iter()
        .map(|r| format!("{}: {}", r.kind.as_str(), r.message))
        .collect();
    let when = if settle.is_zero() {
        String::new()
    } else {
        format!(" in {} s, the host given time to settle", settle.as_secs())
    };
    format!(
        "loadlab: the run was invalid ({}); running it again{when} ({attempt} of {retries}, --retry-invalid)",
        why.join("; ")
    )
}
