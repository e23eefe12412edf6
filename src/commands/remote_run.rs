//! `loadlab run … --results URL`: the run's record goes to object storage while it runs
//! (`loadlab_pipeline::remote::run_to_url`); this prints the summary and the uploads.

use super::output::{print_errors, print_run, say_unless};
use super::session::Session;
use crate::cli::RunArgs;
use crate::exit::{CliError, Outcome};
use loadlab_live::LiveTap;
use loadlab_pipeline::measure::{check_json_path, write_json, RunSpec, Share};
use loadlab_pipeline::remote::{run_to_url, RemoteRunOptions};
use loadlab_scenario::Scenario;
use std::sync::Arc;
use url::Url;

/// Runs `scenario` (this process's share of it) with its record streamed to `url`.
pub fn run(
    scenario: &Scenario,
    args: &RunArgs,
    share: Share,
    url: &Url,
    taps: Vec<Arc<dyn LiveTap>>,
    steering: Option<&loadlab_engine::Steering>,
) -> Result<Outcome, CliError> {
    let output = &args.output;
    let defaults = RemoteRunOptions::default();
    let options = RemoteRunOptions {
        barrier_timeout: args.barrier_timeout.unwrap_or(defaults.barrier_timeout),
        upload_every: args.upload_every.unwrap_or(defaults.upload_every),
    }
    .checked()?;
    if let Some(json) = &output.json {
        check_json_path(json)?;
    }
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
    let quiet = output.quiet;
    let mut say_unless_quiet = say_unless(quiet);
    let labels = output.resolved_labels()?;
    let mut run = run_to_url(
        spec,
        url,
        options,
        &labels,
        &mut view,
        &mut say_unless_quiet,
    )?;
    if let Some(path) = &output.json {
        if let Err(e) = write_json(&run.result, path) {
            run.errors.push(e);
        }
    }
    if !quiet {
        let line = run.stored_line();
        print_run(&run.result, Some(line));
        super::output::print_outputs(&outputs);
    }
    if print_errors(&run.errors) {
        return Ok(Outcome::Invalid);
    }
    Ok(super::output::outcome_saying_why(&run.result, output))
}
