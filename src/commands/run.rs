//! `loadlab run`: one scenario (from a file or from flags), one run, one result.

use super::output::{print_errors, print_run, warn};
use super::session::Session;
use crate::cli::{OutputArgs, RunArgs};
use crate::exit::{CliError, Outcome};
use loadlab_engine::Steering;
use loadlab_live::LiveTap;
use loadlab_metrics::RunResult;
use loadlab_pipeline::live_session::{Live, Steerable};
use loadlab_pipeline::measure::{
    check_json_path, measure_retrying, write_json, Retry, RunSpec, Share,
};
use loadlab_pipeline::resolve::{RunFlags, UrlRequest};
use loadlab_scenario::{LoadFlags, Scenario};
use loadlab_store::NewRun;
use std::sync::Arc;

pub fn execute(args: RunArgs) -> Result<Outcome, CliError> {
    let scenario = resolve_scenario(&args)?;
    let bound = args.fail_on_regression;
    let share = Share::from_flags(args.segment.as_deref(), args.start_at.as_deref())?;
    let live = super::live::start(&args.live, args.output.quiet, Steerable::Yes)?;
    let outcome = execute_with(&args, &scenario, bound, share, &live);
    super::live::finish(&live, &outcome);
    outcome
}

fn execute_with(
    args: &RunArgs,
    scenario: &Scenario,
    bound: Option<f64>,
    share: Share,
    live: &Live,
) -> Result<Outcome, CliError> {
    let results = loadlab_store::resolve_dir(args.output.results.as_deref());
    if let Some(url) = loadlab_pipeline::remote::url_of(&results)? {
        if args.baseline.is_some() {
            return Err(CliError::bad_input(
                "--baseline compares against a study in a local run store; it cannot be used with --results URL",
            ));
        }
        return super::remote_run::run(scenario, args, share, &url, live.taps(), live.steering());
    }
    if args.barrier_timeout.is_some() || args.upload_every.is_some() {
        return Err(CliError::bad_input(
            "--barrier-timeout and --upload-every apply to records in object storage: give --results s3://bucket/prefix (or gs://, az://, file://)",
        ));
    }
    let (outcome, result) = run_and_report(
        scenario,
        &args.output,
        share,
        live.taps(),
        args.retry_invalid,
        live.steering(),
    )?;
    live.run_judged(&result, args.output.allow_saturated);
    loadlab_pipeline::reports::write_run_ci_outputs(
        &result,
        args.junit.as_deref(),
        args.summary.as_deref(),
    )?;
    if let Some(baseline) = &args.baseline {
        let regressed = super::compare::run_against_study(
            &result,
            baseline,
            args.output.results.as_deref(),
            bound,
            args.output.quiet,
        )?;
        if regressed && outcome == Outcome::Ok {
            return Ok(Outcome::ThresholdsFailed);
        }
    }
    Ok(outcome)
}

/// Flags and file become one scenario (flags override the file).
fn resolve_scenario(args: &RunArgs) -> Result<Scenario, CliError> {
    let flags = RunFlags {
        file: args.file.clone(),
        variant: args.variant.clone(),
        request: UrlRequest {
            url: args.url.clone(),
            method: args.method.clone(),
            headers: args.headers.clone(),
            body: args.body.clone(),
        },
        load: LoadFlags {
            vus: args.vus,
            rate: args.rate,
            duration: args.duration,
            requests: args.requests,
            max_in_flight: args.max_in_flight,
            pace: args.pace,
        },
        timeout: args.timeout,
        target: args.target.clone(),
        source_addrs: args.source_addrs.clone(),
        connections: args.connections.clone(),
        warmup: args.warmup,
        insecure: args.insecure,
        http2: args.http2,
    };
    let mut scenario = flags.resolve()?;
    args.monitor.apply(&mut scenario);
    Ok(scenario)
}

/// Runs a resolved scenario as `loadlab run` does: checks that its results can be kept
/// (exit 2 before any load), runs it (again, up to `retry_invalid` times, while it is
/// invalid), prints the summary, stores the result and `--json`, and says what could not be
/// stored (exit 3).
pub fn run_and_report(
    scenario: &Scenario,
    output: &OutputArgs,
    share: Share,
    taps: Vec<Arc<dyn LiveTap>>,
    retry_invalid: usize,
    steering: Option<&Steering>,
) -> Result<(Outcome, RunResult), CliError> {
    if let Some(json) = &output.json {
        check_json_path(json)?;
    }
    let store = loadlab_pipeline::store::open_for_runs(output.results.as_deref(), &mut warn)?;
    let Session {
        cancel,
        outputs,
        mut view,
    } = Session::open(output, &scenario.outputs, taps, true)?;
    let spec = RunSpec {
        scenario,
        share,
        threads: output.threads,
        cancel: &cancel,
        steering,
    };
    let meta = NewRun {
        labels: output.resolved_labels()?,
        ..NewRun::default()
    };
    let retry = Retry {
        retries: retry_invalid,
        allow_saturated: output.allow_saturated,
    };
    let measured = measure_retrying(
        spec,
        Some(&store),
        meta,
        &mut view,
        retry,
        &mut |run, n, settle| {
            // Said even when quiet, with its figures: an attempt thrown away must not go
            // unexplained.
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
            eprintln!(
                "loadlab: the run was invalid ({}); running it again{when} ({n} of {retry_invalid}, --retry-invalid)",
                why.join("; ")
            );
        },
    )?;
    let result = measured.result;
    let mut errors: Vec<String> = measured.storage_error.into_iter().collect();
    let json = output
        .json
        .as_deref()
        .filter(|path| match write_json(&result, path) {
            Ok(()) => true,
            Err(e) => {
                errors.push(e);
                false
            }
        });
    if !output.quiet {
        let stored = measured.id.zip(measured.path).map(|(id, path)| {
            let what = if result.interrupted {
                "partial result stored"
            } else {
                "stored"
            };
            format!("{what} as run {id} ({})", path.display())
        });
        print_run(&result, stored);
        super::output::print_outputs(&outputs);
        if let Some(path) = json {
            println!("result written to {}", path.display());
        }
    }
    if print_errors(&errors) {
        return Ok((Outcome::Invalid, result));
    }
    Ok((super::output::outcome_saying_why(&result, output), result))
}
