//! One measured run as every command makes it: indexed in the store, its record streamed to
//! the run's directory while it goes, thresholds evaluated on the summary, the summary stored.
//! A storage failure never loses the run: the summary is still returned (from memory) with
//! the failure named, for the caller to print before exiting 3.

use crate::cli::OutputArgs;
use crate::exit::CliError;
use loadlab_engine::{Cancel, RunOptions};
use loadlab_metrics::record::{RecordSink, RecordWriter};
use loadlab_metrics::RunResult;
use loadlab_scenario::plan::Segment;
use loadlab_scenario::Scenario;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// A finished run: its summary, where it was stored, and what could not be stored.
pub struct Measured {
    pub result: RunResult,
    /// Store id and `run.json` path (when stored).
    pub id: Option<String>,
    pub path: Option<PathBuf>,
    /// "results not stored: …" when the record or summary could not be written.
    pub storage_error: Option<String>,
}

/// How this process takes part in a plan (`--segment`, `--start-at`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Share {
    pub segment: Option<Segment>,
    pub start_at: Option<SystemTime>,
}

/// Runs one scenario (progress line, thresholds) and stores it when a store is given; `meta`
/// tags the run (variant, study). The run is indexed as running while it runs.
pub fn measure(
    scenario: &Scenario,
    output: &OutputArgs,
    cancel: &Cancel,
    store: Option<&loadlab_store::Store>,
    mut meta: loadlab_store::NewRun,
    share: Share,
) -> Result<Measured, CliError> {
    meta.scenario = scenario.name.clone();
    meta.scenario_file = scenario.source.clone();
    meta.plan_hash = Some(scenario.fingerprint());
    meta.segment = share.segment.map(|s| format!("{}/{}", s.index, s.count));
    // Labels given to a study or capacity search are its runs' labels too.
    for (key, value) in output.resolved_labels()? {
        meta.labels.entry(key).or_insert(value);
    }
    if meta.load.is_none() {
        meta.load = Some(load_text(scenario));
    }
    let id = match store {
        Some(s) => Some(s.begin_run(&meta).map_err(|e| {
            CliError::bad_input(format!("cannot index the run in the run store: {e}"))
        })?),
        None => None,
    };
    let dir = match (store, &id) {
        (Some(s), Some(id)) => Some(s.run_dir(id)),
        _ => None,
    };
    let sink = dir
        .as_deref()
        .map(|d| Box::new(RecordWriter::new(d)) as Box<dyn RecordSink>);
    let where_ = dir
        .as_deref()
        .map(|d| d.display().to_string())
        .unwrap_or_default();
    let (result, mut storage_error) = match execute(scenario, output, cancel, share, sink, &where_)
    {
        Ok(done) => done,
        Err(e) => {
            if let (Some(store), Some(id)) = (store, &id) {
                let _ = store.fail_run(id);
            }
            return Err(e);
        }
    };
    let mut path = None;
    if let (Some(store), Some(id), None) = (store, &id, &storage_error) {
        match store.finish_run(id, &result) {
            Ok(p) => path = Some(p),
            Err(e) => storage_error = Some(format!("results not stored: {e}")),
        }
    }
    if storage_error.is_some() {
        if let (Some(store), Some(id)) = (store, &id) {
            let _ = store.mark_not_stored(id, result.interrupted);
        }
    }
    Ok(Measured {
        result,
        id,
        path,
        storage_error,
    })
}

/// Runs one scenario into `sink` (progress line, thresholds evaluated); returns the summary
/// and, when the record could not be written to `where_`, why.
pub fn execute(
    scenario: &Scenario,
    output: &OutputArgs,
    cancel: &Cancel,
    share: Share,
    sink: Option<Box<dyn RecordSink>>,
    where_: &str,
) -> Result<(RunResult, Option<String>), CliError> {
    let plan = scenario.plan();
    let planned = plan.duration();
    let mut options = RunOptions {
        threads: output.threads,
        segment: share.segment,
        start_at: share.start_at,
        sink,
        ..RunOptions::default()
    };
    let bar = match crate::progress::reporter(
        output.quiet,
        output.no_progress,
        planned,
        plan.ends_when_done(),
    ) {
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
    let out = run?;
    if !output.quiet {
        for w in &out.warnings {
            eprintln!("warning: {w}");
        }
    }
    let mut result = out.result;
    result.thresholds = loadlab_analysis::thresholds::evaluate(&scenario.thresholds, &result);
    let storage_error = out
        .storage_error
        .map(|e| format!("results not stored: {e} ({where_})"));
    Ok((result, storage_error))
}

/// The offered load in words, for the run index: `20 vus`, `200/s`, `burst 500`.
pub fn load_text(scenario: &Scenario) -> String {
    use loadlab_scenario::Load;
    match &scenario.load {
        Load::Closed(c) => format!("{} vus", c.max_vus()),
        Load::Open(o) => {
            let max = o
                .stages
                .iter()
                .map(|s| s.rate.max(s.ramp_to.unwrap_or(0.0)))
                .fold(0.0, f64::max);
            format!("{}/s", fmt_num(max))
        }
        Load::Burst(b) => format!("burst {}", b.count),
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

/// Writes a result file (`--json`) through a temporary file and a rename: a failure leaves
/// nothing that looks like a result.
pub fn write_json(result: &RunResult, path: &Path) -> Result<(), String> {
    loadlab_store::write_atomic(path, (result.to_json() + "\n").as_bytes())
        .map_err(|e| format!("results not stored: --json {}: {e}", path.display()))
}

/// Checks, before any load is sent, that `--json PATH` can be written.
pub fn check_json_path(path: &Path) -> Result<(), CliError> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if path.is_dir() {
        return Err(CliError::bad_input(format!(
            "--json {}: is a directory; give a file name, e.g. {}/result.json",
            path.display(),
            path.display()
        )));
    }
    if !dir.is_dir() {
        return Err(CliError::bad_input(format!(
            "--json {}: the directory {} does not exist (create it first)",
            path.display(),
            dir.display()
        )));
    }
    let probe = dir.join(format!(".loadlab-write-check-{}", std::process::id()));
    let ok = std::fs::write(&probe, b"ok");
    let _ = std::fs::remove_file(&probe);
    ok.map_err(|e| {
        CliError::bad_input(format!(
            "--json {}: cannot write in {}: {e}",
            path.display(),
            dir.display()
        ))
    })
}

/// Opens the run store for a command that will run load, after checking it can be written
/// (exit 2 before anything is sent), and recovers runs whose process died.
pub fn open_store_for_runs(results: Option<&Path>) -> Result<loadlab_store::Store, CliError> {
    let dir = loadlab_store::resolve_dir(results);
    if dir.to_string_lossy().contains("://") {
        return Err(CliError::bad_input(format!(
            "--results {}: object storage holds the runs of `loadlab run` (and `merge`, `runs`); this command keeps its results in a local directory: give --results DIR",
            dir.display()
        )));
    }
    loadlab_store::check_writable(&dir).map_err(|e| {
        CliError::bad_input(format!(
            "{e}\n  hint: choose a writable results directory with --results DIR or LOADLAB_RESULTS"
        ))
    })?;
    super::store::open(&dir)
}
