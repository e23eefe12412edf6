//! `loadlab demo`: the main job on the built-in target, with nothing to set up.

use super::{finish_run, RunSettings};
use crate::cli::DemoArgs;
use crate::exit::{CliError, Outcome};
use loadlab_scenario::Scenario;
use loadlab_target::{ServiceDist, TargetConfig};
use std::time::Duration;

/// An open-model run with a ramp, a warm-up and thresholds, against a target whose capacity
/// (4 workers × ~2 ms) is well above the offered load.
const DEMO: &str = "\
name: demo — built-in target
load:
  model: open
  stages:
    - { duration: 2s, rate: 50/s, ramp_to: 300/s }
    - { duration: 6s, rate: 300/s }
warmup: 1s
thresholds:
  - latency.p95 < 250ms
  - http.errors < 1%
flows:
  - name: api
    weight: 9
    steps:
      - { name: ping, group: api, get: /api/ping }
  - name: health
    weight: 1
    steps:
      - { name: health, get: /health }
";

pub fn execute(args: DemoArgs) -> Result<Outcome, CliError> {
    let target = loadlab_target::spawn(TargetConfig {
        listen: "127.0.0.1:0".parse().expect("valid address"),
        workers: Some(4),
        service_time: Duration::from_millis(2),
        service_dist: ServiceDist::Exp,
        ..TargetConfig::default()
    })
    .map_err(CliError::aborted)?;
    let mut scenario = Scenario::parse(DEMO, "demo").map_err(CliError::bad_input)?;
    scenario.target = Some(format!("http://{}", target.addr));
    if !args.output.quiet {
        println!(
            "loadlab demo: built-in target on http://{} (4 workers, ~2 ms service time)\n",
            target.addr
        );
    }
    let outcome = finish_run(
        &scenario,
        &RunSettings {
            output: args.output,
        },
    );
    target.shutdown();
    outcome
}
