//! `loadlab demo`: the main job on the built-in target, with nothing to set up — a short A/B
//! study (2 variants × 6 runs) against two built-in targets started in this process, ending
//! in an HTML and a Markdown report with the targets' resources and their server-side latency.
//! This crate exists because it is the one allowed to depend on both the pipeline and the
//! built-in target: only the demo needs the system under test inside the generator's process,
//! so neither the pipeline nor the binary carries it for the demo's sake.
//!
//! The study itself is run by the caller ([`run`] takes it as a function of the scenario
//! file), so that the binary prints its progress as for `loadlab study`, and a test can give
//! a fake one.
//!
//! The targets run inside loadlab, so they are monitored through their `/metrics` (their
//! own threads' CPU, in-flight requests, queue), not by port: the port would resolve to
//! loadlab itself, generator included.
//!
//! Crates chosen: `thiserror` for [`DemoError`].

use loadlab_builtin_target::{ServiceDist, TargetConfig, TargetError, TargetHandle};
use loadlab_pipeline::PipelineError;
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

/// A demo shows what it finds: on a busy laptop its runs are kept (saturated runs allowed),
/// and the report says which were contended and by whom, instead of failing the first
/// command a user runs.
pub const ALLOW_SATURATED: bool = true;

/// Why the demo could not start its study.
#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    /// A built-in target did not start (the work stops: exit 3).
    #[error(transparent)]
    Target(#[from] TargetError),
    /// The results directory cannot hold the demo's scenario (exit 2).
    #[error("cannot create {}: {source}", dir.display())]
    CreateDir {
        dir: PathBuf,
        source: std::io::Error,
    },
    /// The scenario file cannot be written (exit 2).
    #[error("cannot write {}: {source}", file.display())]
    Write {
        file: PathBuf,
        source: std::io::Error,
    },
}

impl DemoError {
    /// The results location cannot be used (the user can fix it), rather than the work
    /// stopping.
    pub fn is_bad_input(&self) -> bool {
        !matches!(self, DemoError::Target(_))
    }
}

fn start_target(workers: usize) -> Result<TargetHandle, DemoError> {
    Ok(loadlab_builtin_target::spawn(TargetConfig {
        listen: "127.0.0.1:0".parse().expect("valid address"),
        workers: Some(workers),
        service_time: Duration::from_millis(2),
        service_dist: ServiceDist::Exp,
        ..TargetConfig::default()
    })?)
}

/// The demo's two built-in targets, running in this process until shut down.
pub struct DemoTargets {
    /// 4 workers.
    pub baseline: TargetHandle,
    /// 2 workers.
    pub half: TargetHandle,
}

impl DemoTargets {
    pub fn start() -> Result<DemoTargets, DemoError> {
        Ok(DemoTargets {
            baseline: start_target(4)?,
            half: start_target(2)?,
        })
    }

    /// What the demo is about to do, for the user (two lines and a blank one).
    pub fn intro(&self) -> String {
        format!(
            "loadlab demo: two built-in targets, ~2 ms exponential service time — baseline with 4 workers on http://{}, half-workers with 2 on http://{}\n\
             a study: 800 arrivals/s, 2 variants × 6 runs of 3 s, interleaved — about a minute\n",
            self.baseline.addr, self.half.addr
        )
    }

    /// Writes the demo's scenario file (its study) under `results/demo/` (`results` as
    /// `--results` gives it, else the store's default); returns its path.
    pub fn write_scenario(&self, results: Option<&Path>) -> Result<PathBuf, DemoError> {
        let dir = loadlab_store::resolve_dir(results).join("demo");
        std::fs::create_dir_all(&dir).map_err(|source| DemoError::CreateDir {
            dir: dir.clone(),
            source,
        })?;
        let file = dir.join("demo.yaml");
        let (a, b) = (self.baseline.addr, self.half.addr);
        let text = DEMO
            .replace("{TARGET_A_ADDR}", &a.to_string())
            .replace("{TARGET_B_ADDR}", &b.to_string())
            .replace("{TARGET_A}", &format!("http://{a}"))
            .replace("{TARGET_B}", &format!("http://{b}"));
        std::fs::write(&file, &text).map_err(|source| DemoError::Write {
            file: file.clone(),
            source,
        })?;
        Ok(file)
    }

    pub fn shutdown(self) {
        self.baseline.shutdown();
        self.half.shutdown();
    }
}

/// The demo: starts the two targets, tells `started` about them, writes the scenario under
/// `results`, and gives its path to `study`, which runs it; the targets stop when it ends,
/// however it ends.
pub fn run<T, E: From<DemoError>>(
    results: Option<&Path>,
    started: impl FnOnce(&DemoTargets),
    study: impl FnOnce(&Path) -> Result<T, E>,
) -> Result<T, E> {
    let targets = DemoTargets::start()?;
    started(&targets);
    let outcome = targets
        .write_scenario(results)
        .map_err(E::from)
        .and_then(|file| study(&file));
    targets.shutdown();
    outcome
}

/// The HTML report of the demo's study (`study_json`): the one the study wrote beside it,
/// else written now.
pub fn report(study_json: &Path) -> Result<PathBuf, PipelineError> {
    let html = loadlab_pipeline::reports::html_beside(study_json);
    if html.exists() {
        Ok(html)
    } else {
        loadlab_pipeline::reports::write_report_beside(study_json).map(|(html, _)| html)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use loadlab_pipeline::study::{plan_of_file, PlanOverrides};

    #[test]
    fn the_study_is_two_variants_on_the_two_running_targets() {
        let tmp = tempfile::tempdir().unwrap();
        let addrs = std::cell::RefCell::new(Vec::new());
        let plan = run(
            Some(tmp.path()),
            |t| *addrs.borrow_mut() = vec![t.baseline.addr, t.half.addr],
            |file| {
                assert_eq!(file, tmp.path().join("demo").join("demo.yaml"));
                for addr in addrs.borrow().iter() {
                    std::net::TcpStream::connect(addr).expect("the target is running");
                }
                Ok::<_, DemoError>(
                    plan_of_file(file, &PlanOverrides::default()).expect("a valid study"),
                )
            },
        )
        .unwrap();
        let addrs = addrs.into_inner();
        let names: Vec<&str> = plan.variants.iter().map(|v| v.name.as_str()).collect();
        assert_eq!(names, ["baseline", "half-workers"]);
        assert_eq!(plan.repeat, 6);
        let text = std::fs::read_to_string(tmp.path().join("demo/demo.yaml")).unwrap();
        assert!(text.contains(&format!("target: http://{}\n", addrs[0])));
        assert!(text.contains(&format!("target: http://{}\n", addrs[1])));
        assert!(!text.contains("{TARGET"), "{text}");
    }

    #[test]
    fn an_unusable_results_directory_is_bad_input() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("a-file");
        std::fs::write(&file, "").unwrap();
        let err = run(
            Some(&file),
            |_| {},
            |_| -> Result<(), DemoError> { unreachable!("no study without its scenario") },
        )
        .unwrap_err();
        assert!(err.is_bad_input(), "{err}");
        assert!(err.to_string().starts_with("cannot create "), "{err}");
    }
}
