//! `loadlab import-results FORMAT FILE...`: other load testers' result files become runs of
//! the store (`loadlab_pipeline::import_results`), with their summary derived from the record
//! as for any run; `--study` makes a study of them. This command prints what was imported.

use super::output::{print_report_paths, report_for, warn};
use crate::cli::ImportResultsArgs;
use crate::exit::{CliError, Outcome};
use loadlab_pipeline::import_results::{import_all, ImportRequest, ImportedRun, Input};
use loadlab_report::study_terminal::print_study;

pub fn execute(args: ImportResultsArgs) -> Result<Outcome, CliError> {
    let quiet = args.quiet;
    let request = ImportRequest {
        format: args.format,
        files: args.files,
        name: args.name,
        variant: args.variant,
        tool_version: args.tool_version,
        thresholds: args.thresholds,
        study: args.study,
        labels: args.labels,
        results: args.store.results,
    };
    let imported = import_all(&request, &mut warn, &mut |input, run| {
        if let Some(text) = &run.malformed {
            warn(text);
        }
        if !quiet {
            print_imported(input, run);
        } else {
            println!("{}", run.id);
        }
    })?;
    if let (Some(s), false) = (&imported.study, quiet) {
        let _ = print_study(&mut std::io::stdout().lock(), &s.study);
        println!("\nstudy {} stored: {}", s.id, s.path.display());
        if let Some(html) = report_for(&s.path) {
            print_report_paths(&mut std::io::stdout().lock(), &html);
        }
    }
    Ok(imported.outcome)
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
