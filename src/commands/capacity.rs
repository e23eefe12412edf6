//! `loadlab capacity FILE [--resume ID]`: the largest arrival rate meeting the scenario's SLO.
//! The search (bracket, bisection, confirmation, re-runs, resumption) is
//! `loadlab_orchestrate::capacity`; this command resolves flags, supplies the runs and prints.

use super::compare::{fmt_metric, parse_percent};
use super::executor::{CliExecutor, OrchestrationStop};
use super::measure::{fmt_num, open_store_for_runs};
use super::study::fmt_duration;
use crate::cli::CapacityArgs;
use crate::exit::{CliError, Outcome};
use loadlab_analysis::capacity::{
    CapacityFinding, CapacityResult, CapacitySettings, CapacityStep, Phase,
};
use loadlab_engine::Cancel;
use loadlab_metrics::result::rfc3339;
use loadlab_orchestrate::capacity::{run_capacity, CapacityObserver, CapacityPlan, CapacityStop};
use loadlab_scenario::study::StudyDocument;
use loadlab_scenario::units::{parse_duration, parse_rate};
use loadlab_scenario::ScenarioError;
use std::io::Write;
use std::time::Duration;

fn flag_rate(flag: &str, v: &Option<String>) -> Result<Option<f64>, CliError> {
    v.as_deref()
        .map(|t| parse_rate(t).map_err(|m| CliError::bad_input(format!("{flag}: {m}"))))
        .transpose()
}

fn flag_duration(flag: &str, v: &Option<String>) -> Result<Option<Duration>, CliError> {
    v.as_deref()
        .map(|t| parse_duration(t).map_err(|m| CliError::bad_input(format!("{flag}: {m}"))))
        .transpose()
}

pub fn execute(args: CapacityArgs) -> Result<Outcome, CliError> {
    let doc = StudyDocument::read(&args.file)?;
    let spec = doc.capacity()?;
    let mut base = doc.scenario()?;
    args.monitor.apply(&mut base);
    if let Some(t) = &args.target {
        base.set_target(t)
            .map_err(|m| ScenarioError::flag("--target", m, None))?;
    }
    let settings = CapacitySettings {
        start: flag_rate("--start", &args.start)?
            .or(spec.start)
            .unwrap_or(50.0),
        hold_s: flag_duration("--hold", &args.hold)?
            .or(spec.hold)
            .unwrap_or(Duration::from_secs(30))
            .as_secs_f64(),
        warmup_s: flag_duration("--warmup", &args.warmup)?
            .or(spec.warmup)
            .unwrap_or(Duration::from_secs(5))
            .as_secs_f64(),
        precision: args
            .precision
            .as_deref()
            .map(|t| parse_percent("--precision", t))
            .transpose()?
            .or(spec.precision)
            .unwrap_or(0.05),
        confirm: args.confirm.or(spec.confirm).unwrap_or(3),
        max: flag_rate("--max", &args.max)?
            .or(spec.max)
            .unwrap_or(1_000_000.0),
    };
    if settings.start <= 0.0 || settings.hold_s <= 0.0 || settings.precision <= 0.0 {
        return Err(CliError::bad_input(
            "capacity: start, hold and precision must be positive",
        ));
    }
    let max_errors = args
        .max_errors
        .as_deref()
        .map(|t| parse_percent("--max-errors", t))
        .transpose()?
        .or(spec.max_errors)
        .unwrap_or(0.01);
    let cooldown = flag_duration("--cooldown", &args.cooldown)?.unwrap_or(Duration::ZERO);
    let output = &args.output;
    let quiet = output.quiet;
    let plan = CapacityPlan {
        name: base.name.clone(),
        scenario_file: Some(doc.file().to_string()),
        base,
        settings,
        max_errors,
        cooldown,
    };
    let store = open_store_for_runs(output.results.as_deref())?;
    let (id, dir, started_at, prior) = match &args.resume {
        Some(id) => resumed(&store, id, &plan, &args.file)?,
        None => {
            let (id, dir) = store
                .begin_study(
                    "capacity",
                    &plan.name,
                    plan.scenario_file.as_deref(),
                    Some(&plan.fingerprint()),
                )
                .map_err(CliError::bad_input)?;
            store
                .set_labels(&id, &output.resolved_labels()?)
                .map_err(CliError::bad_input)?;
            (id, dir, rfc3339(std::time::SystemTime::now()), Vec::new())
        }
    };
    let path = dir.join("capacity.json");
    if !quiet {
        eprintln!(
            "capacity search {} ({}): start {}/s, {}s hold + {}s warm-up per step, precision {:.0}%, {} confirmation run(s){}\nSLO: {}\n{}",
            plan.name,
            id,
            fmt_num(plan.settings.start),
            fmt_num(plan.settings.hold_s),
            fmt_num(plan.settings.warmup_s),
            plan.settings.precision * 100.0,
            plan.settings.confirm,
            if prior.is_empty() {
                String::new()
            } else {
                format!(" — resumed after {} step(s)", prior.len())
            },
            plan.slo().join("; "),
            duration_words(&plan)
        );
    }
    let cancel = Cancel::new();
    crate::signals::watch(cancel.clone());
    let mut exec = CliExecutor::new(output, &store, &cancel, "capacity", &id);
    let mut observer = StepPrinter {
        store: &store,
        id: &id,
        path: &path,
        json: output.json.as_deref(),
        quiet,
        step_time: step_time(&plan),
        steps_left: None,
    };
    let outcome = run_capacity(
        &plan,
        &id,
        &started_at,
        prior,
        output.allow_saturated,
        &mut exec,
        &mut observer,
    );
    let result = outcome.result;
    let _ = store.finish_study(&id, &path, result.interrupted);
    let stop = outcome.stop.map(|s| match s {
        CapacityStop::Cancelled => OrchestrationStop::Cancelled,
        CapacityStop::Executor(e) => OrchestrationStop::Failed(e),
        CapacityStop::Journal(m) => OrchestrationStop::Failed(CliError::aborted(format!(
            "the capacity search could not be saved: {m}"
        ))),
        CapacityStop::Untrustworthy {
            rate,
            attempts,
            reasons,
        } => OrchestrationStop::Failed(CliError::aborted(format!(
            "capacity search {} stopped: the step at {}/s was not a valid measurement in {attempts} attempts, so no answer about the target can be given ({}); free the machine (or run the generator elsewhere) and resume with `loadlab capacity {} --resume {}`, or accept such runs with --allow-saturated",
            result.id,
            fmt_num(rate),
            reasons.join("; "),
            args.file.display(),
            result.id
        ))),
    });
    if let Some(OrchestrationStop::Failed(e)) = stop {
        return Err(e);
    }
    let report = super::output::report_for(&path);
    if !quiet {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "\n{}", finding_line(&result));
        for w in &result.warnings {
            let _ = writeln!(out, "warning: {w}");
        }
        let _ = writeln!(
            out,
            "capacity search {} stored: {}",
            result.id,
            path.display()
        );
        if result.interrupted {
            let _ = writeln!(
                out,
                "resume it with: loadlab capacity {} --resume {}",
                args.file.display(),
                result.id
            );
        }
        if let Some(r) = report {
            super::output::print_report_paths(&mut out, &r);
        }
    }
    Ok(if result.interrupted {
        Outcome::Invalid
    } else if result.max_rate.is_some() {
        Outcome::Ok
    } else {
        Outcome::ThresholdsFailed
    })
}

/// The search's finding in one line: the same statement as the report's headline.
fn finding_line(result: &CapacityResult) -> String {
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

/// The search to resume and its steps: it must be the same plan.
fn resumed(
    store: &loadlab_store::Store,
    id: &str,
    plan: &CapacityPlan,
    file: &std::path::Path,
) -> Result<(String, std::path::PathBuf, String, Vec<CapacityStep>), CliError> {
    let record = store.study(id).map_err(CliError::bad_input)?;
    if record.kind != "capacity" {
        return Err(CliError::bad_input(format!(
            "`{id}` is a study, not a capacity search: resume it with `loadlab study FILE --resume {id}`"
        )));
    }
    let dir = store.study_dir("capacity", &record.id);
    let path = dir.join("capacity.json");
    let text = std::fs::read_to_string(&path).map_err(|_| {
        CliError::bad_input(format!(
            "capacity search {} made no step before it stopped: start it again without --resume",
            record.id
        ))
    })?;
    let previous: CapacityResult = serde_json::from_str(&text).map_err(|e| {
        CliError::bad_input(format!("{}: not a capacity search: {e}", path.display()))
    })?;
    if previous.plan_hash.as_deref() != Some(plan.fingerprint().as_str()) {
        return Err(CliError::bad_input(format!(
            "{} or the search settings changed since capacity search {} was started: resume it with the same file and flags, or start a new search",
            file.display(),
            record.id
        )));
    }
    if !previous.interrupted {
        return Err(CliError::bad_input(format!(
            "capacity search {} is complete: nothing to resume",
            record.id
        )));
    }
    store
        .resume_study(&record.id)
        .map_err(CliError::bad_input)?;
    Ok((record.id, dir, previous.started_at, previous.steps))
}

/// Prints each step as it ends and saves the search after it.
struct StepPrinter<'a> {
    store: &'a loadlab_store::Store,
    id: &'a str,
    path: &'a std::path::Path,
    json: Option<&'a std::path::Path>,
    quiet: bool,
    /// One step's wall time: warm-up, hold and cooldown.
    step_time: Duration,
    steps_left: Option<usize>,
}

impl CapacityObserver for StepPrinter<'_> {
    fn steps_ahead(&mut self, steps_left: Option<usize>) {
        self.steps_left = steps_left;
    }

    fn step_starting(&mut self, number: usize, phase: Phase, rate: f64) {
        if !self.quiet {
            let ahead = match self.steps_left {
                Some(n) => format!(
                    " (~{n} step{} left, about {})",
                    if n == 1 { "" } else { "s" },
                    fmt_duration(self.step_time.mul_f64(n as f64))
                ),
                None => String::new(),
            };
            eprint!(
                "step {number:>2} [{:<7}] {:>8}/s{ahead}: ",
                phase.as_str(),
                fmt_num(rate)
            );
        }
    }

    fn step_finished(&mut self, step: &CapacityStep, _run: &loadlab_orchestrate::ExecutedRun) {
        if self.quiet {
            return;
        }
        eprintln!(
            "{} (achieved {}, p95 {}, errors {:.2}%){}{}",
            match (step.passed, step.retried) {
                (true, _) => "pass",
                (false, true) => "not counted",
                (false, false) => "FAIL",
            },
            fmt_metric("requests.rate", step.achieved_rate),
            fmt_metric("latency_ms.p95", step.p95_ms),
            step.error_rate * 100.0,
            if step.passed {
                String::new()
            } else {
                format!(": {}", step.reasons.join("; "))
            },
            if step.retried {
                " — not the target's doing, running it again"
            } else {
                ""
            },
        );
    }

    fn save(&mut self, result: &CapacityResult) -> Result<(), String> {
        let text = serde_json::to_string_pretty(result).expect("serializes") + "\n";
        loadlab_store::write_atomic(self.path, text.as_bytes())
            .map_err(|e| format!("{}: {e}", self.path.display()))?;
        let _ = self
            .store
            .update_study(self.id, self.path, result.steps.len(), 0);
        if let Some(json) = self.json {
            loadlab_store::write_atomic(json, text.as_bytes())
                .map_err(|e| format!("--json {}: {e}", json.display()))?;
        }
        Ok(())
    }
}

/// One step's wall time: warm-up, hold and the cooldown after it.
fn step_time(plan: &CapacityPlan) -> Duration {
    Duration::from_secs_f64(plan.settings.warmup_s + plan.settings.hold_s) + plan.cooldown
}

/// How long the search takes, as far as it can be known before it starts: the number of
/// steps depends on where the target fails, so the time left is counted once it has.
fn duration_words(plan: &CapacityPlan) -> String {
    let s = &plan.settings;
    let bisections = (1.0 / s.precision).log2().ceil().max(1.0) as usize;
    format!(
        "each step takes {}; how many depends on where the target fails (doubling from {}/s until a step fails, then about {bisections} bisections to {:.0}% and {} confirmations): the time left is shown once a step has failed",
        fmt_duration(step_time(plan)),
        fmt_num(s.start),
        s.precision * 100.0,
        s.confirm,
    )
}
