//! The open-model scheduler in paused time: whatever the rate, the batch window and whether
//! runners chain arrivals themselves, it starts exactly the planned arrivals, each from its
//! planned intended time, never early, and at most a batch window (plus the timer's tick) late.

use super::test_support::{open, run_with};
use super::test_totals::Totals;
use crate::cancel::Cancel;
use crate::idle_pool::{INITIAL_OPENING, MAX_OPENING, MIN_OPENING};
use crate::request::RenderedRequest;
use crate::transport::{Failure, Response, ResponseData, Transport};
use loadlab_scenario::plan::Segment;
use loadlab_scenario::{Load, OpenLoad};
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use tokio::time::{Duration, Instant};

/// Answers after `service`, remembering when each request was sent; connections take
/// `connect` to open, and how many open at once is counted.
#[derive(Default)]
struct Stamps {
    service: Duration,
    sent: Rc<RefCell<Vec<Instant>>>,
    connect: Duration,
    connects: Rc<Cell<u64>>,
    opening: Rc<Cell<u64>>,
    most_opening: Rc<Cell<u64>>,
    /// Every n-th connect (n, how long) hangs, as one whose SYN the target dropped.
    hang_every: Option<(u64, Duration)>,
    /// Requests to this origin share multiplexed connections.
    shared: Option<u16>,
}

impl Transport for Stamps {
    type Conn = ();

    async fn connect(&self, _origin: u16) -> Result<(), Failure> {
        self.connects.set(self.connects.get() + 1);
        self.opening.set(self.opening.get() + 1);
        self.most_opening
            .set(self.most_opening.get().max(self.opening.get()));
        let took = match self.hang_every {
            Some((n, hang)) if self.connects.get().is_multiple_of(n) => hang,
            _ => self.connect,
        };
        if !took.is_zero() {
            tokio::time::sleep(took).await;
        }
        self.opening.set(self.opening.get() - 1);
        Ok(())
    }

    /// What the connect took on the wire, as the real transport reports it: the sleep above
    /// rounds up to tokio's 1 ms tick.
    fn connect_time(&self, _conn: &()) -> Option<Duration> {
        Some(self.connect)
    }

    fn shared(&self, origin: u16) -> bool {
        self.shared == Some(origin)
    }

    async fn send(
        &self,
        _conn: &mut (),
        _req: &RenderedRequest<'_>,
        _keep: Option<&mut ResponseData>,
    ) -> Result<Response, Failure> {
        self.sent.borrow_mut().push(Instant::now());
        if !self.service.is_zero() {
            tokio::time::sleep(self.service).await;
        }
        Ok(Response {
            status: 200,
            ..Response::default()
        })
    }
}

/// tokio's timer (paused-time tests have no precise timer) rounds wake-ups up to its 1 ms tick.
const TIMER_TICK: Duration = Duration::from_millis(1);

#[tokio::test(start_paused = true)]
async fn dense_schedules_start_exactly_the_planned_arrivals_at_their_intended_times() {
    // (arrivals/s, service time): sparse, dense, far denser than the timer's tick; requests
    // shorter than the gaps (runners idle between) and longer (runners chain arrivals).
    let cases = [
        (500.0_f64, Duration::from_micros(100)),
        (5_000.0, Duration::from_micros(50)),
        (5_000.0, Duration::from_millis(3)),
        (100_000.0, Duration::ZERO),
        (100_000.0, Duration::from_micros(30)),
        (100_000.0, Duration::from_millis(2)),
        (1_000_000.0, Duration::from_micros(5)),
    ];
    for (rate, service) in cases {
        // At most 10,000 arrivals a case: the suite stays fast in a debug build.
        let run_for = Duration::from_secs_f64((10_000.0 / rate).min(0.2));
        let load = constant_rate(rate, run_for);
        let plan: Vec<Duration> = load.arrivals(Segment::WHOLE, 1).collect();
        let (start, sent, totals) = sends_of(load, run_for, service).await;
        let case = format!("{rate}/s, service {service:?}");
        assert_eq!(sent.len(), plan.len(), "{case}: every planned arrival sent");
        assert_eq!(totals.iterations_dropped, 0, "{case}");
        assert_eq!(totals.iterations_completed, plan.len() as u64, "{case}");
        assert_eq!(totals.scheduler_lag.len(), plan.len() as u64, "{case}");
        // Arrivals start in plan order: the k-th send is the k-th arrival.
        let mut worst = Duration::ZERO;
        for (k, (at, offset)) in sent.iter().zip(&plan).enumerate() {
            let intended = start + *offset;
            assert!(*at >= intended, "{case}: arrival {k} sent early");
            worst = worst.max(*at - intended);
        }
        assert!(
            worst <= OpenLoad::DEFAULT_BATCH_WINDOW + TIMER_TICK,
            "{case}: an arrival started {worst:?} late"
        );
        // Each request's lag is measured from its own intended time: the worst recorded lag
        // is the worst lag of the sends (up to HDR precision).
        let worst_us = worst.as_micros() as u64;
        let recorded = totals.lag.max();
        assert!(
            recorded.abs_diff(worst_us) <= 1 + worst_us / 500,
            "{case}: recorded lag max {recorded} µs, sends show {worst_us} µs"
        );
        // Latency = lag + service time, request by request.
        let step = &totals.steps[0];
        let expected_max = worst_us + step.service.max();
        assert!(
            step.latency.max() <= expected_max + 1 + expected_max / 500,
            "{case}: latency max {} µs above lag + service {expected_max} µs",
            step.latency.max()
        );
        assert!(step.latency.min() >= step.service.min(), "{case}");
    }
}

#[tokio::test(start_paused = true)]
async fn a_full_set_of_slots_delays_arrivals_without_blaming_the_scheduler_and_drops_the_rest() {
    // 10,000/s for 100 ms, at most 5 in flight, 10 ms each: 500 slots·s⁻¹, so about 50 of the
    // 1,000 planned arrivals start and the rest are dropped — counted, not lost.
    let load = match open(10_000.0, 1, 5) {
        Load::Open(mut o) => {
            o.stages[0].duration = Duration::from_millis(100);
            o
        }
        _ => unreachable!(),
    };
    let sent = Rc::new(RefCell::new(Vec::new()));
    let totals = run_with(
        Stamps {
            service: Duration::from_millis(10),
            sent: sent.clone(),
            ..Stamps::default()
        },
        Load::Open(load),
        Duration::from_millis(100),
        Cancel::new(),
        Segment::WHOLE,
    )
    .await;
    let started = sent.borrow().len() as u64;
    assert_eq!(started + totals.iterations_dropped, 1_000);
    assert!((50..=60).contains(&started), "started {started}");
    // Every arrival that found all five slots taken, once: all but the first five started,
    // and the first of the dropped ones (the others were never reached before the end).
    assert_eq!(totals.delayed_by_max_in_flight, started - 5 + 1);
    assert!(
        totals.lag.max() >= 90_000,
        "send lag includes the wait for a slot"
    );
    assert!(
        totals.scheduler_lag.max() <= 2_000,
        "scheduler lag {} µs",
        totals.scheduler_lag.max()
    );
}

/// A constant rate for `run_for` (at most 100,000 in flight).
/// The load's batch window is the scheduler's: a wide one starts dense arrivals that much
/// late, together; a window of 0 starts each at its own time (within the paused timer's
/// tick). Lag is measured from each arrival's intended time either way.
#[tokio::test(start_paused = true)]
async fn the_loads_batch_window_bounds_how_late_dense_arrivals_start() {
    let run_for = Duration::from_millis(200);
    for (window, least, most) in [
        (Duration::ZERO, Duration::ZERO, TIMER_TICK),
        (
            Duration::from_millis(5),
            Duration::from_millis(4),
            Duration::from_millis(5) + TIMER_TICK,
        ),
    ] {
        let mut load = constant_rate(1_000.0, run_for);
        load.batch_window = window;
        let plan: Vec<Duration> = load.arrivals(Segment::WHOLE, 1).collect();
        // Answered at once: a runner finishing later would start a due arrival itself.
        let (start, sent, totals) = sends_of(load, run_for, Duration::ZERO).await;
        assert_eq!(
            sent.len(),
            plan.len(),
            "window {window:?}: every arrival sent"
        );
        let worst = sent
            .iter()
            .zip(&plan)
            .map(|(at, offset)| *at - (start + *offset))
            .max()
            .unwrap();
        assert!(
            (least..=most).contains(&worst),
            "window {window:?}: the latest arrival started {worst:?} late"
        );
        let recorded = Duration::from_micros(totals.lag.max());
        assert!(
            recorded.abs_diff(worst) <= Duration::from_micros(20),
            "window {window:?}: recorded lag max {recorded:?}, sends show {worst:?}"
        );
    }
}

/// Runs `load` for `run_for` against requests taking `service`: when it began, when each
/// request was sent, and the totals.
async fn sends_of(
    load: OpenLoad,
    run_for: Duration,
    service: Duration,
) -> (Instant, Vec<Instant>, Totals) {
    let sent = Rc::new(RefCell::new(Vec::new()));
    let start = Instant::now();
    let totals = run_with(
        Stamps {
            service,
            sent: sent.clone(),
            ..Stamps::default()
        },
        Load::Open(load),
        run_for,
        Cancel::new(),
        Segment::WHOLE,
    )
    .await;
    let sent = sent.take();
    (start, sent, totals)
}

fn constant_rate(rate: f64, run_for: Duration) -> OpenLoad {
    match open(rate, 1, 100_000) {
        Load::Open(mut o) => {
            o.stages[0].duration = run_for;
            o
        }
        _ => unreachable!(),
    }
}

/// 50 arrivals a ms for `run_for`, each answered by `stamps` (1 ms requests), the run given
/// `grace` more to finish; every planned arrival must start. (planned arrivals, totals).
async fn fifty_a_ms(stamps: Stamps, run_for: Duration, grace: Duration) -> (u64, Totals) {
    let load = constant_rate(50_000.0, run_for);
    let planned = load.arrivals(Segment::WHOLE, 1).count() as u64;
    let stamps = Stamps {
        service: Duration::from_millis(1),
        ..stamps
    };
    let totals = run_with(
        stamps,
        Load::Open(load),
        run_for + grace,
        Cancel::new(),
        Segment::WHOLE,
    )
    .await;
    assert_eq!(totals.iterations_completed, planned, "every arrival starts");
    assert_eq!(totals.iterations_dropped, 0);
    (planned, totals)
}

/// 50 arrivals a ms for 100 ms, connects taking `connect`: (connections opened, most
/// opening at once, planned arrivals, totals).
async fn open_with_connects_of(connect: Duration) -> (u64, u64, u64, Totals) {
    let connects = Rc::new(Cell::new(0));
    let most_opening = Rc::new(Cell::new(0));
    let stamps = Stamps {
        connect,
        connects: connects.clone(),
        most_opening: most_opening.clone(),
        ..Stamps::default()
    };
    let (planned, totals) = fifty_a_ms(stamps, Duration::from_millis(100), Duration::ZERO).await;
    (connects.get(), most_opening.get(), planned, totals)
}

#[tokio::test(start_paused = true)]
async fn fast_connects_are_opened_a_few_at_once() {
    // A 50 µs connect (loopback): opening is bound by CPU, so a few at once (here each takes
    // tokio's 1 ms tick, not 50 µs); they still open the 50 connections 50 arrivals a ms need
    // within a dozen ms.
    let (connects, most_opening, _, totals) =
        open_with_connects_of(Duration::from_micros(50)).await;
    assert!(
        most_opening <= MIN_OPENING as u64,
        "{most_opening} opening at once"
    );
    // The 50 needed, and as many again while the backlog of the first dozen ms drains (4
    // a ms); not one per arrival (5,000).
    assert!((50..=120).contains(&connects), "{connects} connections");
    // Service time: the request, plus the connect (a 1 ms tick here) for those that opened
    // one; never the wait for a connection.
    let step = &totals.steps[0];
    assert!(step.service.max() <= 2_100, "{} µs", step.service.max());
    assert!(step.latency.max() > 2_100, "{} µs", step.latency.max());
    // The arrivals that waited were served oldest first: none waited much longer than the
    // backlog of the first dozen ms takes to drain (8.5 ms here). When a runner that gave a
    // connection back took it again for a younger arrival, the oldest waited 26 ms.
    assert!(
        step.latency.max() <= 12_000,
        "latency max {} µs: an older arrival waited behind younger ones",
        step.latency.max()
    );
    assert!(totals.delayed_by_connect_limit > 0);
    // Held for a connection is not the scheduler's lateness.
    assert!(
        totals.scheduler_lag.max()
            <= (OpenLoad::DEFAULT_BATCH_WINDOW + TIMER_TICK).as_micros() as u64,
        "scheduler lag {} µs",
        totals.scheduler_lag.max()
    );
}

#[tokio::test(start_paused = true)]
async fn slow_connects_do_not_make_every_arrival_open_a_connection() {
    // 5 ms connects (a long round trip): opening a connection per arrival while the first ones
    // open would open 250 before any is usable. INITIAL_OPENING open before any connect is
    // timed; then, a round trip being long, up to MAX_OPENING a round while arrivals wait, so
    // the pool catches up with the backlog in a few round trips. The arrivals beyond them take
    // the first connection free.
    let (connects, most_opening, planned, totals) =
        open_with_connects_of(Duration::from_millis(5)).await;
    let (initial, cap) = (INITIAL_OPENING as u64, MAX_OPENING as u64);
    assert!(
        most_opening > initial && most_opening <= cap,
        "{most_opening} opening at once"
    );
    // Rounds of 16, 64, 64, 64 while the backlog of the first rounds drains, then none.
    assert!(
        connects <= initial + 3 * cap && connects < 250,
        "{connects} connections opened for {planned} arrivals"
    );
    assert!(totals.delayed_by_connect_limit > 0);
    // The waits are in the latency (from the intended time), not in the service time, and
    // not blamed on the scheduler.
    let step = &totals.steps[0];
    assert!(
        step.latency.max() >= 5_000,
        "latency max {} µs",
        step.latency.max()
    );
    assert!(
        step.service.max() <= 6_100,
        "service time max {} µs includes a wait",
        step.service.max()
    );
    assert!(totals.scheduler_lag.max() <= 2_000);
}

#[tokio::test(start_paused = true)]
async fn connects_stuck_on_a_dropped_syn_do_not_stop_the_others() {
    // Every 5th connect hangs 1 s (a SYN dropped by a full accept queue is sent again after
    // 1 s), the others take 50 µs: at most 4 open at once, so 4 hung connects would hold
    // every place for a second and the arrivals behind them would wait with them. A connect
    // this slow stops counting after 50 ms: only the requests that opened the hung
    // connections wait a second.
    let connects = Rc::new(Cell::new(0));
    let stamps = Stamps {
        connect: Duration::from_micros(50),
        connects: connects.clone(),
        hang_every: Some((5, Duration::from_secs(1))),
        ..Stamps::default()
    };
    let (_, totals) = fifty_a_ms(stamps, Duration::from_millis(300), Duration::from_secs(2)).await;
    let hung = connects.get() / 5;
    let step = &totals.steps[0];
    // Those behind the hung connects do not wait for them: 262 ms at p99 when a woken waiter
    // went to the back of the queue, 63 ms held in order.
    assert!(
        step.latency.value_at_quantile(0.99) <= 100_000,
        "latency p99 {} µs",
        step.latency.value_at_quantile(0.99)
    );
    let waited_a_second = step.latency.len() - step.latency.count_between(0, 500_000);
    assert!(
        waited_a_second <= hung,
        "{waited_a_second} requests waited ≥ 0.5 s behind {hung} hung connects ({} opened)",
        connects.get()
    );
}

#[test]
fn arrivals_wait_for_a_connection_before_starting_only_when_every_first_request_is_pooled() {
    use crate::prepare::{FlowStep, PreparedFlow};
    use loadlab_scenario::ThinkTime;
    let think = FlowStep::Think(ThinkTime {
        min: Duration::from_millis(1),
        max: Duration::from_millis(1),
    });
    let flow = |steps: Vec<FlowStep>| PreparedFlow {
        name: "f".into(),
        weight: 1,
        steps,
    };
    // Requests 0 and 1 go to origins 0 and 1.
    let to = |i: u16| FlowStep::Request(i);
    let cases: Vec<(&str, Vec<PreparedFlow>, Option<usize>)> = vec![
        ("one request", vec![flow(vec![to(0)])], Some(0)),
        (
            "then others",
            vec![flow(vec![to(0), think.clone(), to(1)])],
            Some(0),
        ),
        (
            "inside a loop and a once block",
            vec![flow(vec![
                FlowStep::Loop { count: 2 },
                FlowStep::Once { id: 0, end: 3 },
                to(0),
                FlowStep::OnceEnd { id: 0 },
                FlowStep::LoopEnd { start: 0 },
            ])],
            Some(0),
        ),
        (
            "two flows, one origin",
            vec![flow(vec![to(0)]), flow(vec![to(0), to(1)])],
            Some(0),
        ),
        (
            "a think first",
            vec![flow(vec![think.clone(), to(0)])],
            None,
        ),
        (
            "two flows, two origins",
            vec![flow(vec![to(0)]), flow(vec![to(1)])],
            None,
        ),
        ("a shared origin", vec![flow(vec![to(1)])], None),
        ("no request", vec![flow(vec![think.clone()])], None),
    ];
    for (case, flows, want) in cases {
        let mut prepared = super::test_support::scenario();
        let second_origin = prepared.origins[0].clone();
        prepared.origins.push(second_origin);
        let mut second = prepared.requests[0].clone();
        second.origin = 1;
        prepared.requests.push(second);
        prepared.flows = flows;
        // Requests to origin 1 share multiplexed connections; origin 0's are pooled.
        let shared_second = Stamps {
            shared: Some(1),
            ..Stamps::default()
        };
        let worker = super::test_support::worker(shared_second, prepared, Duration::from_secs(1));
        assert_eq!(super::open::first_pooled_origin(&worker), want, "{case}");
    }
}

#[test]
fn responses_are_read_at_wake_ups_only_for_open_loads_up_to_the_bound_per_worker() {
    use super::open::{defers_reads, DEFERRED_READS_UP_TO};
    use loadlab_scenario::{BurstLoad, ClosedLoad, RateStage};
    let open = |stages: &[(f64, Option<f64>)]| {
        Load::Open(OpenLoad {
            stages: stages
                .iter()
                .map(|&(rate, ramp_to)| RateStage {
                    duration: Duration::from_secs(1),
                    rate,
                    ramp_to,
                })
                .collect(),
            poisson: false,
            max_in_flight: 1000,
            max_in_flight_given: true,
            max_arrivals: None,
            batch_window: OpenLoad::DEFAULT_BATCH_WINDOW,
        })
    };
    let whole = Segment::WHOLE;
    let half = Segment { index: 1, count: 2 };
    let bound = DEFERRED_READS_UP_TO;
    let cases: Vec<(&str, Load, Segment, bool)> = vec![
        ("5,000/s", open(&[(5_000.0, None)]), whole, true),
        ("at the bound", open(&[(bound, None)]), whole, true),
        ("above it", open(&[(bound + 1.0, None)]), whole, false),
        (
            "a ramp that ends above it",
            open(&[(100.0, Some(bound * 2.0))]),
            whole,
            false,
        ),
        (
            "a later stage above it",
            open(&[(100.0, None), (bound * 3.0, None)]),
            whole,
            false,
        ),
        (
            "twice the bound over two workers",
            open(&[(bound * 2.0, None)]),
            half,
            true,
        ),
        (
            "closed",
            Load::Closed(ClosedLoad {
                start_vus: 1,
                stages: Vec::new(),
                iterations_per_vu: Some(1),
                shared_iterations: None,
                max_duration: Duration::from_secs(1),
                pace: None,
            }),
            whole,
            false,
        ),
        (
            "burst",
            Load::Burst(BurstLoad {
                count: 10,
                max_duration: Duration::from_secs(1),
            }),
            whole,
            false,
        ),
    ];
    for (case, load, segment, want) in cases {
        assert_eq!(defers_reads(&load, segment), want, "{case}");
    }
}
