//! One measured run as every command makes it: indexed in the store, its record streamed to
//! the run's directory while it goes, thresholds judged every interval (a windowed one marked
//! `abort` stops the load) and on the summary, the summary stored.
//! A storage failure never loses the run: the summary is still returned (from memory) with
//! the failure named, for the caller to print before exiting 3.

use crate::PipelineError;
use loadlab_analysis::thresholds::ThresholdWatch;
use loadlab_engine::{Cancel, ProgressCallback, RunOptions};
use loadlab_metrics::RunResult;
use loadlab_record::{LiveObserver, RecordSink, RecordWriter};
use loadlab_scenario::plan::Segment;
use loadlab_scenario::{Scenario, ScenarioError};
use loadlab_store::Store;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

/// What a caller shows while a run goes: a live progress line and the engine's warnings.
pub trait RunView {
    /// A callback for the engine's progress during a run planned for `planned` (`ends_when_done`:
    /// its work may end it sooner, so `planned` is a bound), or `None` to show nothing.
    fn progress(&mut self, _planned: Duration, _ends_when_done: bool) -> Option<ProgressCallback> {
        None
    }
    /// The run ended: a progress line is cleared.
    fn finished(&mut self) {}
    /// Something the engine wants the user to know (the run went on).
    fn warning(&mut self, _message: &str) {}
    /// What else watches the next run interval by interval (the dashboard, `--out` outputs).
    fn observers(&mut self) -> Vec<Box<dyn LiveObserver>> {
        Vec::new()
    }
    /// The next run's thresholds, judged while it goes: `states()` gives each one's current
    /// value (for the dashboard). Called before `observers`.
    fn thresholds(&mut self, _watch: &ThresholdWatch) {}
}

/// Shows nothing.
pub struct Unseen;

impl RunView for Unseen {}

/// How this process takes part in a plan (`--segment`, `--start-at`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Share {
    pub segment: Option<Segment>,
    pub start_at: Option<SystemTime>,
}

impl Share {
    /// `--segment i/N` and `--start-at TIME|+DURATION`, as given.
    pub fn from_flags(
        segment: Option<&str>,
        start_at: Option<&str>,
    ) -> Result<Share, PipelineError> {
        let flag = |name: &str, m: String| ScenarioError::flag(name, m, None);
        Ok(Share {
            segment: segment
                .map(Segment::parse)
                .transpose()
                .map_err(|m| flag("--segment", m))?,
            start_at: start_at
                .map(crate::resolve::parse_start_at)
                .transpose()
                .map_err(|m| flag("--start-at", m))?,
        })
    }
}

/// One run to make: the scenario, this process's share of it, worker threads, and the signal
/// that stops it.
#[derive(Clone, Copy)]
pub struct RunSpec<'a> {
    pub scenario: &'a Scenario,
    pub share: Share,
    /// Worker threads (`None`: enough for the load, at most one per core).
    pub threads: Option<usize>,
    pub cancel: &'a Cancel,
    /// What steers the run while it goes (`--control`, the dashboard); `None`: its plan.
    pub steering: Option<&'a loadlab_engine::Steering>,
}

/// A finished run: its summary, where it was stored, and what could not be stored.
pub struct Measured {
    pub result: RunResult,
    /// Store id and `run.json` path (when stored).
    pub id: Option<String>,
    pub path: Option<PathBuf>,
    /// "results not stored: …" when the record or summary could not be written.
    pub storage_error: Option<String>,
}

/// Runs one scenario and stores it when a store is given; `meta` tags the run (variant,
/// study). The run is indexed as running while it runs.
pub fn measure(
    spec: RunSpec<'_>,
    store: Option<&Store>,
    mut meta: loadlab_store::NewRun,
    view: &mut dyn RunView,
) -> Result<Measured, PipelineError> {
    let scenario = spec.scenario;
    meta.scenario = scenario.name.clone();
    meta.scenario_file = scenario.source.clone();
    meta.plan_hash = Some(scenario.fingerprint());
    meta.segment = spec.share.segment.map(|s| s.to_string());
    if meta.load.is_none() {
        meta.load = Some(load_text(scenario));
    }
    let id = match store {
        Some(s) => Some(s.begin_run(&meta).map_err(|e| {
            PipelineError::bad_input(format!("cannot index the run in the run store: {e}"))
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
    let (result, mut storage_error) = match execute(spec, sink, &where_, view) {
        Ok(done) => done,
        Err(e) => {
            // Refused before any load (every engine error is): nothing to list.
            if let (Some(store), Some(id)) = (store, &id) {
                let _ = store.forget_run(id);
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

/// [`measure`], made again up to `retries` times while the run is invalid for a reason a re-run
/// may not have (its host, its generator, a shortfall — what a study does with
/// `study.retry_invalid`); a run stopped by a signal is not made again. Each attempt is
/// stored; `retrying` hears each invalid one (its attempt number, from 1, and how long the
/// host is given to settle first: [`loadlab_orchestrate::settle_before_retry`]) before the
/// next begins. The last attempt is the result.
pub fn measure_retrying(
    spec: RunSpec<'_>,
    store: Option<&Store>,
    meta: loadlab_store::NewRun,
    view: &mut dyn RunView,
    retry: Retry,
    retrying: &mut dyn FnMut(&RunResult, usize, Duration),
) -> Result<Measured, PipelineError> {
    let mut attempt = 0;
    loop {
        let measured = measure(spec, store, meta.clone(), view)?;
        let again = attempt < retry.retries
            && !spec.cancel.is_cancelled()
            && loadlab_orchestrate::run_problems(&measured.result, retry.allow_saturated)
                == loadlab_orchestrate::RunUse::Retry;
        if !again {
            return Ok(measured);
        }
        attempt += 1;
        let settle = loadlab_orchestrate::settle_before_retry(&measured.result, attempt);
        retrying(&measured.result, attempt, settle);
        pause_unless_cancelled(spec.cancel, settle);
    }
}

/// How [`measure_retrying`] makes an invalid run again.
#[derive(Debug, Clone, Copy, Default)]
pub struct Retry {
    /// Re-runs of an invalid run (0: none).
    pub retries: usize,
    /// `--allow-saturated`: the generator's own limits make no run invalid.
    pub allow_saturated: bool,
}

/// Runs one scenario into `sink` (thresholds evaluated); returns the summary and, when the
/// record could not be written to `where_`, why.
pub fn execute(
    spec: RunSpec<'_>,
    sink: Option<Box<dyn RecordSink>>,
    where_: &str,
    view: &mut dyn RunView,
) -> Result<(RunResult, Option<String>), PipelineError> {
    let scenario = spec.scenario;
    let plan = scenario.plan();
    // The thresholds are judged every interval (windows, aborts, current values) by the
    // first observer, so that an abort is decided before anything slower runs.
    let watch = ThresholdWatch::new(&scenario.thresholds);
    view.thresholds(&watch);
    let mut observers = Vec::new();
    if !scenario.thresholds.is_empty() {
        observers.push(watch.observer());
    }
    observers.extend(view.observers());
    let options = RunOptions {
        threads: spec.threads,
        segment: spec.share.segment,
        start_at: spec.share.start_at,
        sink,
        progress: view.progress(plan.duration(), plan.ends_when_done()),
        observers,
        steering: spec.steering.cloned(),
        ..RunOptions::default()
    };
    let run = loadlab_engine::run(scenario, options, spec.cancel);
    view.finished();
    let out = run?;
    for w in &out.warnings {
        view.warning(w);
    }
    let mut result = out.result;
    // Plain thresholds on the whole run; windowed ones from their windows (the worst).
    result.thresholds = watch.results(&result);
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
        Load::Open(o) => format!("{}/s", loadlab_report::words::plain_number(o.peak_rate())),
        Load::Burst(b) => format!("burst {}", b.count),
    }
}

/// Writes a result file (`--json`) through a temporary file and a rename: a failure leaves
/// nothing that looks like a result.
pub fn write_json(result: &RunResult, path: &Path) -> Result<(), String> {
    loadlab_store::write_atomic(path, (result.to_json() + "\n").as_bytes())
        .map_err(|e| format!("results not stored: --json {}: {e}", path.display()))
}

/// Checks, before any load is sent, that `--json PATH` can be written.
pub fn check_json_path(path: &Path) -> Result<(), PipelineError> {
    check_output_path("--json", "result.json", path)
}

/// Checks, before any load is sent, that the file a flag names (`--json`, `--junit`,
/// `--summary`) can be written: a run's outcome must not be lost to a typo in a path.
/// `example` is a file name to suggest when `path` is a directory.
pub fn check_output_path(flag: &str, example: &str, path: &Path) -> Result<(), PipelineError> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if path.is_dir() {
        return Err(PipelineError::bad_input(format!(
            "{flag} {}: is a directory; give a file name, e.g. {}/{}",
            path.display(),
            path.display(),
            example
        )));
    }
    if !dir.is_dir() {
        return Err(PipelineError::bad_input(format!(
            "{flag} {}: the directory {} does not exist (create it first)",
            path.display(),
            dir.display()
        )));
    }
    let probe = dir.join(format!(".loadlab-write-check-{}", std::process::id()));
    let ok = std::fs::write(&probe, b"ok");
    let _ = std::fs::remove_file(&probe);
    ok.map_err(|e| {
        PipelineError::bad_input(format!(
            "{flag} {}: cannot write in {}: {e}",
            path.display(),
            dir.display()
        ))
    })
}

/// Waits `duration` (a study's cooldown, or the host's time to settle before a run is made again), returning early when `cancel` is set.
pub fn pause_unless_cancelled(cancel: &Cancel, duration: Duration) {
    let until = Instant::now() + duration;
    while Instant::now() < until && !cancel.is_cancelled() {
        std::thread::sleep(Duration::from_millis(50).min(until - Instant::now()));
    }
}
