//! `loadlab run`: one scenario (from a file or from flags), one run, one result.

use crate::cli::{OutputArgs, RunArgs};
use crate::exit::{CliError, Outcome};
use loadlab_engine::{Cancel, RunOptions};
use loadlab_metrics::RunResult;
use loadlab_report::Style;
use loadlab_scenario::{
    check_target, parse_addresses, ConnectionPolicy, Scenario, ScenarioError, UrlTest,
};
use std::io::{IsTerminal, Write};

/// Output and health settings shared by every command that runs load.
pub struct RunSettings {
    pub output: OutputArgs,
}

pub fn execute(args: RunArgs) -> Result<Outcome, CliError> {
    let scenario = resolve_scenario(&args)?;
    finish_run(
        &scenario,
        &RunSettings {
            output: args.output.clone(),
        },
    )
}

/// Flags and file become one Scenario (flags override the file).
fn resolve_scenario(args: &RunArgs) -> Result<Scenario, CliError> {
    let mut scenario = match (&args.file, &args.url) {
        (Some(file), None) => Scenario::from_file(file)?,
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
        scenario.target =
            Some(check_target(t).map_err(|m| ScenarioError::flag("--target", m, None))?);
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
    if args.insecure {
        scenario.insecure = true;
    }
    Ok(scenario)
}

/// Runs a resolved scenario: progress, thresholds, JSON, summary, exit outcome.
pub fn finish_run(scenario: &Scenario, settings: &RunSettings) -> Result<Outcome, CliError> {
    let output = &settings.output;
    let cancel = Cancel::new();
    watch_ctrl_c(cancel.clone());
    let planned = scenario.plan().duration();
    let mut options = RunOptions {
        threads: output.threads,
        ..RunOptions::default()
    };
    let bar = match crate::progress::reporter(output.quiet, output.no_progress, planned) {
        Some((bar, callback)) => {
            options.progress = Some(callback);
            Some(bar)
        }
        None => None,
    };
    let run = loadlab_engine::run(scenario, options, &cancel);
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let mut result = run?.result;
    result.thresholds = loadlab_analysis::thresholds::evaluate(&scenario.thresholds, &result);
    if let Some(path) = &output.json {
        write_json(&result, path)?;
    }
    if !output.quiet {
        let mut stdout = std::io::stdout().lock();
        let style = Style {
            color: std::io::stdout().is_terminal(),
        };
        let _ = loadlab_report::render_summary(&result, &mut stdout, style);
        let _ = stdout.flush();
    }
    Ok(outcome_of(&result, output.allow_saturated))
}

fn write_json(result: &RunResult, path: &std::path::Path) -> Result<(), CliError> {
    let mut file = std::fs::File::create(path).map_err(|e| {
        CliError::bad_input(format!("--json: cannot write {}: {e}", path.display()))
    })?;
    loadlab_report::render_json(result, &mut file)
        .map_err(|e| CliError::bad_input(format!("--json: cannot write {}: {e}", path.display())))
}

/// Saturation is the only invalidity `--allow-saturated` forgives.
fn outcome_of(result: &RunResult, allow_saturated: bool) -> Outcome {
    let blocking = result.invalid_reasons.iter().filter(|r| {
        let saturation = r.starts_with("the load generator was saturated")
            || r.starts_with("the scheduler started arrivals late");
        !(allow_saturated && saturation)
    });
    if result.interrupted || blocking.count() > 0 {
        Outcome::Invalid
    } else if !loadlab_analysis::thresholds::all_passed(&result.thresholds) {
        Outcome::ThresholdsFailed
    } else {
        Outcome::Ok
    }
}

/// Ctrl-C stops the run gracefully; the partial result is still summarised and written.
fn watch_ctrl_c(cancel: Cancel) {
    let _ = std::thread::Builder::new().name("loadlab-signals".into()).spawn(move || {
        let Ok(rt) = tokio::runtime::Builder::new_current_thread().enable_all().build() else { return };
        rt.block_on(async {
            if tokio::signal::ctrl_c().await.is_ok() {
                eprintln!("\ninterrupted: stopping and writing the partial result (Ctrl-C again to quit at once)");
                cancel.cancel();
                if tokio::signal::ctrl_c().await.is_ok() {
                    std::process::exit(crate::exit::ABORTED);
                }
            }
        });
    });
}
