//! The worker threads: each a single-threaded runtime running its split of this process's
//! segment from the common start, recording into its own histograms.

use super::EngineError;
use crate::cancel::Cancel;
use crate::executor::{defers_reads, run_worker, IntervalClock, Tick, WorkerPlan};
use crate::flow::Worker;
use crate::flow_picker::FlowPicker;
use crate::http::{client_for, DeferredIo, HttpTransport};
use crate::prepare::PreparedScenario;
use crate::steering::Steering;
use loadlab_metrics::{DeltaPool, Recorder, Reserve};
use loadlab_scenario::plan::Segment;
use loadlab_scenario::Scenario;
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

/// What every worker thread of this process shares: each runs its own split of the
/// process's segment from the same start.
pub(super) struct Workers<'a> {
    pub(super) scenario: &'a Scenario,
    pub(super) prepared: &'a PreparedScenario,
    pub(super) plan: &'a loadlab_scenario::plan::Plan,
    pub(super) process_segment: Segment,
    pub(super) threads: usize,
    pub(super) seed: u64,
    pub(super) clock: IntervalClock,
    pub(super) steering: Option<&'a Steering>,
    pub(super) start: Instant,
}

impl Workers<'_> {
    pub(super) fn spawn(
        &self,
        pool: &DeltaPool,
        ticks: mpsc::Sender<Tick>,
        cancel: &Cancel,
    ) -> Result<Vec<std::thread::JoinHandle<()>>, EngineError> {
        let grace = drain_grace(self.scenario);
        (0..self.threads)
            .map(|index| {
                let setup = WorkerSetup {
                    prepared: self.prepared.clone(),
                    scenario: self.scenario.clone(),
                    plan: WorkerPlan {
                        load: self.plan.load.clone(),
                        segment: self
                            .process_segment
                            .split(index as u32, self.threads as u32),
                        seed: self.seed,
                        grace,
                        clock: self.clock,
                        steer: self.steering.map(Steering::watch),
                    },
                    pool: pool.clone(),
                    start: self.start,
                    end: self.start + self.plan.duration(),
                    ticks: ticks.clone(),
                    cancel: cancel.clone(),
                };
                std::thread::Builder::new()
                    .name(format!("loadlab-worker-{index}"))
                    .spawn(move || worker_thread(setup))
                    .map_err(EngineError::Thread)
            })
            .collect()
    }
}

/// What one worker thread is given: its share of the plan and what its worker is built from.
struct WorkerSetup {
    prepared: PreparedScenario,
    scenario: Scenario,
    plan: WorkerPlan,
    pool: DeltaPool,
    start: Instant,
    /// No new iterations or requests after this instant.
    end: Instant,
    ticks: mpsc::Sender<Tick>,
    cancel: Cancel,
}

/// A worker thread: its own single-threaded runtime running its share of the plan.
fn worker_thread(setup: WorkerSetup) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a current-thread runtime builds");
    let local = tokio::task::LocalSet::new();
    // Its timers expire when due, not up to 50 µs later to be merged with others'.
    loadlab_timer::resolution::wake_promptly();
    local.block_on(&runtime, async move {
        let WorkerSetup {
            prepared,
            scenario,
            plan,
            pool,
            start,
            end,
            ticks,
            cancel,
        } = setup;
        // Built inside the runtime: its timer and deferred reads register with it.
        let worker = new_worker(prepared, &scenario, &plan, pool, start, end);
        run_worker(Rc::new(worker), plan, ticks, cancel).await;
    });
}

/// The worker of one thread, with its transport over this thread's share of each origin's
/// shared connections.
fn new_worker(
    prepared: PreparedScenario,
    scenario: &Scenario,
    plan: &WorkerPlan,
    pool: DeltaPool,
    start: Instant,
    end: Instant,
) -> Worker<HttpTransport> {
    let segment = plan.segment;
    let step_count = prepared.steps.len();
    let origin_count = prepared.origins.len();
    let tls = prepared.origins.iter().any(|o| o.tls);
    let mut origins = prepared.origins.clone();
    for shared in origins.iter_mut().filter_map(|o| o.shared.as_mut()) {
        shared.connections = segment.share(u64::from(shared.connections)).max(1) as u32;
    }
    let mut transport = HttpTransport::new(
        origins,
        step_count,
        scenario.source_addresses.clone(),
        scenario.insecure,
        segment.index as usize,
    )
    .with_http2_client(client_for(scenario.http.client, prepared.streams()));
    let deferred = defers_reads(&plan.load, segment)
        .then(|| DeferredIo::new().ok().map(Arc::new))
        .flatten();
    if let Some(io) = &deferred {
        transport = transport.with_deferred_reads(io.clone());
    }
    Worker {
        transport,
        picker: RefCell::new(FlowPicker::new(&prepared.flows)),
        scenario: Rc::new(prepared),
        recorder: RefCell::new({
            let mut recorder = Recorder::with_pool(step_count, pool);
            recorder.reserve(Reserve {
                steps: RESERVED_STEPS,
                tls,
            });
            recorder
        }),
        rng: RefCell::new(fastrand::Rng::with_seed(
            plan.seed.wrapping_add(u64::from(segment.index)),
        )),
        start: tokio::time::Instant::from_std(start),
        end: tokio::time::Instant::from_std(end),
        stopping: Cell::new(false),
        pool: crate::idle_pool::IdlePool::new(origin_count),
        precise_timer: loadlab_timer::PreciseTimer::new().ok(),
        deferred,
        requests_begun: tokio::sync::Notify::new(),
    }
}

/// The steps whose histograms a worker makes before the run rather than at their first value
/// (`Recorder::reserve`): the first few, so that a flow of many steps does not hold ~1.2 MB a
/// step for each of them from the start.
const RESERVED_STEPS: usize = 4;

/// How long the requests in flight when the plan ends may still take: the request timeout, at
/// most 30 s (and a little for the last response to be read).
pub(super) fn drain_grace(scenario: &Scenario) -> Duration {
    scenario.defaults.timeout.min(Duration::from_secs(30)) + Duration::from_millis(100)
}
