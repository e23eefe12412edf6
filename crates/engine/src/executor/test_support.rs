//! Test support for the executors: a fake transport answering after a set service time in
//! paused tokio time, the one-request scenario it serves, a worker over it, and the loads
//! the tests run.

use super::test_totals::{totals, Totals};
use super::{run_worker, IntervalClock, WorkerPlan};
use crate::cancel::Cancel;
use crate::flow::Worker;
use crate::flow_picker::FlowPicker;
use crate::prepare::{FlowStep, PreparedFlow, PreparedRequest, PreparedScenario};
use crate::request::RenderedRequest;
use crate::transport::{Failure, Response, ResponseData, ResponseTiming, Transport};
use loadlab_metrics::{Recorder, StepInfo};
use loadlab_scenario::plan::Segment;
use loadlab_scenario::{ClosedLoad, ConnectionPolicy, Load, OpenLoad, RateStage, VuStage};
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::mpsc;
use tokio::time::{Duration, Instant};

/// Answers every request after `service` (the first one after `first_service` when set),
/// counting connections, and keeping when each request was sent.
#[derive(Default)]
pub(super) struct FakeTransport {
    pub service: Duration,
    pub first_service: Option<Duration>,
    pub connects: Rc<Cell<u64>>,
    pub sent: Rc<RefCell<Vec<Instant>>>,
}

impl Transport for FakeTransport {
    type Conn = ();

    async fn connect(&self, _origin: u16) -> Result<(), Failure> {
        self.connects.set(self.connects.get() + 1);
        Ok(())
    }

    async fn send(
        &self,
        _conn: &mut (),
        _req: &RenderedRequest<'_>,
        _keep: Option<&mut ResponseData>,
    ) -> Result<Response, Failure> {
        // Half the service time until the first byte, half receiving.
        let written = Instant::now();
        let service = match self.first_service {
            Some(first) if self.sent.borrow().is_empty() => first,
            _ => self.service,
        };
        self.sent.borrow_mut().push(written);
        tokio::time::sleep(service / 2).await;
        let first_byte = Instant::now();
        tokio::time::sleep(service - service / 2).await;
        Ok(Response {
            status: 200,
            timing: ResponseTiming {
                opened: None,
                written: Some(written),
                first_byte: Some(first_byte),
                received: None,
            },
            ..Response::default()
        })
    }
}

pub(super) fn scenario() -> PreparedScenario {
    PreparedScenario {
        origins: vec![crate::origin::Origin {
            tls: false,
            host: "127.0.0.1".into(),
            port: 1,
            host_header: "127.0.0.1:1".into(),
            version: loadlab_scenario::HttpVersion::Http1,
            shared: None,
        }],
        requests: vec![PreparedRequest::simple(
            0,
            0,
            crate::request::RequestParts::default(),
            Duration::from_secs(30),
            1 << 20,
        )],
        sessions: Vec::new(),
        flows: vec![PreparedFlow {
            name: "f".into(),
            weight: 1,
            steps: vec![FlowStep::Request(0)],
        }],
        steps: vec![StepInfo {
            name: "s".into(),
            ..StepInfo::default()
        }],
        connections: ConnectionPolicy::PerVu,
        data: Default::default(),
    }
}

pub(super) async fn run_fake(load: Load, service: Duration, duration: Duration) -> (Totals, u64) {
    let connects = Rc::new(Cell::new(0));
    let transport = FakeTransport {
        service,
        connects: connects.clone(),
        ..FakeTransport::default()
    };
    let recorder = run_with(transport, load, duration, Cancel::new(), Segment::WHOLE).await;
    (recorder, connects.get())
}

/// A worker running `prepared` over `transport` for `duration` from now.
pub(super) fn worker<T: Transport>(
    transport: T,
    prepared: PreparedScenario,
    duration: Duration,
) -> Worker<T> {
    let start = Instant::now();
    Worker {
        transport,
        picker: RefCell::new(FlowPicker::new(&prepared.flows)),
        pool: crate::idle_pool::IdlePool::new(prepared.origins.len()),
        scenario: Rc::new(prepared),
        recorder: RefCell::new(Recorder::new(1)),
        rng: RefCell::new(fastrand::Rng::with_seed(1)),
        start,
        end: start + duration,
        stopping: Cell::new(false),
        precise_timer: None,
        deferred: None,
        requests_begun: tokio::sync::Notify::new(),
    }
}

pub(super) async fn run_with<T: Transport>(
    transport: T,
    load: Load,
    duration: Duration,
    cancel: Cancel,
    segment: Segment,
) -> Totals {
    let worker = Rc::new(worker(transport, scenario(), duration));
    let (tx, rx) = mpsc::channel();
    let plan = WorkerPlan {
        load,
        segment,
        seed: 1,
        grace: Duration::from_secs(60),
        clock: IntervalClock::new(Duration::ZERO, Duration::from_secs(1)),
        steer: None,
    };
    tokio::task::LocalSet::new()
        .run_until(run_worker(worker.clone(), plan, tx, cancel))
        .await;
    totals(&rx)
}

/// [`run_with`], steered through `steering` (which the caller commands meanwhile).
pub(super) async fn run_steered<T: Transport>(
    transport: T,
    load: Load,
    duration: Duration,
    steering: &crate::steering::Steering,
) -> Totals {
    let worker = Rc::new(worker(transport, scenario(), duration));
    let cancel = Cancel::new();
    let driven = loadlab_scenario::steer::Driven::new(load.clone());
    steering.begin(worker.start, driven, cancel.clone());
    let (tx, rx) = mpsc::channel();
    let plan = WorkerPlan {
        load,
        segment: Segment::WHOLE,
        seed: 1,
        grace: Duration::from_secs(60),
        clock: IntervalClock::new(Duration::ZERO, Duration::from_secs(1)),
        steer: Some(steering.watch()),
    };
    run_worker(worker.clone(), plan, tx, cancel).await;
    totals(&rx)
}

/// Closed model starting at `start` VUs, with stages of (seconds, VUs).
pub(super) fn closed(start: u32, stages: &[(u64, u32)]) -> Load {
    Load::Closed(ClosedLoad {
        start_vus: start,
        stages: stages
            .iter()
            .map(|&(secs, vus)| VuStage {
                duration: Duration::from_secs(secs),
                vus,
            })
            .collect(),
        iterations_per_vu: None,
        shared_iterations: None,
        max_duration: Duration::from_secs(600),
        pace: None,
    })
}

pub(super) fn open(rate: f64, secs: u64, max_in_flight: u32) -> Load {
    Load::Open(OpenLoad {
        stages: vec![RateStage {
            duration: Duration::from_secs(secs),
            rate,
            ramp_to: None,
        }],
        poisson: false,
        max_in_flight,
        max_in_flight_given: true,
        max_arrivals: None,
        batch_window: OpenLoad::DEFAULT_BATCH_WINDOW,
    })
}
