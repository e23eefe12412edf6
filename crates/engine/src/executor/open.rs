//! Open model: arrivals start at their intended times whatever the target does; latency is
//! measured from the intended time, so a slow target cannot hide its queue (no coordinated
//! omission). `max_in_flight` bounds concurrency; arrivals that cannot start are `dropped`.
//!
//! The scheduler buffers the next few milliseconds of the plan ([`ArrivalQueue`]) and wakes
//! once per batch window; the arrivals due then go to reusable runners ([`Runners`]), and a
//! runner that finishes its request takes the next due arrival itself, in the same wake-up.
//! See docs/open-model.md.

use super::arrival_queue::{ArrivalQueue, Next, LATE_START_TOLERANCE};
use super::runners::Runners;
use super::steered::Steered;
use super::{now, wait_all};
use crate::flow::Worker;
use crate::prepare::FlowStep;
use crate::steering::SteerWatch;
use crate::transport::Transport;
use loadlab_scenario::plan::{ArrivalTimes, Segment};
use loadlab_scenario::{Load, OpenLoad};
use std::cell::Cell;
use std::future::Future;
use std::rc::Rc;
use tokio::time::{Duration, Instant};

/// Up to this many arrivals a second per worker, plain HTTP/1.1 responses are read when the
/// scheduler wakes for arrivals instead of waking the worker themselves (see
/// http/deferred.rs). Measured against nginx (`bench/openmodel-ab.sh`, docs/open-model.md):
/// CPU per request 18–28 % lower from 5,000 to 30,000/s, send lag p99 about 0.9 ms in most
/// runs; at 40,000–50,000/s still 20–30 % lower, but send lag p99 reached 1.6–17 ms in 4 runs
/// of 6, as a wake-up's reads delay its arrivals.
pub const DEFERRED_READS_UP_TO: f64 = 30_000.0;

/// Whether a worker running `segment` of `load` reads its responses at its wake-ups: an open
/// load whose highest rate, in this worker's share, is at most [`DEFERRED_READS_UP_TO`].
pub fn defers_reads(load: &Load, segment: Segment) -> bool {
    let Load::Open(open) = load else {
        return false;
    };
    open.peak_rate() * segment.fraction() <= DEFERRED_READS_UP_TO
}

/// The scheduler keeps at least this much of the plan ahead of now in the queue...
const BUFFER_AHEAD: Duration = Duration::from_millis(4);
/// ...but never more than this many arrivals (a 10⁸/s plan must not fill memory).
const BUFFER_MAX: usize = 4096;

pub async fn run<T: Transport>(
    worker: Rc<Worker<T>>,
    load: OpenLoad,
    segment: Segment,
    seed: u64,
    active: Rc<Cell<u64>>,
    steer: Option<SteerWatch>,
) {
    let limit = segment.share(u64::from(load.max_in_flight)).max(1);
    let gate = first_pooled_origin(&worker);
    let queue = Rc::new(ArrivalQueue::new(active.clone(), limit, segment).with_gate(gate));
    let runners = Runners::new(worker.clone(), queue.clone());
    let mut plan = load.arrivals(segment, seed);
    // The plan is in the queue up to its end (or the run's).
    let mut planned_all = false;
    let mut steered = Steered::new(steer);
    let window = load.batch_window;
    loop {
        // Steered: the arrivals not yet started follow the load as driven from its change on.
        if let Some(replanned) = steered.replan(&worker, &queue, segment, seed) {
            plan = replanned;
            planned_all = false;
        }
        if !planned_all {
            planned_all = buffer_plan(&worker, &queue, &mut plan);
        }
        match queue.take_due(&worker) {
            Next::Start(arrival) => {
                runners.start(arrival);
                // Starting overdue arrivals never waits: give the started ones (and the
                // ticker, and cancellation) their turn now and then.
                tokio::task::coop::consume_budget().await;
            }
            Next::At(first) => {
                if steered
                    .sleep(&worker, wake_at(&worker, &queue, first, window))
                    .await
                {
                    // Responses that came since the last wake-up are read first: their
                    // connections come back for the arrivals this one starts.
                    worker.poll_reads().await;
                }
            }
            Next::Full => {
                // Every slot is taken (the target is slow): the next arrival waits for one,
                // until the run is over for it.
                wait_within_run(&worker, || runners.freed.notified()).await;
            }
            Next::NoConnection(origin) => {
                // A runner that gives a connection back starts the next arrival with it
                // itself; this wakes for connections that open (or fail) meanwhile.
                wait_within_run(&worker, || worker.pool.changed(origin)).await;
            }
            Next::Empty if planned_all => {
                if !steered.wait_while_dry(&worker).await {
                    break;
                }
            }
            Next::Empty => {}
            Next::Over => {
                if !worker.stopping.get() {
                    count_dropped(&worker, &queue, &plan, planned_all);
                }
                break;
            }
        }
    }
    finish(&worker, &runners, &active).await;
}

/// Puts the plan in the queue up to [`BUFFER_AHEAD`] from now (at most [`BUFFER_MAX`]
/// arrivals); true once all of it is in, up to its end or the run's.
#[inline]
fn buffer_plan<T: Transport>(
    worker: &Worker<T>,
    queue: &ArrivalQueue,
    plan: &mut ArrivalTimes<'_>,
) -> bool {
    let horizon = now() + BUFFER_AHEAD;
    while queue.buffered() < BUFFER_MAX && queue.last().is_none_or(|t| t < horizon) {
        match plan.next().map(|offset| worker.start + offset) {
            Some(intended) if intended < worker.end => queue.push(intended),
            _ => return true,
        }
    }
    false
}

/// When the scheduler wakes for the arrival due at `first`: a batch `window` later when
/// another follows within it (see [`OpenLoad::DEFAULT_BATCH_WINDOW`] for why), or earlier for
/// deferred reads, which ride the arrivals' wake-ups and get their own only when no arrival
/// comes soon after they are due.
#[inline]
fn wake_at<T: Transport>(
    worker: &Worker<T>,
    queue: &ArrivalQueue,
    first: Instant,
    window: Duration,
) -> Instant {
    let mut wake = match queue.second() {
        Some(second) if second <= first + window => first + window,
        _ => first,
    };
    if let Some(due) = worker.reads_due() {
        if due + window < wake {
            wake = due;
        }
    }
    wake
}

/// Waits for the future `wake` makes, or until the run is over for the next arrival, reading
/// responses as they come. `wake` is called inside the wait, so that what it waits on
/// (a `Notified`) is made only once the wait begins.
async fn wait_within_run<T: Transport, F: Future>(worker: &Worker<T>, wake: impl FnOnce() -> F) {
    worker
        .reading_as_they_come(async {
            tokio::select! {
                _ = wake() => {}
                _ = tokio::time::sleep_until(worker.end + LATE_START_TOLERANCE) => {}
            }
        })
        .await;
}

/// Counts as dropped the arrival that could not start within the run and every later one:
/// the plan knows how many there are, so they are counted at once.
fn count_dropped<T: Transport>(
    worker: &Worker<T>,
    queue: &ArrivalQueue,
    plan: &ArrivalTimes<'_>,
    planned_all: bool,
) {
    let rest = if planned_all { 0 } else { plan.remaining() };
    let dropped = queue.drain() + rest;
    worker.recorder.borrow_mut().iterations_dropped(dropped);
}

/// Ends the open model's run: idles (reading) until its end, lets every started arrival
/// begin its request, then stops and waits for the runners still in flight.
async fn finish<T: Transport>(worker: &Worker<T>, runners: &Runners<T>, active: &Rc<Cell<u64>>) {
    if now() < worker.end && !worker.stopping.get() {
        worker
            .while_reading(tokio::time::sleep_until(worker.end))
            .await;
    }
    worker.reading_as_they_come(runners.all_begun()).await;
    worker.stopping.set(true);
    runners.close();
    worker
        .reading_as_they_come(wait_all(active, &runners.freed))
        .await;
}

/// The origin every flow's first request goes to over a pooled connection (not a shared,
/// multiplexed one), before any think time: arrivals can then wait for its connections
/// before they start (see [`ArrivalQueue::with_gate`]).
pub(super) fn first_pooled_origin<T: Transport>(worker: &Worker<T>) -> Option<usize> {
    let scenario = &worker.scenario;
    let mut origin = None;
    for flow in &scenario.flows {
        let first = flow.steps.iter().find_map(|step| match step {
            FlowStep::Request(i) => Some(Some(scenario.requests[*i as usize].origin)),
            FlowStep::Think(_) | FlowStep::Ws(_) => Some(None),
            _ => None,
        })??;
        if origin.is_some_and(|o| o != first) || worker.transport.shared(first) {
            return None;
        }
        origin = Some(first);
    }
    origin.map(usize::from)
}
