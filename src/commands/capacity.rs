//! `loadlab capacity FILE`: the largest arrival rate meeting the scenario's SLO — its
//! thresholds, an error-rate bound, achieved ≥ 98% of offered, and a healthy generator.
//! Geometric bracket from a start rate, bisection to a precision, confirmation runs.

use super::compare::{fmt_metric, parse_percent};
use super::run::{fmt_num, measure, watch_ctrl_c};
use crate::cli::CapacityArgs;
use crate::exit::{CliError, Outcome};
use loadlab_analysis::capacity::{
    CapacityResult, CapacitySettings, CapacityStep, Next, Search, CAPACITY_SCHEMA, MIN_ACHIEVED,
};
use loadlab_engine::Cancel;
use loadlab_metrics::RunResult;
use loadlab_scenario::study::{constant_rate, StudyDocument};
use loadlab_scenario::units::{parse_duration, parse_rate};
use loadlab_scenario::ScenarioError;
use std::io::Write;
use std::time::{Duration, Instant};

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

/// Why a step did not meet the SLO (empty: it passed).
pub fn failures(
    result: &RunResult,
    rate: f64,
    max_errors: f64,
    allow_saturated: bool,
) -> Vec<String> {
    let mut reasons = Vec::new();
    for t in &result.thresholds {
        if !t.ok {
            reasons.push(format!(
                "threshold `{}` failed{}",
                t.expr,
                t.actual
                    .map(|a| format!(" (actual {a:.3})"))
                    .unwrap_or_default()
            ));
        }
    }
    if result.requests.rate < MIN_ACHIEVED * rate {
        reasons.push(format!(
            "achieved {:.1} req/s < {:.0}% of offered {}",
            result.requests.rate,
            MIN_ACHIEVED * 100.0,
            fmt_num(rate)
        ));
    }
    let error_rate = if result.requests.total > 0 {
        result.requests.failed as f64 / result.requests.total as f64
    } else {
        1.0
    };
    if error_rate > max_errors {
        reasons.push(format!(
            "errors {:.2}% > {:.2}%",
            error_rate * 100.0,
            max_errors * 100.0
        ));
    }
    if let super::Outcome::Invalid = super::run::outcome_of(result, allow_saturated) {
        for r in &result.invalid_reasons {
            reasons.push(format!("invalid run: {r}"));
        }
        if result.interrupted {
            reasons.push("interrupted".into());
        }
    }
    reasons
}

/// Re-runs of one step that the load generator spoiled.
const MAX_RETRIES: usize = 2;

pub fn execute(args: CapacityArgs) -> Result<Outcome, CliError> {
    let doc = StudyDocument::read(&args.file)?;
    let spec = doc.capacity()?;
    let mut base = doc.scenario()?;
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
    let mut slo: Vec<String> = base.thresholds.iter().map(|t| t.expr.clone()).collect();
    slo.push(format!("errors ≤ {:.2}%", max_errors * 100.0));
    slo.push(format!(
        "achieved ≥ {:.0}% of offered rate",
        MIN_ACHIEVED * 100.0
    ));
    slo.push("load generator healthy (valid run)".into());

    let store = loadlab_store::Store::open(&loadlab_store::resolve_dir(output.results.as_deref()))
        .map_err(CliError::bad_input)?;
    let (cap_id, cap_dir) = store
        .begin_study("capacity", &base.name, Some(doc.file()))
        .map_err(CliError::bad_input)?;
    if !quiet {
        eprintln!(
            "capacity search {} ({}): start {}/s, {}s hold + {}s warm-up per step, precision {:.0}%, {} confirmation run(s)\nSLO: {}",
            base.name,
            cap_id,
            fmt_num(settings.start),
            fmt_num(settings.hold_s),
            fmt_num(settings.warmup_s),
            settings.precision * 100.0,
            settings.confirm,
            slo.join("; ")
        );
    }
    let cancel = Cancel::new();
    watch_ctrl_c(cancel.clone());
    let started_at = loadlab_metrics::result::rfc3339(std::time::SystemTime::now());
    let mut search = Search::new(&settings);
    let mut steps: Vec<CapacityStep> = Vec::new();
    let mut interrupted = false;
    let mut aborted = None;
    let mut answer = None;
    let mut retries = 0;
    let hold = Duration::from_secs_f64(settings.hold_s);
    let warmup = Duration::from_secs_f64(settings.warmup_s);
    for _ in 0..200 {
        let (rate, phase) = match search.next() {
            Next::Done(a) => {
                answer = a;
                break;
            }
            Next::Run { rate, phase } => (rate, phase),
        };
        if cancel.is_cancelled() {
            interrupted = true;
            break;
        }
        let mut scenario = base.clone();
        constant_rate(&mut scenario, rate, warmup + hold);
        scenario.warmup = warmup;
        if !quiet {
            eprint!(
                "step {:>2} [{:<7}] {:>8}/s: ",
                steps.len() + 1,
                phase.as_str(),
                fmt_num(rate)
            );
        }
        let meta = loadlab_store::NewRun {
            variant: Some(format!("rate={}", fmt_num(rate))),
            study: Some(cap_id.clone()),
            ..Default::default()
        };
        let quiet_output = crate::cli::OutputArgs {
            no_progress: true,
            ..output.clone()
        };
        let measured = match measure(&scenario, &quiet_output, &cancel, Some(&store), meta) {
            Ok(m) => m,
            Err(e) => {
                if !quiet {
                    eprintln!("error");
                }
                aborted = Some(e);
                break;
            }
        };
        let r = &measured.result;
        if r.interrupted {
            interrupted = true;
            if !quiet {
                eprintln!("interrupted");
            }
            break;
        }
        let reasons = failures(r, rate, max_errors, output.allow_saturated);
        let passed = reasons.is_empty();
        // A run spoiled by the generator (not the target) says nothing about capacity: retry it.
        let generator_only = !passed
            && reasons.iter().all(|r| r.starts_with("invalid run:"))
            && retries < MAX_RETRIES;
        if generator_only {
            retries += 1;
        } else {
            retries = 0;
        }
        let error_rate = if r.requests.total > 0 {
            r.requests.failed as f64 / r.requests.total as f64
        } else {
            0.0
        };
        if !quiet {
            eprintln!(
                "{} (achieved {}/s, p95 {}, errors {:.2}%){}{}",
                if passed { "pass" } else { "FAIL" },
                fmt_metric("requests.rate", r.requests.rate),
                fmt_metric("latency_ms.p95", r.latency_ms.p95),
                error_rate * 100.0,
                if passed {
                    String::new()
                } else {
                    format!(": {}", reasons.join("; "))
                },
                if generator_only {
                    " — generator trouble, retrying"
                } else {
                    ""
                },
            );
        }
        steps.push(CapacityStep {
            rate,
            passed,
            run: measured.id.clone().unwrap_or_default(),
            phase: phase.as_str().to_string(),
            achieved_rate: r.requests.rate,
            p95_ms: r.latency_ms.p95,
            error_rate,
            reasons,
            retried: generator_only,
        });
        if !generator_only {
            search.record(passed);
        }
        if !cooldown.is_zero() {
            let until = Instant::now() + cooldown;
            while Instant::now() < until && !cancel.is_cancelled() {
                std::thread::sleep(Duration::from_millis(50).min(until - Instant::now()));
            }
        }
    }
    let mut warnings = Vec::new();
    if answer.is_some_and(|a| a >= settings.max) {
        warnings.push(format!(
            "the search reached its maximum rate ({}/s): the capacity may be higher (raise --max)",
            fmt_num(settings.max)
        ));
    }
    if answer.is_none() && !interrupted && aborted.is_none() {
        warnings.push("no rate met the SLO, down to the lowest rate tried".into());
    }
    let result = CapacityResult {
        schema: CAPACITY_SCHEMA.into(),
        tool_version: env!("CARGO_PKG_VERSION").into(),
        id: cap_id.clone(),
        name: base.name.clone(),
        scenario_file: Some(doc.file().to_string()),
        started_at,
        finished_at: loadlab_metrics::result::rfc3339(std::time::SystemTime::now()),
        slo,
        settings,
        max_rate: if interrupted || aborted.is_some() {
            None
        } else {
            answer
        },
        bracket: [search.lo, search.hi],
        steps,
        interrupted: interrupted || aborted.is_some(),
        warnings,
    };
    let path = cap_dir.join("capacity.json");
    let text = serde_json::to_string_pretty(&result).expect("serializes") + "\n";
    super::output::store_record(
        &store,
        &cap_id,
        &path,
        &text,
        result.interrupted,
        output.json.as_deref(),
    )?;
    if let Some(e) = aborted {
        return Err(e);
    }
    let report = super::output::report_for(&path);
    if !quiet {
        let mut out = std::io::stdout().lock();
        match result.max_rate {
            Some(r) => {
                let _ = writeln!(
                    out,
                    "\ncapacity: {} req/s meets the SLO ({} confirmation run(s) passed); bracket [{}, {}]",
                    fmt_num(r),
                    result.settings.confirm,
                    result.bracket[0].map(fmt_num).unwrap_or_else(|| "-".into()),
                    result.bracket[1].map(fmt_num).unwrap_or_else(|| "-".into()),
                );
            }
            None => {
                let _ = writeln!(out, "\ncapacity: no rate met the SLO");
            }
        }
        for w in &result.warnings {
            let _ = writeln!(out, "warning: {w}");
        }
        let _ = writeln!(
            out,
            "capacity search {} stored: {}",
            result.id,
            path.display()
        );
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
