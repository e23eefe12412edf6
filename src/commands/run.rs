//! `loadlab run`: one scenario (from a file or from flags), one run, one result.

use crate::cli::{OutputArgs, RunArgs};
use crate::exit::{CliError, Outcome};
use loadlab_engine::{Cancel, RunOptions};
use loadlab_metrics::RunResult;
use loadlab_report::Style;
use loadlab_scenario::{parse_addresses, ConnectionPolicy, Scenario, ScenarioError, UrlTest};
use std::io::{IsTerminal, Write};

/// Output and health settings shared by every command that runs load.
pub struct RunSettings {
    pub output: OutputArgs,
}

pub fn execute(args: RunArgs) -> Result<Outcome, CliError> {
    let scenario = resolve_scenario(&args)?;
    let bound = args
        .fail_on_regression
        .as_deref()
        .map(|t| super::compare::parse_percent("--fail-on-regression", t))
        .transpose()?;
    let (outcome, result) = finish_run_inner(
        &scenario,
        &RunSettings {
            output: args.output.clone(),
        },
    )?;
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
    if args.insecure {
        scenario.insecure = true;
    }
    Ok(scenario)
}

/// Runs a resolved scenario: progress, thresholds, store, JSON, summary, exit outcome.
pub fn finish_run(scenario: &Scenario, settings: &RunSettings) -> Result<Outcome, CliError> {
    finish_run_inner(scenario, settings).map(|(outcome, _)| outcome)
}

fn finish_run_inner(
    scenario: &Scenario,
    settings: &RunSettings,
) -> Result<(Outcome, RunResult), CliError> {
    let output = &settings.output;
    let cancel = Cancel::new();
    watch_ctrl_c(cancel.clone());
    let store =
        match loadlab_store::Store::open(&loadlab_store::resolve_dir(output.results.as_deref())) {
            Ok(store) => Some(store),
            Err(e) => {
                eprintln!("warning: this run will not be stored: {e}");
                None
            }
        };
    let measured = measure(
        scenario,
        output,
        &cancel,
        store.as_ref(),
        loadlab_store::NewRun::default(),
    )?;
    let result = measured.result;
    if let Some(path) = &output.json {
        write_json(&result, path)?;
    }
    if !output.quiet {
        let mut stdout = std::io::stdout().lock();
        let style = Style {
            color: std::io::stdout().is_terminal(),
        };
        let _ = loadlab_report::render_summary(&result, &mut stdout, style);
        if let (Some(id), Some(path)) = (&measured.id, &measured.path) {
            let _ = writeln!(stdout, "\nstored as run {id} ({})", path.display());
        }
        let _ = stdout.flush();
    }
    let outcome = outcome_of(&result, output.allow_saturated);
    Ok((outcome, result))
}

/// A run as studies and capacity searches make it: stored, nothing printed but progress.
pub struct Measured {
    pub result: RunResult,
    /// Store id and `run.json` path (when the store is available).
    pub id: Option<String>,
    pub path: Option<std::path::PathBuf>,
}

/// Runs one scenario (progress line, thresholds) and stores it when a store is given;
/// `meta` tags the run (variant, study). The run is indexed as running while it runs.
pub fn measure(
    scenario: &Scenario,
    output: &OutputArgs,
    cancel: &Cancel,
    store: Option<&loadlab_store::Store>,
    mut meta: loadlab_store::NewRun,
) -> Result<Measured, CliError> {
    meta.scenario = scenario.name.clone();
    meta.scenario_file = scenario.source.clone();
    if meta.load.is_none() {
        meta.load = Some(load_text(scenario));
    }
    let id = store.and_then(|s| match s.begin_run(&meta) {
        Ok(id) => Some(id),
        Err(e) => {
            eprintln!("warning: this run will not be stored: {e}");
            None
        }
    });
    let result = run_engine(scenario, output, cancel);
    let result = match result {
        Ok(r) => r,
        Err(e) => {
            if let (Some(store), Some(id)) = (store, &id) {
                let _ = store.fail_run(id);
            }
            return Err(e);
        }
    };
    let path = match (store, &id) {
        (Some(store), Some(id)) => match store.finish_run(id, &result) {
            Ok(p) => Some(p),
            Err(e) => {
                eprintln!("warning: run {id} could not be stored: {e}");
                None
            }
        },
        _ => None,
    };
    Ok(Measured { result, id, path })
}

/// The offered load in words, for the run index: `20 vus`, `200/s`, `burst 500`.
pub fn load_text(scenario: &Scenario) -> String {
    use loadlab_scenario::Load;
    match &scenario.load {
        Load::Closed(c) => {
            let max = c
                .stages
                .iter()
                .map(|s| s.vus)
                .max()
                .unwrap_or(0)
                .max(c.start_vus);
            format!("{max} vus")
        }
        Load::Open(o) => {
            let max = o
                .stages
                .iter()
                .map(|s| s.rate.max(s.ramp_to.unwrap_or(0.0)))
                .fold(0.0, f64::max);
            format!("{}/s", fmt_num(max))
        }
        Load::Burst(_) => "burst".to_string(),
    }
}

/// A number without needless decimals: `200`, `12.5`.
pub fn fmt_num(v: f64) -> String {
    if (v - v.round()).abs() < 1e-9 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

fn run_engine(
    scenario: &Scenario,
    output: &OutputArgs,
    cancel: &Cancel,
) -> Result<RunResult, CliError> {
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
    let run = loadlab_engine::run(scenario, options, cancel);
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let mut result = run?.result;
    result.thresholds = loadlab_analysis::thresholds::evaluate(&scenario.thresholds, &result);
    Ok(result)
}

pub fn write_json(result: &RunResult, path: &std::path::Path) -> Result<(), CliError> {
    let mut file = std::fs::File::create(path).map_err(|e| {
        CliError::bad_input(format!("--json: cannot write {}: {e}", path.display()))
    })?;
    loadlab_report::render_json(result, &mut file)
        .map_err(|e| CliError::bad_input(format!("--json: cannot write {}: {e}", path.display())))
}

/// Saturation is the only invalidity `--allow-saturated` forgives.
pub fn outcome_of(result: &RunResult, allow_saturated: bool) -> Outcome {
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
pub fn watch_ctrl_c(cancel: Cancel) {
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
