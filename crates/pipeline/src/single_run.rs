//! `loadlab run`'s work between its flags and its printing: where the result goes (a local run
//! store or object storage), the run made (again, while it is invalid, when asked), stored
//! and written as `--json`. What could not be kept comes back as errors beside the result,
//! never in place of it.

use crate::live_outputs::LiveOutputs;
use crate::measure::{check_json_path, measure_retrying, write_json, Retry, RunSpec, Share};
use crate::remote::{run_to_url, RemoteRun, RemoteRunOptions};
use crate::session::{Session, Settings};
use crate::PipelineError;
use loadlab_engine::{Cancel, Steering};
use loadlab_live::LiveTap;
use loadlab_metrics::RunResult;
use loadlab_scenario::Scenario;
use loadlab_store::NewRun;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use url::Url;

/// Where a run's result goes.
pub enum Destination {
    /// The local run store (`--results DIR`, `LOADLAB_RESULTS` or the default).
    Local,
    /// Object storage (`--results s3://…`, `gs://`, `az://`, `file://`), with how it uploads.
    Remote(Url, RemoteRunOptions),
}

impl Destination {
    /// Where `settings` send the result. `remote` holds `--barrier-timeout`/`--upload-every`
    /// when given; they and `--baseline` (a study in a local store) are bad input where they
    /// do not apply.
    pub fn of(
        settings: &Settings,
        remote: RemoteRunFlags,
        baseline: bool,
    ) -> Result<Self, PipelineError> {
        let results = loadlab_store::resolve_dir(settings.results.as_deref());
        let Some(url) = crate::remote::url_of(&results)? else {
            if remote.barrier_timeout.is_some() || remote.upload_every.is_some() {
                return Err(PipelineError::bad_input(
                    "--barrier-timeout and --upload-every apply to records in object storage: give --results s3://bucket/prefix (or gs://, az://, file://)",
                ));
            }
            return Ok(Destination::Local);
        };
        if baseline {
            return Err(PipelineError::bad_input(
                "--baseline compares against a study in a local run store; it cannot be used with --results URL",
            ));
        }
        let defaults = RemoteRunOptions::default();
        let options = RemoteRunOptions {
            barrier_timeout: remote.barrier_timeout.unwrap_or(defaults.barrier_timeout),
            upload_every: remote.upload_every.unwrap_or(defaults.upload_every),
        }
        .checked()?;
        Ok(Destination::Remote(url, options))
    }
}

/// `--barrier-timeout` and `--upload-every`, as given.
#[derive(Clone, Copy, Debug, Default)]
pub struct RemoteRunFlags {
    pub barrier_timeout: Option<Duration>,
    pub upload_every: Option<Duration>,
}

/// What a run needs besides its scenario: its share of the plan, the live taps (dashboard,
/// control), the steering a control holds, and how often it is made again while invalid.
pub struct RunContext<'a> {
    pub share: Share,
    pub taps: Vec<Arc<dyn LiveTap>>,
    pub steering: Option<&'a Steering>,
    /// `--retry-invalid` (a local run's).
    pub retry_invalid: usize,
}

impl<'a> RunContext<'a> {
    /// The run of `scenario` in this context, cancelled by `cancel`.
    fn spec(&self, scenario: &'a Scenario, settings: &Settings, cancel: &'a Cancel) -> RunSpec<'a> {
        RunSpec {
            scenario,
            share: self.share,
            threads: settings.threads,
            cancel,
            steering: self.steering,
        }
    }
}

/// A run kept in the local store.
pub struct LocalRun {
    pub result: RunResult,
    /// The stored run's id and directory (none when it could not be stored).
    pub stored: Option<(String, PathBuf)>,
    /// Where `--json` was written.
    pub json: Option<PathBuf>,
    /// What could not be stored or written.
    pub errors: Vec<String>,
    pub outputs: LiveOutputs,
}

impl LocalRun {
    /// `stored as run ID (DIR)`, or `partial result stored as …` for an interrupted run.
    pub fn stored_line(&self) -> Option<String> {
        let (id, path) = self.stored.as_ref()?;
        let what = if self.result.interrupted {
            "partial result stored"
        } else {
            "stored"
        };
        Some(format!("{what} as run {id} ({})", path.display()))
    }
}

/// Runs a resolved scenario into the local store: checks that its results can be kept (bad
/// input before any load), runs it (again, up to `retry_invalid` times, while it is invalid;
/// `retrying` hears of each re-run with the attempt's number and the pause first), stores the
/// result and writes `--json`. `warn` hears of stored runs that could not be recovered.
pub fn run_local(
    scenario: &Scenario,
    settings: &Settings,
    context: RunContext<'_>,
    warn: &mut dyn FnMut(&str),
    retrying: &mut dyn FnMut(&RunResult, usize, Duration),
) -> Result<LocalRun, PipelineError> {
    if let Some(json) = &settings.json {
        check_json_path(json)?;
    }
    let store = crate::store::open_for_runs(settings.results.as_deref(), warn)?;
    let Session {
        cancel,
        outputs,
        mut view,
    } = Session::open(settings, &scenario.outputs, context.taps.clone(), true)?;
    let spec = context.spec(scenario, settings, &cancel);
    let meta = NewRun {
        labels: settings.labels.clone(),
        ..NewRun::default()
    };
    let retry = Retry {
        retries: context.retry_invalid,
        allow_saturated: settings.allow_saturated,
    };
    let measured = measure_retrying(spec, Some(&store), meta, &mut view, retry, retrying)?;
    let result = measured.result;
    let mut errors: Vec<String> = measured.storage_error.into_iter().collect();
    let json = written_json(&result, settings, &mut errors);
    Ok(LocalRun {
        result,
        stored: measured.id.zip(measured.path),
        json,
        errors,
        outputs,
    })
}

/// Runs `scenario` (this process's share of it) with its record streamed to `url`; `say`
/// receives the start barrier's messages. `--json` write errors join the run's errors.
pub fn run_remote(
    scenario: &Scenario,
    settings: &Settings,
    context: RunContext<'_>,
    (url, options): (&Url, RemoteRunOptions),
    say: &mut dyn FnMut(&str),
) -> Result<(RemoteRun, LiveOutputs), PipelineError> {
    if let Some(json) = &settings.json {
        check_json_path(json)?;
    }
    let Session {
        cancel,
        outputs,
        mut view,
    } = Session::open(settings, &scenario.outputs, context.taps.clone(), true)?;
    let spec = context.spec(scenario, settings, &cancel);
    let mut run = run_to_url(spec, url, options, &settings.labels, &mut view, say)?;
    written_json(&run.result, settings, &mut run.errors);
    Ok((run, outputs))
}

/// Writes `--json`, if asked; its path when written, else the error joins `errors`.
fn written_json(
    result: &RunResult,
    settings: &Settings,
    errors: &mut Vec<String>,
) -> Option<PathBuf> {
    let path = settings.json.as_ref()?;
    match write_json(result, path) {
        Ok(()) => Some(path.clone()),
        Err(e) => {
            errors.push(e);
            None
        }
    }
}
