//! `loadlab demo`'s study: a short A/B study against two built-in targets started in this
//! process, with nothing to set up. In the binary, not the pipeline library: only the demo
//! needs the built-in target inside the generator's process.
//!
//! The targets run inside loadlab, so they are monitored through their `/metrics` (their
//! own threads' CPU, in-flight requests, queue), not by port: the port would resolve to
//! loadlab itself, generator included.

use crate::exit::CliError;
use loadlab_builtin_target::{ServiceDist, TargetConfig, TargetHandle};
use std::path::{Path, PathBuf};
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

fn start_target(workers: usize) -> Result<TargetHandle, CliError> {
    loadlab_builtin_target::spawn(TargetConfig {
        listen: "127.0.0.1:0".parse().expect("valid address"),
        workers: Some(workers),
        service_time: Duration::from_millis(2),
        service_dist: ServiceDist::Exp,
        ..TargetConfig::default()
    })
    .map_err(CliError::aborted)
}

/// The demo's two built-in targets, running in this process until shut down.
pub struct DemoTargets {
    /// 4 workers.
    pub baseline: TargetHandle,
    /// 2 workers.
    pub half: TargetHandle,
}

impl DemoTargets {
    pub fn start() -> Result<DemoTargets, CliError> {
        Ok(DemoTargets {
            baseline: start_target(4)?,
            half: start_target(2)?,
        })
    }

    /// Writes the demo's scenario file (its study) under `results/demo/`; returns its path.
    pub fn write_scenario(&self, results: &Path) -> Result<PathBuf, CliError> {
        let dir = results.join("demo");
        std::fs::create_dir_all(&dir)
            .map_err(|e| CliError::bad_input(format!("cannot create {}: {e}", dir.display())))?;
        let file = dir.join("demo.yaml");
        let (a, b) = (self.baseline.addr, self.half.addr);
        let text = DEMO
            .replace("{TARGET_A_ADDR}", &a.to_string())
            .replace("{TARGET_B_ADDR}", &b.to_string())
            .replace("{TARGET_A}", &format!("http://{a}"))
            .replace("{TARGET_B}", &format!("http://{b}"));
        std::fs::write(&file, &text)
            .map_err(|e| CliError::bad_input(format!("cannot write {}: {e}", file.display())))?;
        Ok(file)
    }

    pub fn shutdown(self) {
        self.baseline.shutdown();
        self.half.shutdown();
    }
}
