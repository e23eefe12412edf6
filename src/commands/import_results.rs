//! `loadlab import-results FORMAT FILE...`: other load testers' result files become runs of
//! the store (`loadlab_results_import` rebuilds each record from the file's requests), with
//! their summary derived from the record as for any run; `--study` makes a study of them.

use super::output::{print_report_paths, report_for, warn};
use crate::cli::ImportResultsArgs;
use crate::exit::{CliError, Outcome};
use loadlab_metrics::record::{summarize, StoredRecord};
use loadlab_metrics::RunResult;
use loadlab_results_import::{import_file, Format, ImportError, Options};
use loadlab_store::{Labels, NewRun, Store};
use std::path::{Path, PathBuf};

/// One file to import, and the variant it belongs to.
struct Input {
    file: PathBuf,
    variant: Option<String>,
}

/// An imported run: its id and summary.
pub(super) struct ImportedRun {
    pub id: String,
    pub variant: Option<String>,
    pub result: RunResult,
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
        Some(super::import_study::begin(&store, &name, &labels)?)
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
        let run = import_one(&store, format, input, &options, &labels, study.as_deref())?;
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
        let outcome = super::import_study::finish(&store, &id, &name, &runs, args.quiet)?;
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

/// Imports one file into a new run of the store.
fn import_one(
    store: &Store,
    format: Format,
    input: &Input,
    options: &Options,
    labels: &Labels,
    study: Option<&str>,
) -> Result<ImportedRun, CliError> {
    let id = store
        .begin_run(&NewRun {
            scenario: options.name.clone(),
            scenario_file: Some(input.file.display().to_string()),
            variant: input.variant.clone(),
            study: study.map(str::to_string),
            load: Some(format!("imported ({})", format.tool())),
            labels: labels.clone(),
            ..NewRun::default()
        })
        .map_err(|e| CliError::aborted(e.to_string()))?;
    let dir = store.run_dir(&id);
    let imported = match import_file(format, &input.file, &dir, options) {
        Ok(i) => i,
        Err(e) => {
            let _ = store.fail_run(&id);
            let _ = std::fs::remove_dir_all(&dir);
            return Err(match e {
                ImportError::Write { .. } => CliError::aborted(e.to_string()),
                _ => CliError::bad_input(e.to_string()),
            });
        }
    };
    if let Some(text) = imported
        .malformed
        .describe(&input.file.display().to_string())
    {
        warn(&text);
    }
    let record = StoredRecord::open(&dir).map_err(|e| CliError::aborted(e.to_string()))?;
    let mut result = summarize(&record).map_err(|e| CliError::aborted(e.to_string()))?;
    result.thresholds =
        loadlab_analysis::thresholds::evaluate_exprs(&record.meta.thresholds, &result);
    store
        .finish_run(&id, &result)
        .map_err(|e| CliError::aborted(e.to_string()))?;
    Ok(ImportedRun {
        id,
        variant: input.variant.clone(),
        result,
    })
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

/// Reports the study written beside its file.
pub(super) fn print_study_report(path: &Path) {
    if let Some(html) = report_for(path) {
        print_report_paths(&mut std::io::stdout().lock(), &html);
    }
}
