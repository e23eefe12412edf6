//! `loadlab run`: one scenario (from a file or from flags), one run, one result.

use super::output::{print_errors, print_outputs, print_run, say_unless, warn, Printed};
use crate::cli::RunArgs;
use crate::exit::{CliError, Outcome};
use loadlab_metrics::RunResult;
use loadlab_pipeline::live_session::{Live, Steerable};
use loadlab_pipeline::measure::Share;
use loadlab_pipeline::resolve::{RunFlags, UrlRequest};
use loadlab_pipeline::session::Settings;
use loadlab_pipeline::single_run::{
    run_local, run_remote, Destination, RemoteRunFlags, RunContext,
};
use loadlab_report::progress_terminal::retry_line;
use loadlab_scenario::{LoadFlags, Scenario};
use std::io::Write;

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
    let settings = super::session::settings(&args.output)?;
    for (flag, example, path) in [
        ("--junit", "junit.xml", &args.junit),
        ("--summary", "summary.md", &args.summary),
    ] {
        if let Some(path) = path {
            loadlab_pipeline::measure::check_output_path(flag, example, path)?;
        }
    }
    let remote = RemoteRunFlags {
        barrier_timeout: args.barrier_timeout,
        upload_every: args.upload_every,
    };
    let context = RunContext {
        share,
        taps: live.taps(),
        steering: live.steering(),
        retry_invalid: args.retry_invalid,
    };
    let destination = Destination::of(&settings, remote, args.baseline.is_some())?;
    if let Some(baseline) = &args.baseline {
        loadlab_pipeline::compare::check_baseline(
            baseline,
            settings.results.as_deref(),
            &mut |_| {},
        )?;
    }
    if let Destination::Remote(url, options) = destination {
        let mut say = say_unless(settings.quiet);
        let (run, outputs) = run_remote(scenario, &settings, context, (&url, options), &mut say)?;
        let mut errors = run.errors.clone();
        if !settings.quiet {
            match print_run(&run.result, Some(run.stored_line())) {
                Ok(Printed::Whole) => print_outputs(&outputs),
                Ok(Printed::ReaderGone) => {}
                Err(e) => errors.push(e),
            }
        }
        return Ok(outcome(&run.result, &errors, &settings));
    }
    let (outcome, result) = run_and_report(scenario, &settings, context)?;
    live.run_judged(&result, settings.allow_saturated);
    loadlab_pipeline::reports::write_run_ci_outputs(
        &result,
        args.junit.as_deref(),
        args.summary.as_deref(),
    )?;
    if let Some(baseline) = &args.baseline {
        let regressed = super::compare::run_against_study(
            &result,
            baseline,
            settings.results.as_deref(),
            bound,
            settings.quiet,
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
            batch_window: args.batch_window,
        },
        timeout: args.timeout,
        target: args.target.clone(),
        source_addrs: args.source_addrs.clone(),
        connections: args.connections.clone(),
        warmup: args.warmup,
        insecure: args.insecure,
        http2: args.http2,
        http2_client: args.http2_client,
    };
    let mut scenario = flags.resolve()?;
    args.monitor.apply(&mut scenario);
    Ok(scenario)
}

/// Runs a resolved scenario as `loadlab run` does (`loadlab_pipeline::single_run::run_local`)
/// and prints its summary, where it was stored, and what could not be (exit 3).
pub fn run_and_report(
    scenario: &Scenario,
    settings: &Settings,
    context: RunContext<'_>,
) -> Result<(Outcome, RunResult), CliError> {
    let retries = context.retry_invalid;
    let run = run_local(
        scenario,
        settings,
        context,
        &mut warn,
        &mut |run, n, settle| {
            eprintln!("{}", retry_line(run, n, retries, settle));
        },
    )?;
    let mut errors = run.errors.clone();
    if !settings.quiet {
        match print_run(&run.result, run.stored_line()) {
            Ok(Printed::ReaderGone) => {}
            Ok(Printed::Whole) => {
                print_outputs(&run.outputs);
                if let Some(path) = &run.json {
                    // As print_outputs: a closed stdout here must not decide the exit status.
                    let _ = writeln!(std::io::stdout(), "result written to {}", path.display());
                }
            }
            Err(e) => errors.push(e),
        }
    }
    Ok((outcome(&run.result, &errors, settings), run.result))
}

/// Invalid when anything could not be kept (said on stderr), else the run's own outcome, said
/// why when `--quiet` kept the summary (which says why) off the terminal.
fn outcome(result: &RunResult, errors: &[String], settings: &Settings) -> Outcome {
    if print_errors(errors) {
        return Outcome::Invalid;
    }
    if settings.quiet {
        for why in loadlab_pipeline::why_not_ok(result, settings.allow_saturated) {
            eprintln!("loadlab: {why}");
        }
    }
    loadlab_pipeline::outcome_of(result, settings.allow_saturated)
}
