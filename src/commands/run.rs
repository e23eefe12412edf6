//! `loadlab run`: one scenario (from a file or from flags), one run, one result.

use super::measure::{check_json_path, measure, open_store_for_runs, write_json, Share};
use crate::cli::{OutputArgs, RunArgs};
use crate::exit::{CliError, Outcome};
use loadlab_engine::Cancel;
use loadlab_metrics::RunResult;
use loadlab_report::Style;
use loadlab_scenario::plan::Segment;
use loadlab_scenario::units::parse_duration;
use loadlab_scenario::{
    parse_addresses, ConnectionPolicy, HttpVersion, LoadFlags, Scenario, ScenarioError, UrlTest,
};
use std::io::{IsTerminal, Write};
use std::time::SystemTime;

pub fn execute(args: RunArgs) -> Result<Outcome, CliError> {
    let scenario = resolve_scenario(&args)?;
    let bound = args
        .fail_on_regression
        .as_deref()
        .map(|t| super::compare::parse_percent("--fail-on-regression", t))
        .transpose()?;
    let share = Share {
        segment: args
            .segment
            .as_deref()
            .map(Segment::parse)
            .transpose()
            .map_err(|m| ScenarioError::flag("--segment", m, None))?,
        start_at: args
            .start_at
            .as_deref()
            .map(parse_start_at)
            .transpose()
            .map_err(|m| ScenarioError::flag("--start-at", m, None))?,
    };
    let results = loadlab_store::resolve_dir(args.output.results.as_deref());
    if let Some(url) = super::remote_run::url_of(&results)? {
        if args.baseline.is_some() {
            return Err(CliError::bad_input(
                "--baseline compares against a study in a local run store; it cannot be used with --results URL",
            ));
        }
        let options = super::remote_run::RemoteRunOptions::parse(
            args.barrier_timeout.as_deref(),
            args.upload_every.as_deref(),
        )?;
        let (outcome, _) = super::remote_run::run(&scenario, &args.output, share, &url, options)?;
        return Ok(outcome);
    }
    if args.barrier_timeout.is_some() || args.upload_every.is_some() {
        return Err(CliError::bad_input(
            "--barrier-timeout and --upload-every apply to records in object storage: give --results s3://bucket/prefix (or gs://, az://, file://)",
        ));
    }
    let (outcome, result) = run_and_report(&scenario, &args.output, share)?;
    if let Some(path) = &args.junit {
        let cases = loadlab_report::junit::threshold_cases(&result);
        let xml = loadlab_report::junit::junit_xml(&result.name, "loadlab.run", &cases);
        super::output::write_junit(path, &xml)?;
    }
    if let Some(path) = &args.summary {
        let md = loadlab_report::gate_summary::run_markdown(&result);
        super::output::write_summary(Some(path), false, &md)?;
    }
    if let Some(baseline) = &args.baseline {
        let regressed = super::compare::run_against_study(
            &result,
            baseline,
            args.output.results.as_deref(),
            bound,
            args.output.quiet,
        )?;
        if regressed && matches!(outcome, Outcome::Ok) {
            return Ok(Outcome::ThresholdsFailed);
        }
    }
    Ok(outcome)
}

/// `2026-11-23T10:00:00Z` or `+10s` (from now).
fn parse_start_at(text: &str) -> Result<SystemTime, String> {
    let text = text.trim();
    if let Some(rel) = text.strip_prefix('+') {
        return parse_duration(rel).map(|d| SystemTime::now() + d);
    }
    loadlab_metrics::result::parse_rfc3339(text).ok_or_else(|| {
        format!("invalid start time `{text}`: expected an RFC 3339 UTC time like 2026-11-23T10:00:00Z, or +10s from now")
    })
}

/// The flags that override a scenario file: its load (`--vus`, `--rate`, `--duration`,
/// `--requests`, `--max-in-flight`) and its default `--timeout`. The request flags describe
/// a `--url` test only and are refused with a file rather than ignored.
fn apply_flags_to_file(args: &RunArgs, scenario: &mut Scenario) -> Result<(), CliError> {
    let url_only = [
        ("--method", args.method.is_some()),
        ("--header", !args.headers.is_empty()),
        ("--body", args.body.is_some()),
    ];
    if let Some((flag, _)) = url_only.iter().find(|(_, given)| *given) {
        return Err(ScenarioError::flag(
            flag,
            "describes the request of a `--url` test; a scenario file says its own requests",
            Some("edit the step in the file, or leave the flag out".into()),
        )
        .into());
    }
    if let Some(t) = &args.timeout {
        scenario.defaults.timeout =
            parse_duration(t).map_err(|m| ScenarioError::flag("--timeout", m, None))?;
    }
    LoadFlags {
        vus: args.vus,
        rate: args.rate.clone(),
        duration: args.duration.clone(),
        requests: args.requests,
        max_in_flight: args.max_in_flight,
    }
    .apply_to(scenario)?;
    Ok(())
}

/// Flags and file become one Scenario (flags override the file).
fn resolve_scenario(args: &RunArgs) -> Result<Scenario, CliError> {
    let mut scenario = match (&args.file, &args.url) {
        (Some(file), None) => {
            let mut scenario = Scenario::from_file(file)?;
            apply_flags_to_file(args, &mut scenario)?;
            scenario
        }
        (None, Some(url)) => UrlTest {
            url: url.clone(),
            method: args.method.clone(),
            headers: args.headers.clone(),
            body: args.body.clone(),
            vus: args.vus,
            rate: args.rate.clone(),
            duration: args.duration.clone(),
            requests: args.requests,
            timeout: args.timeout.clone(),
            max_in_flight: args.max_in_flight,
        }
        .into_scenario()?,
        (None, None) => {
            return Err(CliError::bad_input(
                "nothing to run: give a scenario file (`loadlab run scenario.yaml`) or a URL (`loadlab run --url http://127.0.0.1:8080/ --vus 10 --duration 30s`)",
            ))
        }
        (Some(_), Some(_)) => return Err(CliError::bad_input("give either a scenario file or --url, not both")),
    };
    if let Some(t) = &args.target {
        scenario
            .set_target(t)
            .map_err(|m| ScenarioError::flag("--target", m, None))?;
    }
    if let Some(s) = &args.source_addrs {
        scenario.source_addresses = parse_addresses(std::slice::from_ref(s))
            .map_err(|m| ScenarioError::flag("--source-addrs", m, None))?;
    }
    if let Some(c) = &args.connections {
        scenario.connections = match c.as_str() {
            "per_vu" | "per-vu" => ConnectionPolicy::PerVu,
            "shared" => ConnectionPolicy::Shared,
            "none" => ConnectionPolicy::None,
            other => {
                return Err(ScenarioError::flag(
                    "--connections",
                    format!("unknown policy `{other}`"),
                    Some("use per_vu, shared or none".into()),
                )
                .into())
            }
        };
    }
    if let Some(w) = &args.warmup {
        scenario.warmup =
            parse_duration(w).map_err(|m| ScenarioError::flag("--warmup", m, None))?;
        if let Some(problem) = scenario.warmup_problem() {
            return Err(ScenarioError::flag(
                "--warmup",
                problem,
                Some("use a shorter --warmup or a longer --duration".into()),
            )
            .into());
        }
    }
    if args.insecure {
        scenario.insecure = true;
    }
    args.monitor.apply(&mut scenario);
    if args.http2 {
        scenario.http.version = HttpVersion::Http2;
    }
    Ok(scenario)
}

/// Runs a resolved scenario as `loadlab run` does: checks that its results can be kept
/// (exit 2 before any load), runs it, prints the summary, stores the result and `--json`,
/// and says what could not be stored (exit 3).
pub fn run_and_report(
    scenario: &Scenario,
    output: &OutputArgs,
    share: Share,
) -> Result<(Outcome, RunResult), CliError> {
    if let Some(json) = &output.json {
        check_json_path(json)?;
    }
    let store = open_store_for_runs(output.results.as_deref())?;
    let cancel = Cancel::new();
    crate::signals::watch(cancel.clone());
    let measured = measure(
        scenario,
        output,
        &cancel,
        Some(&store),
        loadlab_store::NewRun::default(),
        share,
    )?;
    let result = measured.result;
    let mut storage_errors: Vec<String> = measured.storage_error.into_iter().collect();
    let mut json_written = None;
    if let Some(path) = &output.json {
        match write_json(&result, path) {
            Ok(()) => json_written = Some(path),
            Err(e) => storage_errors.push(e),
        }
    }
    if !output.quiet {
        let mut stdout = std::io::stdout().lock();
        let style = Style {
            color: std::io::stdout().is_terminal(),
        };
        let _ = loadlab_report::render_summary(&result, &mut stdout, style);
        if let (Some(id), Some(path)) = (&measured.id, &measured.path) {
            let _ = writeln!(
                stdout,
                "\n{} as run {id} ({})",
                if result.interrupted {
                    "partial result stored"
                } else {
                    "stored"
                },
                path.display()
            );
        }
        if let Some(path) = json_written {
            let _ = writeln!(stdout, "result written to {}", path.display());
        }
        let _ = stdout.flush();
    }
    for e in &storage_errors {
        eprintln!("error: {e}");
    }
    if !storage_errors.is_empty() {
        return Ok((Outcome::Invalid, result));
    }
    let outcome = outcome_of(&result, output.allow_saturated);
    Ok((outcome, result))
}

/// Only the generator's own limits are forgiven by `--allow-saturated`.
pub fn outcome_of(result: &RunResult, allow_saturated: bool) -> Outcome {
    let blocking = result
        .validity
        .reasons
        .iter()
        .filter(|r| !(allow_saturated && r.kind.is_generator_limit()));
    if result.interrupted || blocking.count() > 0 {
        Outcome::Invalid
    } else if !loadlab_analysis::thresholds::all_passed(&result.thresholds) {
        Outcome::ThresholdsFailed
    } else {
        Outcome::Ok
    }
}
