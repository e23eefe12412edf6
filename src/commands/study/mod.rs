//! `loadlab study FILE [--resume ID]`: repetitions, variants and sweeps of one scenario, with
//! statistics. The study itself (order, re-runs, resumption, statistics) is
//! `loadlab_orchestrate::study`; this command supplies the runs (the engine, the store) and
//! prints what happens. `summary` prints the final table.

mod summary;

pub use summary::print_study;

use super::compare::fmt_metric;
use super::executor::{CliExecutor, OrchestrationStop};
use super::measure::open_store_for_runs;
use super::output::{print_report_paths, report_for};
use crate::cli::{MonitorArgs, OutputArgs, StudyArgs};
use crate::exit::{CliError, Outcome};
use loadlab_analysis::study::{StudyResult, MIN_RUNS_FOR_COMPARISON};
use loadlab_engine::Cancel;
use loadlab_orchestrate::study::{
    run_study, Estimate, MadeRun, StudyIds, StudyObserver, StudyPlan, StudyStop,
};
use loadlab_orchestrate::{ExecutedRun, RunRequest, RunUse};
use loadlab_scenario::study::StudyDocument;
use loadlab_store::Store;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub fn execute(args: StudyArgs) -> Result<Outcome, CliError> {
    let (outcome, study_json) = run_study_file(
        &args.file,
        &args.output,
        args.target.as_deref(),
        args.repeat,
        args.resume.as_deref(),
        &args.monitor,
    )?;
    if args.junit.is_some() || args.summary.is_some() {
        ci_outputs(&args, &study_json)?;
    }
    Ok(outcome)
}

/// `--junit` (the thresholds of each variant's runs) and `--summary` of a finished study.
fn ci_outputs(args: &StudyArgs, study_json: &Path) -> Result<(), CliError> {
    let text = std::fs::read_to_string(study_json)
        .map_err(|e| CliError::bad_input(format!("cannot read {}: {e}", study_json.display())))?;
    let study: loadlab_analysis::study::StudyResult = serde_json::from_str(&text).map_err(|e| {
        CliError::bad_input(format!(
            "{}: not a loadlab study: {e}",
            study_json.display()
        ))
    })?;
    if let Some(path) = &args.summary {
        let md = loadlab_report::gate_summary::study_markdown(&study);
        super::output::write_summary(Some(path), false, &md)?;
    }
    if let Some(path) = &args.junit {
        let store = open_store_for_runs(args.output.results.as_deref())?;
        let mut variants = Vec::new();
        for v in &study.variants {
            let runs = v
                .runs
                .iter()
                .map(|id| store.load_run(id).map(|(_, r)| r))
                .collect::<Result<Vec<_>, _>>()
                .map_err(CliError::bad_input)?;
            variants.push((v.name.clone(), runs));
        }
        let cases = loadlab_report::junit::study_threshold_cases(&variants);
        let xml = loadlab_report::junit::junit_xml(&study.name, "loadlab.study", &cases);
        super::output::write_junit(path, &xml)?;
    }
    Ok(())
}

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

/// Runs (or resumes) the `study:` section of a scenario file; returns the outcome and the
/// path of its `study.json`. Used by `loadlab study` and by `loadlab demo`.
pub fn run_study_file(
    file: &Path,
    output: &OutputArgs,
    target: Option<&str>,
    repeat: Option<usize>,
    resume: Option<&str>,
    monitor: &MonitorArgs,
) -> Result<(Outcome, PathBuf), CliError> {
    let doc = StudyDocument::read(file)?;
    let mut plan = StudyPlan::from_document(&doc, target, repeat).map_err(CliError::bad_input)?;
    for variant in &mut plan.variants {
        monitor.apply(&mut variant.scenario);
    }
    let quiet = output.quiet;
    if !quiet && plan.variants.len() > 1 && plan.repeat < MIN_RUNS_FOR_COMPARISON {
        eprintln!(
            "warning: {} runs per variant: comparisons need at least {MIN_RUNS_FOR_COMPARISON} (10 recommended), so none is made",
            plan.repeat
        );
    }
    let store = open_store_for_runs(output.results.as_deref())?;
    let (ids, dir, prior) = match resume {
        Some(id) => resumed(&store, id, &plan, file)?,
        None => {
            let (id, dir) = store
                .begin_study(
                    "study",
                    &plan.name,
                    plan.scenario_file.as_deref(),
                    Some(&plan.fingerprint()),
                )
                .map_err(CliError::bad_input)?;
            store
                .set_labels(&id, &output.resolved_labels()?)
                .map_err(CliError::bad_input)?;
            let ids = StudyIds {
                id,
                started_at: loadlab_metrics::result::rfc3339(std::time::SystemTime::now()),
            };
            (ids, dir, Vec::new())
        }
    };
    let study_json = dir.join("study.json");
    let cancel = Cancel::new();
    crate::signals::watch(cancel.clone());
    let mut exec = CliExecutor::new(output, &store, &cancel, "study", &ids.id);
    let mut observer = Printer {
        store: &store,
        id: &ids.id,
        path: &study_json,
        json: output.json.as_deref(),
        quiet,
        dir: &dir,
        plan: &plan,
    };
    let outcome = run_study(
        &plan,
        &ids,
        prior,
        output.allow_saturated,
        &mut exec,
        &mut observer,
    );
    let study = outcome.study;
    let stopped = outcome.stop.is_some();
    let _ = store.finish_study(&ids.id, &study_json, stopped);
    let stop = outcome.stop.map(|s| match s {
        StudyStop::Cancelled => OrchestrationStop::Cancelled,
        StudyStop::Executor(e) => OrchestrationStop::Failed(e),
        StudyStop::Journal(m) => OrchestrationStop::Failed(CliError::aborted(format!(
            "the study could not be saved: {m}"
        ))),
    });
    if let Some(OrchestrationStop::Failed(e)) = stop {
        if !quiet {
            eprintln!(
                "study stopped; the runs made so far are in {} (resume with `loadlab study {} --resume {}`)",
                study_json.display(),
                file.display(),
                ids.id
            );
        }
        return Err(e);
    }
    let report = report_for(&study_json);
    if !quiet {
        let mut out = std::io::stdout().lock();
        let _ = print_study(&mut out, &study);
        let _ = writeln!(
            out,
            "\nstudy {} {}: {}",
            study.id,
            if stopped {
                "interrupted, partial result stored"
            } else {
                "stored"
            },
            study_json.display()
        );
        if stopped {
            let _ = writeln!(
                out,
                "resume it with: loadlab study {} --resume {}",
                file.display(),
                study.id
            );
        }
        if let Some(r) = report {
            print_report_paths(&mut out, &r);
        }
        let _ = out.flush();
    }
    Ok((outcome_of_study(&study, stopped), study_json))
}

/// Invalid runs are re-run and excluded; the study itself is invalid only when it stopped
/// early or a variant was left without enough valid runs for what it set out to do.
fn outcome_of_study(study: &StudyResult, stopped: bool) -> Outcome {
    let needed = if study.variants.len() > 1 && study.repeat >= MIN_RUNS_FOR_COMPARISON {
        MIN_RUNS_FOR_COMPARISON
    } else {
        1
    };
    if stopped || study.variants.iter().any(|v| v.runs.len() < needed) {
        Outcome::Invalid
    } else if study.variants.iter().any(|v| v.thresholds_failed > 0) {
        Outcome::ThresholdsFailed
    } else {
        Outcome::Ok
    }
}

/// The study to resume and the runs it made: it must be the same plan.
fn resumed(
    store: &Store,
    id: &str,
    plan: &StudyPlan,
    file: &Path,
) -> Result<(StudyIds, PathBuf, Vec<MadeRun>), CliError> {
    let record = store.study(id).map_err(CliError::bad_input)?;
    if record.kind != "study" {
        return Err(CliError::bad_input(format!(
            "`{id}` is a {} search, not a study: resume it with `loadlab capacity FILE --resume {id}`",
            record.kind
        )));
    }
    if record.status == "running" {
        return Err(CliError::bad_input(format!(
            "study {} is still running (process alive): it cannot be resumed twice",
            record.id
        )));
    }
    let dir = store.study_dir("study", &record.id);
    let path = dir.join("study.json");
    let text = std::fs::read_to_string(&path).map_err(|_| {
        CliError::bad_input(format!(
            "study {} made no run before it stopped: start it again without --resume",
            record.id
        ))
    })?;
    let previous: StudyResult = serde_json::from_str(&text)
        .map_err(|e| CliError::bad_input(format!("{}: not a study: {e}", path.display())))?;
    let now = plan.fingerprint();
    if previous.plan_hash.as_deref() != Some(now.as_str()) {
        return Err(CliError::bad_input(format!(
            "{} changed since study {} was started (its variants, repetitions or order are not the same): a resumed study must run the same plan; start a new study instead",
            file.display(),
            record.id
        )));
    }
    if !previous.interrupted {
        return Err(CliError::bad_input(format!(
            "study {} is complete: nothing to resume (`loadlab report {}` shows it)",
            record.id, record.id
        )));
    }
    let mut prior = Vec::new();
    for entry in previous.run_log {
        let (_, result) = store.load_run(&entry.run).map_err(|e| {
            CliError::bad_input(format!(
                "study {}: its run {} cannot be read: {e}",
                record.id, entry.run
            ))
        })?;
        prior.push(MadeRun { entry, result });
    }
    store
        .resume_study(&record.id)
        .map_err(CliError::bad_input)?;
    Ok((
        StudyIds {
            id: record.id,
            started_at: previous.started_at,
        },
        dir,
        prior,
    ))
}

/// Prints the study's progress and saves it after every run.
struct Printer<'a> {
    store: &'a Store,
    id: &'a str,
    path: &'a Path,
    json: Option<&'a Path>,
    quiet: bool,
    dir: &'a Path,
    plan: &'a StudyPlan,
}

impl StudyObserver for Printer<'_> {
    fn starting(&mut self, plan: &StudyPlan, remaining: usize, estimate: Estimate) {
        if self.quiet {
            return;
        }
        let total = plan.repeat * plan.variants.len();
        eprintln!(
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
        if self.quiet {
            return;
        }
        eprintln!(
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
        if self.quiet {
            return;
        }
        let r = &run.result;
        eprintln!(
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
        if self.quiet {
            return;
        }
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
        };
        eprintln!(
            "        {} · p50 {} · p95 {} · errors {error_rate:.2}%{note}",
            fmt_metric("requests.rate", r.requests.rate),
            fmt_metric("latency_ms.p50", r.latency_ms.p50),
            fmt_metric("latency_ms.p95", r.latency_ms.p95),
        );
    }

    fn save(&mut self, study: &StudyResult) -> Result<(), String> {
        let text = serde_json::to_string_pretty(study).expect("a study serializes") + "\n";
        loadlab_store::write_atomic(self.path, text.as_bytes())
            .map_err(|e| format!("{}: {e}", self.path.display()))?;
        let done = study.run_log.iter().filter(|e| e.used).count();
        let _ = self.store.update_study(
            self.id,
            self.path,
            done,
            self.plan.repeat * self.plan.variants.len(),
        );
        if let Some(json) = self.json {
            loadlab_store::write_atomic(json, text.as_bytes())
                .map_err(|e| format!("--json {}: {e}", json.display()))?;
        }
        Ok(())
    }
}
