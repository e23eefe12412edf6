//! `loadlab study FILE`: repetitions, variants and sweeps of one scenario, with statistics.
//!
//! This file runs the study and writes `study.json`; `summary` prints its table.

mod summary;

pub use summary::print_study;

use super::output::{print_report_paths, report_for, store_record};

use super::compare::fmt_metric;
use super::run::{fmt_num, measure, outcome_of, watch_ctrl_c};
use crate::cli::{OutputArgs, StudyArgs};
use crate::exit::{CliError, Outcome};
use loadlab_analysis::compare::{CompareOptions, ALPHA};
use loadlab_analysis::study::{
    self as st, RunSample, StudyResult, VariantStats, DEFAULT_COMPARE_METRICS,
    MIN_RUNS_FOR_COMPARISON, STUDY_SCHEMA,
};
use loadlab_engine::Cancel;
use loadlab_metrics::RunResult;
use loadlab_scenario::study::{apply_sweep, Order, StudyDocument};
use loadlab_scenario::{Scenario, ScenarioError};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

pub fn execute(args: StudyArgs) -> Result<Outcome, CliError> {
    run_study(
        &args.file,
        &args.output,
        args.target.as_deref(),
        args.repeat,
    )
    .map(|(o, _)| o)
}

/// Runs the `study:` section of a scenario file; returns the outcome and the path of the
/// `study.json` it wrote. Used by `loadlab study` and by `loadlab demo`.
#[allow(dead_code)] // called by `loadlab demo`
pub fn run_study_file(file: &Path, output: &OutputArgs) -> Result<(Outcome, PathBuf), CliError> {
    run_study(file, output, None, None)
}

struct Variant {
    name: String,
    scenario: Scenario,
    sweep_value: Option<f64>,
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

fn run_study(
    file: &Path,
    output: &OutputArgs,
    target: Option<&str>,
    repeat: Option<usize>,
) -> Result<(Outcome, PathBuf), CliError> {
    let doc = StudyDocument::read(file)?;
    let spec = doc.study()?.ok_or_else(|| {
        CliError::bad_input(format!(
            "{}: no `study:` section\n  hint: add e.g.\n    study:\n      repeat: 10\n      variants:\n        - {{ name: baseline }}\n        - {{ name: stress, load: {{ model: closed, vus: 75, duration: 1m }} }}",
            file.display()
        ))
    })?;
    let repeat = repeat.unwrap_or(spec.repeat).max(1);
    let base = doc.scenario()?;
    let mut variants: Vec<Variant> = Vec::new();
    if let Some(sweep) = &spec.sweep {
        for &value in &sweep.values {
            let mut scenario = base.clone();
            apply_sweep(&mut scenario, sweep.parameter, value).map_err(|m| {
                CliError::bad_input(format!("{}: study.sweep: {m}", file.display()))
            })?;
            variants.push(Variant {
                name: format!("{}={}", sweep.parameter.as_str(), fmt_num(value)),
                scenario,
                sweep_value: Some(value),
            });
        }
    } else if spec.variants.is_empty() {
        variants.push(Variant {
            name: base.name.clone(),
            scenario: base.clone(),
            sweep_value: None,
        });
    } else {
        for v in &spec.variants {
            variants.push(Variant {
                name: v.name.clone(),
                scenario: doc.variant_scenario(v)?,
                sweep_value: None,
            });
        }
    }
    if let Some(t) = target {
        for v in &mut variants {
            v.scenario
                .set_target(t)
                .map_err(|m| ScenarioError::flag("--target", m, None))?;
        }
    }
    let quiet = output.quiet;
    let mut warnings: Vec<String> = Vec::new();
    let comparing = variants.len() > 1;
    if comparing && repeat < MIN_RUNS_FOR_COMPARISON {
        let w = format!(
            "{repeat} runs per variant: comparisons need at least {MIN_RUNS_FOR_COMPARISON} (10 recommended), so none is made"
        );
        if !quiet {
            eprintln!("warning: {w}");
        }
        warnings.push(w);
    }

    let store = loadlab_store::Store::open(&loadlab_store::resolve_dir(output.results.as_deref()))
        .map_err(CliError::bad_input)?;
    let (study_id, study_dir) = store
        .begin_study("study", &base.name, Some(doc.file()))
        .map_err(CliError::bad_input)?;

    // The schedule: interleaved A B A B ... or sequential A A ... B B ...
    let mut schedule: Vec<(usize, usize)> = Vec::new();
    match spec.order {
        Order::Interleaved => {
            for rep in 0..repeat {
                for vi in 0..variants.len() {
                    schedule.push((vi, rep));
                }
            }
        }
        Order::Sequential => {
            for vi in 0..variants.len() {
                for rep in 0..repeat {
                    schedule.push((vi, rep));
                }
            }
        }
    }
    let planned: Vec<Duration> = variants
        .iter()
        .map(|v| v.scenario.plan().duration())
        .collect();
    let total = schedule.len();
    if !quiet {
        let all: Duration = schedule
            .iter()
            .map(|(vi, _)| planned[*vi])
            .sum::<Duration>()
            + spec.cooldown * (total.saturating_sub(1) as u32);
        eprintln!(
            "study {} ({}): {} variant{} × {repeat} run{} ({}), about {}; results in {}",
            base.name,
            study_id,
            variants.len(),
            if variants.len() == 1 { "" } else { "s" },
            if repeat == 1 { "" } else { "s" },
            spec.order.as_str(),
            fmt_duration(all),
            study_dir.display()
        );
    }

    let cancel = Cancel::new();
    watch_ctrl_c(cancel.clone());
    let started_at = loadlab_metrics::result::rfc3339(std::time::SystemTime::now());
    let clock = Instant::now();
    let mut done_planned = Duration::ZERO;
    let mut runs: Vec<Vec<(String, RunResult, bool)>> = vec![Vec::new(); variants.len()];
    let mut interrupted = false;
    let mut aborted: Option<CliError> = None;
    for (k, &(vi, rep)) in schedule.iter().enumerate() {
        if cancel.is_cancelled() {
            interrupted = true;
            break;
        }
        let v = &variants[vi];
        if !quiet {
            let remaining: Duration = schedule[k..]
                .iter()
                .map(|(i, _)| planned[*i])
                .sum::<Duration>()
                + spec.cooldown * ((total - k).saturating_sub(1) as u32);
            // Scale the plan by how long runs really took so far (start-up, drain).
            let factor = if done_planned > Duration::ZERO {
                (clock.elapsed().as_secs_f64() / done_planned.as_secs_f64()).clamp(1.0, 3.0)
            } else {
                1.0
            };
            eprintln!(
                "[{}/{total}] {} run {}/{repeat} · ETA {}",
                k + 1,
                v.name,
                rep + 1,
                fmt_duration(remaining.mul_f64(factor))
            );
        }
        let meta = loadlab_store::NewRun {
            variant: Some(v.name.clone()),
            study: Some(study_id.clone()),
            ..Default::default()
        };
        let measured = match measure(&v.scenario, output, &cancel, Some(&store), meta) {
            Ok(m) => m,
            Err(e) => {
                aborted = Some(e);
                break;
            }
        };
        done_planned += planned[vi]
            + if k + 1 < total {
                spec.cooldown
            } else {
                Duration::ZERO
            };
        let r = &measured.result;
        let invalid = matches!(outcome_of(r, output.allow_saturated), Outcome::Invalid);
        if !quiet {
            eprintln!(
                "        {} req/s · p50 {} · p95 {} · errors {:.2}%{}",
                fmt_metric("requests.rate", r.requests.rate),
                fmt_metric("latency_ms.p50", r.latency_ms.p50),
                fmt_metric("latency_ms.p95", r.latency_ms.p95),
                st::run_metrics(r)
                    .get("errors.rate")
                    .copied()
                    .unwrap_or(0.0)
                    * 100.0,
                if invalid {
                    format!(" · INVALID ({}), excluded", r.invalid_reasons.join("; "))
                } else {
                    String::new()
                }
            );
        }
        let was_interrupted = r.interrupted;
        runs[vi].push((measured.id.unwrap_or_default(), measured.result, invalid));
        if was_interrupted {
            interrupted = true;
            break;
        }
        if k + 1 < total && !spec.cooldown.is_zero() {
            let until = Instant::now() + spec.cooldown;
            while Instant::now() < until && !cancel.is_cancelled() {
                std::thread::sleep(Duration::from_millis(50).min(until - Instant::now()));
            }
        }
    }

    // Statistics.
    let stats: Vec<VariantStats> = variants
        .iter()
        .zip(&runs)
        .map(|(v, rs)| {
            let samples: Vec<RunSample<'_>> = rs
                .iter()
                .map(|(id, result, invalid)| RunSample {
                    id: id.clone(),
                    result,
                    excluded: *invalid,
                })
                .collect();
            st::summarize_variant(&v.name, &samples)
        })
        .collect();
    for v in &stats {
        if v.unstable {
            warnings.push(format!(
                "variant `{}` is unstable (CV ≥ 10% on throughput or p50 across runs): trust ranges, not single numbers",
                v.name
            ));
        }
        if !v.excluded_runs.is_empty() {
            warnings.push(format!(
                "variant `{}`: {} invalid run(s) excluded from the statistics ({})",
                v.name,
                v.excluded_runs.len(),
                v.excluded_runs.join(", ")
            ));
        }
    }
    let metrics: Vec<String> = spec.metrics.clone().unwrap_or_else(|| {
        DEFAULT_COMPARE_METRICS
            .iter()
            .map(|s| s.to_string())
            .collect()
    });
    let options = CompareOptions {
        alpha: ALPHA,
        equivalence: spec.equivalence,
    };
    let mut comparisons = Vec::new();
    let mut degradation = Vec::new();
    if comparing && spec.sweep.is_none() {
        let pairs: Vec<(usize, usize)> = if spec.compare.is_empty() {
            (1..stats.len()).map(|i| (0, i)).collect()
        } else {
            spec.compare
                .iter()
                .filter_map(|(a, b)| {
                    let ia = stats.iter().position(|v| &v.name == a)?;
                    let ib = stats.iter().position(|v| &v.name == b)?;
                    Some((ia, ib))
                })
                .collect()
        };
        for (a, b) in pairs {
            let (na, nb) = (stats[a].runs.len(), stats[b].runs.len());
            if na >= MIN_RUNS_FOR_COMPARISON && nb >= MIN_RUNS_FOR_COMPARISON {
                comparisons.extend(st::compare_variants(
                    &stats[a], &stats[b], &metrics, &options,
                ));
            } else if repeat >= MIN_RUNS_FOR_COMPARISON {
                warnings.push(format!(
                    "`{}` vs `{}` not compared: {na}+{nb} valid runs, at least {MIN_RUNS_FOR_COMPARISON} per side needed",
                    stats[a].name, stats[b].name
                ));
            }
            degradation.push(st::degradation(&stats[a], &stats[b]));
        }
    }
    let sweep = spec.sweep.as_ref().map(|s| {
        let points: Vec<(f64, &VariantStats)> = variants
            .iter()
            .zip(&stats)
            .filter(|(_, vs)| !vs.runs.is_empty())
            .filter_map(|(v, vs)| v.sweep_value.map(|x| (x, vs)))
            .collect();
        let (result, w) = st::analyze_sweep(s.parameter.as_str(), &points);
        warnings.extend(w);
        result
    });
    if interrupted || aborted.is_some() {
        warnings.push("the study was stopped before all runs were made".into());
    }

    let study = StudyResult {
        schema: STUDY_SCHEMA.to_string(),
        tool_version: env!("CARGO_PKG_VERSION").to_string(),
        id: study_id.clone(),
        name: base.name.clone(),
        scenario_file: Some(doc.file().to_string()),
        started_at,
        finished_at: loadlab_metrics::result::rfc3339(std::time::SystemTime::now()),
        repeat,
        order: spec.order.as_str().to_string(),
        cooldown_s: spec.cooldown.as_secs_f64(),
        equivalence: spec.equivalence,
        alpha: ALPHA,
        interrupted: interrupted || aborted.is_some(),
        warnings,
        variants: stats,
        comparisons,
        degradation,
        sweep,
    };
    let study_json = study_dir.join("study.json");
    let text = serde_json::to_string_pretty(&study).expect("study serializes") + "\n";
    store_record(
        &store,
        &study_id,
        &study_json,
        &text,
        study.interrupted,
        output.json.as_deref(),
    )?;
    if let Some(e) = aborted {
        if !quiet {
            eprintln!("study stopped; partial results in {}", study_json.display());
        }
        return Err(e);
    }
    let report = report_for(&study_json);
    if !quiet {
        let mut out = std::io::stdout().lock();
        let _ = print_study(&mut out, &study);
        let _ = writeln!(out, "\nstudy {} stored: {}", study.id, study_json.display());
        if let Some(r) = report {
            print_report_paths(&mut out, &r);
        }
        let _ = out.flush();
    }
    // Invalid runs are excluded (and warned about); the study itself is invalid only when a
    // variant is left without enough valid runs for what the study set out to do.
    let needed = if study.variants.len() > 1 && study.repeat >= MIN_RUNS_FOR_COMPARISON {
        MIN_RUNS_FOR_COMPARISON
    } else {
        1
    };
    let outcome = if study.interrupted || study.variants.iter().any(|v| v.runs.len() < needed) {
        Outcome::Invalid
    } else if study.variants.iter().any(|v| v.thresholds_failed > 0) {
        Outcome::ThresholdsFailed
    } else {
        Outcome::Ok
    };
    Ok((outcome, study_json))
}
