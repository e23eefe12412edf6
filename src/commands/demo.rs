//! `loadlab demo`: the main job on the built-in target, with nothing to set up — a short
//! study (2 variants × 6 runs) against a target started in-process, ending in an HTML and a
//! Markdown report with the targets' resources and their server-side latency.
//!
//! The targets run inside loadlab, so they are monitored through their `/metrics` (their
//! own threads' CPU, in-flight requests, queue), not by port: the port would resolve to
//! loadlab itself, generator included.

use crate::cli::DemoArgs;
use crate::exit::{CliError, Outcome};
use loadlab_target::{ServiceDist, TargetConfig};
use std::path::Path;
use std::time::Duration;

/// An A/B study a team would run: does halving the target's worker pool hurt? Two built-in
/// targets with ~2 ms exponential service time, 4 workers (`baseline`) and 2 workers
/// (`half-workers`), the same open-model load of 800 arrivals/s (about 36% and 72% utilisation of the API workers),
/// 2 × 6 interleaved runs of 3 s (the first second of each a warm-up): under a minute. Throughput should come out
/// the same (`~`), latency significantly worse where the queue forms.
const DEMO: &str = "\
name: demo
target: {TARGET_A}
load:
  model: open
  stages:
    - { duration: 3s, rate: 800/s }
  max_in_flight: 500
warmup: 1s
monitor:
  prometheus:
    - name: target
      url: http://{TARGET_A_ADDR}/metrics
      series: [loadlab_target_cpu_seconds_total, http_requests_in_flight, loadlab_target_queue_length]
thresholds:
  - latency.p95 < 100ms
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
study:
  repeat: 6
  order: interleaved
  cooldown: 500ms
  equivalence: 2%
  variants:
    - { name: baseline }
    - name: half-workers
      target: {TARGET_B}
      monitor:
        prometheus:
          - name: target
            url: http://{TARGET_B_ADDR}/metrics
            series: [loadlab_target_cpu_seconds_total, http_requests_in_flight, loadlab_target_queue_length]
";

fn start_target(workers: usize) -> Result<loadlab_target::TargetHandle, CliError> {
    loadlab_target::spawn(TargetConfig {
        listen: "127.0.0.1:0".parse().expect("valid address"),
        workers: Some(workers),
        service_time: Duration::from_millis(2),
        service_dist: ServiceDist::Exp,
        ..TargetConfig::default()
    })
    .map_err(CliError::aborted)
}

pub fn execute(args: DemoArgs) -> Result<Outcome, CliError> {
    let target = start_target(4)?;
    let half = start_target(2)?;
    let quiet = args.output.quiet;
    if !quiet {
        println!(
            "loadlab demo: two built-in targets, ~2 ms exponential service time — baseline with 4 workers on http://{}, half-workers with 2 on http://{}\n\
             a study: 800 arrivals/s, 2 variants × 6 runs of 3 s, interleaved — about a minute\n",
            target.addr, half.addr
        );
    }
    let results = loadlab_store::resolve_dir(args.output.results.as_deref());
    let dir = results.join("demo");
    std::fs::create_dir_all(&dir)
        .map_err(|e| CliError::bad_input(format!("cannot create {}: {e}", dir.display())))?;
    let file = dir.join("demo.yaml");
    let text = DEMO
        .replace("{TARGET_A_ADDR}", &target.addr.to_string())
        .replace("{TARGET_B_ADDR}", &half.addr.to_string())
        .replace("{TARGET_A}", &format!("http://{}", target.addr))
        .replace("{TARGET_B}", &format!("http://{}", half.addr));
    std::fs::write(&file, &text)
        .map_err(|e| CliError::bad_input(format!("cannot write {}: {e}", file.display())))?;
    // A demo shows what it finds: on a busy laptop its runs are kept, and the report says
    // which were contended and by whom, instead of failing the first command a user runs.
    let output = crate::cli::OutputArgs {
        allow_saturated: true,
        ..args.output.clone()
    };
    let outcome = match super::run_study_file(
        &file,
        &output,
        None,
        None,
        None,
        &crate::cli::MonitorArgs::default(),
    ) {
        Ok((outcome, study_json)) => {
            let html = study_json.with_file_name("report.html");
            let html = if html.exists() {
                Some(html)
            } else {
                super::write_report_for(&study_json, true)?
            };
            announce(html.as_deref(), quiet);
            Ok(outcome)
        }
        Err(e) => Err(e),
    };
    target.shutdown();
    half.shutdown();
    outcome
}

fn announce(html: Option<&Path>, quiet: bool) {
    if let (Some(html), false) = (html, quiet) {
        println!("\nOpen the report: {}", html.display());
    }
}
