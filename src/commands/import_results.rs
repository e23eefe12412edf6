//! `loadlab import-results FORMAT FILE...`: other load testers' result files become runs of
//! the store (`loadlab_results_import` rebuilds each record from the file's requests), with
//! their summary derived from the record as for any run; `--study` makes a study of them.

use super::output::{print_report_paths, report_for, warn};
use crate::cli::ImportResultsArgs;
use crate::exit::{CliError, Outcome};
use loadlab_pipeline::import_results::{begin_study, import_one, store_study, ImportedRun};
use loadlab_report::study_terminal::print_study;
use loadlab_results_import::{Format, Options};
use std::path::{Path, PathBuf};

/// One file to import, and the variant it belongs to.
struct Input {
    file: PathBuf,
    variant: Option<String>,
}

pub fn execute(args: ImportResultsArgs) -> Result<Outcome, CliError> {
    let format = Format::parse(&args.format).ok_or_else(|| {
        let names: Vec<&str> = Format::ALL.iter().map(|f| f.as_str()).collect();
        CliError::bad_input(format!(
            "unknown result format `{}`: use one of {}",
            args.format,
            names.join(", ")
        ))
    })?;
    if let Some(why) = format.refusal() {
        return Err(CliError::bad_input(format!("{}: {why}", args.format)));
    }
    for t in &args.thresholds {
        loadlab_scenario::Threshold::parse(t)
            .map_err(|e| CliError::bad_input(format!("--threshold `{t}`: {e}")))?;
    }
    let inputs = inputs_of(&args)?;
    let name = args
        .name
        .clone()
        .unwrap_or_else(|| default_name(&inputs[0].file));
    let labels = loadlab_store::labels_from_env(&args.labels).map_err(CliError::bad_input)?;
    let store = loadlab_pipeline::store::open_for_runs(args.store.results.as_deref(), &mut warn)?;
    let study = if args.study {
        Some(begin_study(&store, &name, &labels)?)
    } else {
        None
    };
    let options = Options {
        name: name.clone(),
        tool_version: args.tool_version.clone(),
        thresholds: args.thresholds.clone(),
    };
    let mut runs = Vec::new();
    for input in &inputs {
        let source = (input.file.as_path(), input.variant.as_deref());
        let run = import_one(&store, format, source, &options, &labels, study.as_deref())?;
        if let Some(text) = &run.malformed {
            warn(text);
        }
        if !args.quiet {
            print_imported(input, &run);
        } else {
            println!("{}", run.id);
        }
        runs.push(run);
    }
    let thresholds_failed = runs
        .iter()
        .any(|r| r.result.thresholds.iter().any(|t| !t.ok));
    if let Some(id) = study {
        let (study, path) = store_study(&store, &id, &name, &runs)?;
        if !args.quiet {
            let _ = print_study(&mut std::io::stdout().lock(), &study);
            println!("\nstudy {id} stored: {}", path.display());
            if let Some(html) = report_for(&path) {
                print_report_paths(&mut std::io::stdout().lock(), &html);
            }
        }
        let outcome = loadlab_pipeline::study::outcome_of_study(&study, false);
        if outcome != Outcome::Ok {
            return Ok(outcome);
        }
    }
    Ok(if thresholds_failed {
        Outcome::ThresholdsFailed
    } else {
        Outcome::Ok
    })
}

/// The files, each with its variant (`VARIANT=FILE`, else `--variant`).
fn inputs_of(args: &ImportResultsArgs) -> Result<Vec<Input>, CliError> {
    args.files
        .iter()
        .map(|arg| {
            let (variant, file) = match arg.split_once('=') {
                Some((v, f)) if !Path::new(arg).exists() && !v.is_empty() => {
                    (Some(v.to_string()), PathBuf::from(f))
                }
                _ => (args.variant.clone(), PathBuf::from(arg)),
            };
            if !file.is_file() {
                return Err(CliError::bad_input(format!(
                    "{}: no such file (give the tool's result files; VARIANT=FILE names a variant)",
                    file.display()
                )));
            }
            Ok(Input { file, variant })
        })
        .collect()
}

/// `checkout-03.json` → `checkout-03`.
fn default_name(file: &Path) -> String {
    file.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "imported".to_string())
}

/// `imported run.json (k6, k6-json) as run r2026...: 1200 requests, p50 ... p99 ...`.
fn print_imported(input: &Input, run: &ImportedRun) {
    let r = &run.result;
    let source = r.imported.as_ref().expect("an imported run says so");
    println!(
        "imported {} ({}, {}) as run {}{}: {} requests ({} failed) over {:.1} s, latency p50 {:.2} ms, p95 {:.2} ms, p99 {:.2} ms; validity: not judged (imported)",
        input.file.display(),
        source.tool_words(),
        source.format,
        run.id,
        run.variant
            .as_deref()
            .map(|v| format!(" [variant {v}]"))
            .unwrap_or_default(),
        r.requests.total,
        r.requests.failed,
        r.duration_s,
        r.latency_ms.p50,
        r.latency_ms.p95,
        r.latency_ms.p99,
    );
    for t in &r.thresholds {
        println!(
            "  threshold {} {}",
            t.expr,
            if t.ok { "passed" } else { "FAILED" }
        );
    }
}
