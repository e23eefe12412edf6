//! The coordinator: prepares the scenario, starts one worker thread per core, gathers
//! per-second snapshots for progress, merges the workers' recorders into one run result.

use crate::cancel::Cancel;
use crate::executor::{run_worker, WorkerPlan};
use crate::flow::{FlowPicker, Worker};
use crate::health::{
    available_cores, delivery_verdict, generator_verdict, max_rss_bytes, thread_cpu_seconds,
    GeneratorUsage, HealthLimits,
};
use crate::http::HttpTransport;
use crate::prepare::{PrepareError, PreparedScenario};
use loadlab_metrics::result::{Generator, IntervalStats, LoadInfo, RunMeta};
use loadlab_metrics::{IntervalSnapshot, Recorder, RunResult};
use loadlab_scenario::plan::Segment;
use loadlab_scenario::{Load, Scenario};
use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime};

pub struct RunOptions {
    /// Worker threads; default: enough for the load, at most the cores we may use.
    pub threads: Option<usize>,
    pub seed: u64,
    /// Scheduler lag p99 above this marks the generator saturated.
    pub max_lag: Duration,
    /// CPU use (percent of the cores used) at or above this marks the generator saturated.
    pub max_cpu_percent: f64,
    /// Called once per second with the last second's figures.
    pub progress: Option<ProgressCallback>,
}

impl Default for RunOptions {
    fn default() -> Self {
        Self {
            threads: None,
            seed: 0x5EED,
            max_lag: Duration::from_millis(10),
            max_cpu_percent: 90.0,
            progress: None,
        }
    }
}

/// Receives the figures of each completed second.
pub type ProgressCallback = Box<dyn FnMut(&Progress)>;

/// Live figures for the progress line.
#[derive(Debug, Clone)]
pub struct Progress {
    pub elapsed: Duration,
    pub planned: Duration,
    pub warmup: bool,
    pub rate: f64,
    pub p95_ms: f64,
    pub active: u64,
    pub total_requests: u64,
    pub total_failed: u64,
}

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error(transparent)]
    Prepare(#[from] PrepareError),
    #[error("cannot connect to {url}: {message}\n  hint: is the target running? Start the built-in one with `loadlab target`, or check --target")]
    Unreachable { url: String, message: String },
    #[error("cannot start worker thread: {0}")]
    Thread(std::io::Error),
}

impl EngineError {
    /// True when the target could not be reached (exit 3), as opposed to bad input (exit 2).
    pub fn is_unreachable(&self) -> bool {
        matches!(self, EngineError::Unreachable { .. })
    }
}

pub struct RunOutput {
    pub result: RunResult,
    /// Every check of every step with its failure count (over the measured time).
    pub checks: Vec<CheckCount>,
}

/// How often one check of one step failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckCount {
    pub step: String,
    pub check: String,
    pub failed: u64,
}

/// Runs the scenario's plan to completion, or until `cancel`, and summarises it.
pub fn run(
    scenario: &Scenario,
    mut options: RunOptions,
    cancel: &Cancel,
) -> Result<RunOutput, EngineError> {
    let prepared = Rc::new(PreparedScenario::new(scenario)?);
    preflight(&prepared)?;
    let plan = scenario.plan();
    let threads = options
        .threads
        .unwrap_or_else(|| default_threads(&plan.load))
        .max(1);
    let started_at = SystemTime::now();
    // A common start a little ahead, so every worker begins on the same instant.
    let start = Instant::now() + Duration::from_millis(20);
    let end = start + plan.duration();
    let warmup_end = start + plan.warmup.min(plan.duration());
    let grace = scenario.defaults.timeout.min(Duration::from_secs(30)) + Duration::from_millis(100);

    let (tx, rx) = mpsc::channel::<IntervalSnapshot>();
    let mut handles = Vec::new();
    for index in 0..threads {
        let tx = tx.clone();
        let prepared = (*prepared).clone();
        let scenario = scenario.clone();
        let load = plan.load.clone();
        let cancel = cancel.clone();
        let seed = options.seed;
        let handle = std::thread::Builder::new()
            .name(format!("loadlab-worker-{index}"))
            .spawn(move || {
                let cpu_start = thread_cpu_seconds();
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("a current-thread runtime builds");
                let local = tokio::task::LocalSet::new();
                let recorder = local.block_on(&runtime, async move {
                    let step_count = prepared.requests.len();
                    let origin_count = prepared.origins.len();
                    let transport = HttpTransport::new(
                        prepared.origins.clone(),
                        scenario.source_addresses.clone(),
                        scenario.insecure,
                        index,
                    );
                    let worker = Rc::new(Worker {
                        transport,
                        picker: RefCell::new(FlowPicker::new(&prepared.flows)),
                        scenario: Rc::new(prepared),
                        recorder: RefCell::new(Recorder::new(step_count)),
                        rng: RefCell::new(fastrand::Rng::with_seed(
                            seed.wrapping_add(index as u64),
                        )),
                        start: tokio::time::Instant::from_std(start),
                        warmup_end: tokio::time::Instant::from_std(warmup_end),
                        end: tokio::time::Instant::from_std(end),
                        stopping: Cell::new(false),
                        pool: RefCell::new((0..origin_count).map(|_| Vec::new()).collect()),
                        precise_timer: loadlab_timer::PreciseTimer::new().ok(),
                    });
                    let segment = Segment {
                        index: index as u32,
                        count: threads as u32,
                    };
                    run_worker(
                        worker.clone(),
                        WorkerPlan {
                            load,
                            segment,
                            seed,
                            grace,
                        },
                        tx,
                        cancel,
                    )
                    .await;
                    let recorder = worker.recorder.borrow().clone();
                    recorder
                });
                (recorder, thread_cpu_seconds() - cpu_start)
            })
            .map_err(EngineError::Thread)?;
        handles.push(handle);
    }
    drop(tx);

    let planned = plan.duration();
    let warmup_secs = plan.warmup.as_secs_f64();
    let mut pending: BTreeMap<u32, (IntervalSnapshot, usize)> = BTreeMap::new();
    let mut intervals: Vec<IntervalStats> = Vec::new();
    let (mut total_requests, mut total_failed) = (0u64, 0u64);
    let mut finish = |snapshot: &IntervalSnapshot, length: Duration, options: &mut RunOptions| {
        let warmup = f64::from(snapshot.index) < warmup_secs;
        let stats = IntervalStats::of(snapshot, length, warmup);
        total_requests += snapshot.requests;
        total_failed += snapshot.failed;
        if let Some(progress) = options.progress.as_mut() {
            progress(&Progress {
                elapsed: Duration::from_secs(u64::from(snapshot.index) + 1)
                    .min(planned.max(Duration::from_secs(1))),
                planned,
                warmup,
                rate: stats.rate,
                p95_ms: stats.latency_ms.p95,
                active: snapshot.active,
                total_requests,
                total_failed,
            });
        }
        intervals.push(stats);
    };
    loop {
        match rx.recv_timeout(Duration::from_millis(200)) {
            Ok(snapshot) => {
                let index = snapshot.index;
                let entry = pending.entry(index).or_insert_with(|| {
                    (
                        IntervalSnapshot {
                            requests: 0,
                            failed: 0,
                            active: 0,
                            ..snapshot.clone()
                        },
                        0,
                    )
                });
                if entry.1 == 0 {
                    entry.0 = snapshot;
                } else {
                    entry.0.merge(&snapshot);
                }
                entry.1 += 1;
                if entry.1 == threads {
                    let (snapshot, _) = pending.remove(&index).expect("present");
                    finish(&snapshot, Duration::from_secs(1), &mut options);
                }
            }
            Err(mpsc::RecvTimeoutError::Timeout) => continue,
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
    let finished_at = Instant::now();
    // Slices some workers never reached (they ended early) are complete now; the last one is partial.
    let last_length = |index: u32| {
        let slice_start = start + Duration::from_secs(u64::from(index));
        finished_at
            .saturating_duration_since(slice_start)
            .min(Duration::from_secs(1))
    };
    for (index, (snapshot, _)) in std::mem::take(&mut pending) {
        finish(
            &snapshot,
            last_length(index).max(Duration::from_millis(1)),
            &mut options,
        );
    }

    let mut merged = Recorder::new(prepared.requests.len());
    let mut cpu_seconds = 0.0;
    for handle in handles {
        let (recorder, cpu) = handle
            .join()
            .unwrap_or_else(|_| (Recorder::new(prepared.requests.len()), 0.0));
        merged.merge(&recorder);
        cpu_seconds += cpu;
    }
    let wall = finished_at.saturating_duration_since(start);
    let usage = GeneratorUsage {
        cpu_seconds,
        wall_seconds: wall.as_secs_f64(),
        threads: threads as u32,
    };
    let measured = finished_at.saturating_duration_since(warmup_end);
    let interrupted = cancel.is_cancelled();
    let scheduler_lag_p99 = if merged.scheduler_lag.is_empty() {
        0.0
    } else {
        merged.scheduler_lag.value_at_quantile(0.99) as f64 / 1000.0
    };
    let cpu_percent = usage.cpu_percent();
    let saturated = cpu_percent >= options.max_cpu_percent
        || scheduler_lag_p99 > options.max_lag.as_secs_f64() * 1e3;
    let meta = RunMeta {
        name: scenario.name.clone(),
        scenario_file: scenario.source.clone(),
        target: scenario
            .target
            .clone()
            .or_else(|| prepared.origins.first().map(|o| o.url())),
        started_at,
        measured,
        warmup: plan.warmup,
        interrupted,
        load: load_info(&plan.load),
        generator: Generator {
            cpu_percent,
            cpu_seconds,
            cores: available_cores() as u32,
            threads: threads as u32,
            saturated,
            scheduler_lag_ms_p99: scheduler_lag_p99,
            max_rss_bytes: max_rss_bytes(),
        },
        intervals,
        steps: prepared.steps.clone(),
    };
    let mut result = RunResult::build(&merged, meta);
    if interrupted {
        result
            .invalid_reasons
            .push("the run was interrupted (Ctrl-C): this is a partial result".into());
    }
    let limits = HealthLimits {
        max_cpu_percent: options.max_cpu_percent,
        max_lag_ms: options.max_lag.as_secs_f64() * 1e3,
    };
    result.invalid_reasons.extend(generator_verdict(
        cpu_percent,
        threads,
        scheduler_lag_p99,
        &limits,
    ));
    if let Load::Open(o) = &plan.load {
        if !interrupted {
            result.invalid_reasons.extend(delivery_verdict(
                o.expected_arrivals(),
                result.iterations.dropped,
                o.max_in_flight,
            ));
        }
    }
    for (i, set) in prepared.data.sets.iter().enumerate() {
        let refused = prepared.data.exhausted[i].load(std::sync::atomic::Ordering::Relaxed);
        if refused > 0 {
            result.invalid_reasons.push(format!(
                "data set `{}` (pick: unique) ran out after its {} rows: {refused} iteration(s) could not take a row and their VUs stopped; add rows, use fewer VUs or iterations, or `pick: sequential`",
                set.name,
                set.rows.len()
            ));
        }
    }
    result.valid = result.invalid_reasons.is_empty();
    let mut checks = Vec::new();
    for (req, rec) in prepared.requests.iter().zip(&merged.steps) {
        for (j, c) in req.checks.iter().enumerate() {
            let failed = rec.check_failures.get(j).copied().unwrap_or(0);
            if let Some(step) = result.steps.get_mut(req.step as usize) {
                step.checks.push(loadlab_metrics::result::CheckResult {
                    check: c.describe(),
                    failed,
                });
            }
            checks.push(CheckCount {
                step: prepared.steps[req.step as usize].name.clone(),
                check: c.describe(),
                failed,
            });
        }
    }
    Ok(RunOutput { result, checks })
}

fn default_threads(load: &Load) -> usize {
    let cores = available_cores();
    let wanted = match load {
        Load::Closed(c) => c.max_vus() as usize,
        Load::Open(o) => {
            let peak = o
                .stages
                .iter()
                .map(|s| s.rate.max(s.ramp_to.unwrap_or(0.0)))
                .fold(0.0, f64::max);
            (peak / 4000.0).ceil() as usize
        }
        Load::Burst(b) => (b.count / 2000 + 1) as usize,
    };
    wanted.clamp(1, cores)
}

fn load_info(load: &Load) -> LoadInfo {
    let mut info = LoadInfo {
        model: load.model_name().into(),
        ..LoadInfo::default()
    };
    match load {
        Load::Closed(c) => {
            info.planned_duration_s = c.duration().as_secs_f64();
            info.max_vus = Some(c.max_vus());
        }
        Load::Open(o) => {
            info.planned_duration_s = o.duration().as_secs_f64();
            info.peak_rate = Some(
                o.stages
                    .iter()
                    .map(|s| s.rate.max(s.ramp_to.unwrap_or(0.0)))
                    .fold(0.0, f64::max),
            );
            info.planned_arrivals = Some(o.expected_arrivals());
            info.max_in_flight = Some(o.max_in_flight);
        }
        Load::Burst(b) => {
            info.planned_duration_s = b.max_duration.as_secs_f64();
            info.count = Some(b.count);
        }
    }
    info
}

/// Connects once to every origin before the load starts, so an unreachable target is one
/// clear message instead of a wall of errors.
fn preflight(prepared: &PreparedScenario) -> Result<(), EngineError> {
    for origin in &prepared.origins {
        if let Err(e) = std::net::TcpStream::connect_timeout(&origin.addr, Duration::from_secs(3)) {
            let message = match e.kind() {
                std::io::ErrorKind::ConnectionRefused => {
                    format!("connection refused at {}", origin.addr)
                }
                std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock => {
                    format!("no answer from {} within 3 s", origin.addr)
                }
                _ => format!("{e} ({})", origin.addr),
            };
            return Err(EngineError::Unreachable {
                url: origin.url(),
                message,
            });
        }
    }
    Ok(())
}
