//! Executors in paused tokio time with a fake transport: exact, deterministic timing.

use super::test_support::{closed, open, run_fake, run_with, FakeTransport};
use super::test_totals::Totals;
use crate::cancel::Cancel;
use crate::request::RenderedRequest;
use crate::transport::{Failure, Response, ResponseData, Transport};
use loadlab_scenario::plan::Segment;
use loadlab_scenario::{BurstLoad, ClosedLoad, Load, VuStage};
use std::cell::Cell;
use std::rc::Rc;
use std::sync::mpsc;
use tokio::time::{Duration, Instant};

/// Fails every connection at once, without awaiting anything (like a source address that
/// cannot be bound): the case that made closed-model VUs spin forever.
struct FailsAtOnce;

impl Transport for FailsAtOnce {
    type Conn = ();

    async fn connect(&self, _origin: u16) -> Result<(), Failure> {
        Err(Failure::new(
            loadlab_metrics::ErrorKind::Io,
            "bind: cannot assign requested address",
        ))
    }

    async fn send(
        &self,
        _conn: &mut (),
        _req: &RenderedRequest<'_>,
        _keep: Option<&mut ResponseData>,
    ) -> Result<Response, Failure> {
        unreachable!("never connected")
    }
}

/// Runs `test` on its own thread with a real-time runtime (a spinning VU stops paused time
/// as well, which would hide the bug); fails, instead of hanging the suite, when it does not
/// finish within `limit`.
fn finishes_within<F>(limit: std::time::Duration, test: impl FnOnce() -> F + Send + 'static)
where
    F: std::future::Future<Output = ()>,
{
    let (done_tx, done_rx) = mpsc::channel();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        runtime.block_on(test());
        let _ = done_tx.send(());
    });
    done_rx
        .recv_timeout(limit)
        .expect("the run did not finish: a VU spins without yielding");
}

#[test]
fn closed_vus_whose_requests_fail_without_waiting_stop_at_the_end() {
    finishes_within(std::time::Duration::from_secs(20), || async {
        let started = Instant::now();
        let recorder = run_with(
            FailsAtOnce,
            closed(2, &[(1, 2)]),
            Duration::from_millis(300),
            Cancel::new(),
            Segment::WHOLE,
        )
        .await;
        let took = Instant::now() - started;
        assert!(took < Duration::from_secs(1), "took {took:?}");
        let step = &recorder.steps[0];
        assert!(step.requests > 0);
        assert_eq!(step.failed, step.requests);
    });
}

#[test]
fn closed_vus_whose_requests_fail_without_waiting_stop_on_cancel() {
    finishes_within(std::time::Duration::from_secs(20), || async {
        let cancel = Cancel::new();
        let started = Instant::now();
        let canceller = {
            let cancel = cancel.clone();
            async move {
                tokio::time::sleep(Duration::from_millis(100)).await;
                cancel.cancel();
            }
        };
        let run = run_with(
            FailsAtOnce,
            closed(2, &[(3600, 2)]),
            Duration::from_secs(3600),
            cancel,
            Segment::WHOLE,
        );
        let (_, recorder) = tokio::join!(canceller, run);
        let stopped_after = Instant::now() - started;
        assert!(
            stopped_after < Duration::from_secs(1),
            "stopped {stopped_after:?} after start, cancelled at 100 ms"
        );
        assert!(recorder.steps[0].requests > 0);
    });
}

#[tokio::test(start_paused = true)]
async fn open_model_counts_arrivals_that_cannot_start_at_once() {
    // 10⁸ arrivals planned, 10 ever in flight, each taking longer than the run: all but the
    // first 10 are dropped — counted from the plan, not one by one.
    let wall = std::time::Instant::now();
    let (recorder, _) = run_fake(
        open(1e8, 1, 10),
        Duration::from_secs(5),
        Duration::from_secs(1),
    )
    .await;
    assert_eq!(recorder.iterations_dropped, 100_000_000 - 10);
    assert!(
        wall.elapsed() < std::time::Duration::from_secs(2),
        "{:?}",
        wall.elapsed()
    );
}

#[tokio::test(start_paused = true)]
async fn open_model_on_a_healthy_target_measures_service_time() {
    let (rec, connects) = run_fake(
        open(100.0, 1, 1000),
        Duration::from_millis(10),
        Duration::from_secs(1),
    )
    .await;
    let step = &rec.steps[0];
    assert_eq!(step.requests, 100);
    assert_eq!(rec.iterations_dropped, 0);
    assert!(
        step.latency.max() - step.latency.min() <= 10,
        "all equal up to HDR precision"
    );
    assert!(
        (9_990..=10_010).contains(&step.latency.value_at_quantile(0.99)),
        "{}",
        step.latency.value_at_quantile(0.99)
    );
    assert!(rec.lag.max() <= 1, "on time (1 µs is the histogram floor)");
    // One request at a time, so one pooled connection serves them all.
    assert_eq!(connects, 1);
}

#[tokio::test(start_paused = true)]
async fn open_model_measures_from_intended_time_when_the_target_stalls() {
    // 100 arrivals/s but only 2 in flight and 100 ms each: capacity 20/s, so arrivals queue.
    let (rec, _) = run_fake(
        open(100.0, 1, 2),
        Duration::from_millis(100),
        Duration::from_secs(1),
    )
    .await;
    let step = &rec.steps[0];
    assert_eq!(
        step.requests + rec.iterations_dropped,
        100,
        "every arrival is either measured or dropped"
    );
    assert!(
        rec.iterations_dropped > 70,
        "dropped {}",
        rec.iterations_dropped
    );
    assert!(rec.delayed_by_max_in_flight > 0);
    // The first two went out on time: 100 ms. Later ones waited for a slot, and the wait counts.
    assert!(
        (99_900..=100_100).contains(&step.latency.min()),
        "min {}",
        step.latency.min()
    );
    assert!(
        step.latency.max() >= 500_000,
        "max latency {} µs should include the queueing",
        step.latency.max()
    );
    assert!(
        step.service.max() <= 100_100,
        "service time stays 100 ms: {}",
        step.service.max()
    );
    assert!(rec.lag.max() >= 400_000);
    // Waiting for a slot is the target's doing: the scheduler itself was never late, so
    // the generator is not blamed for the send lag.
    assert!(
        rec.scheduler_lag.max() < 2_000,
        "scheduler lag {} µs includes the wait for max_in_flight",
        rec.scheduler_lag.max()
    );
}

#[tokio::test(start_paused = true)]
async fn a_paced_vu_waits_for_its_slot_and_never_catches_up() {
    // 2 VUs for 1 s: (pace, service time) → requests completed.
    let ms = Duration::from_millis;
    for (pace, service, want) in [
        // Early: each VU waits for its slots at 0, 100, …, 900 ms.
        (Some(ms(100)), ms(10), 18..=20),
        // Late: back to back (150 ms each, 7 a VU), as without a pace.
        (Some(ms(100)), ms(150), 13..=14),
        // No pace: as fast as the target answers.
        (None, ms(10), 190..=200),
    ] {
        let Load::Closed(mut load) = closed(2, &[(1, 2)]) else {
            unreachable!()
        };
        load.pace = pace;
        let (rec, _) = run_fake(Load::Closed(load), service, Duration::from_secs(1)).await;
        let n = rec.steps[0].requests;
        assert!(
            want.contains(&n),
            "pace {pace:?}, service {service:?}: {n} requests"
        );
    }
    // One VU paced at 100 ms whose first answer takes 350 ms: the slots at 100, 200 and
    // 300 ms are missed whole and never sent; the schedule goes on from 350 ms.
    let Load::Closed(mut load) = closed(1, &[(1, 1)]) else {
        unreachable!()
    };
    load.pace = Some(ms(100));
    let transport = FakeTransport {
        service: ms(10),
        first_service: Some(ms(350)),
        ..FakeTransport::default()
    };
    let sent = transport.sent.clone();
    let start = Instant::now();
    run_with(
        transport,
        Load::Closed(load),
        Duration::from_secs(1),
        Cancel::new(),
        Segment::WHOLE,
    )
    .await;
    let at: Vec<u64> = sent
        .borrow()
        .iter()
        .map(|t| t.duration_since(start).as_millis() as u64)
        .collect();
    assert_eq!(at, [0, 350, 450, 550, 650, 750, 850, 950], "sent at (ms)");
}

#[tokio::test(start_paused = true)]
async fn closed_model_ramps_vus() {
    let load = Load::Closed(ClosedLoad {
        start_vus: 0,
        stages: vec![
            VuStage {
                duration: Duration::from_secs(2),
                vus: 4,
            },
            VuStage {
                duration: Duration::from_secs(2),
                vus: 4,
            },
        ],
        iterations_per_vu: None,
        shared_iterations: None,
        max_duration: Duration::from_secs(60),
        pace: None,
    });
    let (rec, connects) = run_fake(load, Duration::from_millis(100), Duration::from_secs(4)).await;
    // VU k starts at k/2 s (k=1..4) and runs 10 requests/s until 4 s: 35 + 30 + 25 + 20 = 110.
    let n = rec.steps[0].requests;
    assert!((105..=114).contains(&n), "{n}");
    assert_eq!(connects, 4, "one keep-alive connection per VU");
    assert!(
        rec.steps[0]
            .latency
            .min()
            .abs_diff(rec.steps[0].service.min())
            <= 10
    );
}

#[tokio::test(start_paused = true)]
async fn closed_model_iterations_per_vu_stop_early() {
    let load = Load::Closed(ClosedLoad {
        start_vus: 3,
        stages: vec![VuStage {
            duration: Duration::from_secs(60),
            vus: 3,
        }],
        iterations_per_vu: Some(5),
        shared_iterations: None,
        max_duration: Duration::from_secs(60),
        pace: None,
    });
    let before = Instant::now();
    let (rec, _) = run_fake(load, Duration::from_millis(10), Duration::from_secs(60)).await;
    assert_eq!(rec.steps[0].requests, 15);
    assert_eq!(rec.iterations_completed, 15);
    // One 10 ms request per iteration: 5 ms to the first byte, 5 ms receiving.
    assert_eq!(rec.iteration_duration.len(), 15);
    assert_eq!(rec.iteration_duration.min(), 10_000);
    let h = &rec.iteration_duration;
    assert_eq!(
        h.max(),
        h.highest_equivalent(10_000),
        "every one took 10 ms"
    );
    for phase in [&rec.steps[0].waiting, &rec.steps[0].receiving] {
        assert_eq!(phase.len(), 15);
        assert!(phase.equivalent(phase.min(), 5_000) && phase.equivalent(phase.max(), 5_000));
    }
    assert_eq!(rec.vus_max, 3);
    assert!(
        Instant::now() - before < Duration::from_secs(1),
        "ends when the work is done"
    );
}

#[tokio::test(start_paused = true)]
async fn burst_releases_everything_at_once() {
    let load = Load::Burst(BurstLoad {
        count: 500,
        max_duration: Duration::from_secs(60),
    });
    let (rec, connects) = run_fake(load, Duration::from_millis(50), Duration::from_secs(60)).await;
    assert_eq!(rec.steps[0].requests, 500);
    assert_eq!(
        connects, 500,
        "each request of a spike has its own connection"
    );
    assert!((49_900..=50_100).contains(&rec.steps[0].latency.max()));
}

#[tokio::test(start_paused = true)]
async fn a_segment_with_no_vu_of_an_iteration_plan_ends_at_once() {
    // 4 VUs over 6 parts: parts 4 and 5 own none, and must not wait for the time limit.
    let load = Load::Closed(ClosedLoad {
        start_vus: 4,
        stages: vec![VuStage {
            duration: Duration::from_secs(600),
            vus: 4,
        }],
        iterations_per_vu: Some(5),
        shared_iterations: None,
        max_duration: Duration::from_secs(600),
        pace: None,
    });
    let before = Instant::now();
    let empty = run_with(
        FakeTransport {
            service: Duration::from_millis(10),
            connects: Rc::new(Cell::new(0)),
            ..FakeTransport::default()
        },
        load.clone(),
        Duration::from_secs(600),
        Cancel::new(),
        Segment { index: 4, count: 6 },
    )
    .await;
    assert_eq!(empty.steps[0].requests, 0);
    assert!(
        Instant::now() - before < Duration::from_secs(1),
        "{:?}",
        Instant::now() - before
    );
    let one = run_with(
        FakeTransport {
            service: Duration::from_millis(10),
            connects: Rc::new(Cell::new(0)),
            ..FakeTransport::default()
        },
        load,
        Duration::from_secs(600),
        Cancel::new(),
        Segment { index: 1, count: 6 },
    )
    .await;
    assert_eq!(one.steps[0].requests, 5, "one VU × 5 iterations");
}

/// Sends and never answers: every request stays in flight until the run stops.
struct NeverAnswers {
    sent: Rc<Cell<u64>>,
}

impl Transport for NeverAnswers {
    type Conn = ();

    async fn connect(&self, _origin: u16) -> Result<(), Failure> {
        Ok(())
    }

    async fn send(
        &self,
        _conn: &mut (),
        _req: &RenderedRequest<'_>,
        _keep: Option<&mut ResponseData>,
    ) -> Result<Response, Failure> {
        self.sent.set(self.sent.get() + 1);
        std::future::pending().await
    }
}

/// Runs `load` against a target that never answers, cancelled `after` the start: what was
/// sent, and what the intervals handed over.
async fn cancelled_while_everything_hangs(load: Load, after: Duration) -> (u64, Totals) {
    let sent = Rc::new(Cell::new(0));
    let cancel = Cancel::new();
    let canceller = {
        let cancel = cancel.clone();
        async move {
            tokio::time::sleep(after).await;
            cancel.cancel();
        }
    };
    let transport = NeverAnswers { sent: sent.clone() };
    let run = run_with(
        transport,
        load,
        Duration::from_secs(10),
        cancel,
        Segment::WHOLE,
    );
    let (_, totals) = tokio::join!(canceller, run);
    (sent.get(), totals)
}

#[tokio::test(start_paused = true)]
async fn requests_in_flight_at_a_cancel_are_interrupted_whenever_it_comes() {
    // The ticker ended on the cancellation itself: when an interval boundary came before the
    // worker counted what was in flight, the run reported 0 requests (Ctrl-C at 50/s against a
    // server that never answers). Cancels on, just before and just after boundaries.
    for ms in [999, 1000, 1001, 2500, 2999, 3000, 3001, 3049, 3050] {
        for (model, load) in [
            ("open", open(50.0, 10, 1000)),
            ("closed", closed(5, &[(10, 5)])),
        ] {
            let (sent, totals) =
                cancelled_while_everything_hangs(load, Duration::from_millis(ms)).await;
            let step = &totals.steps[0];
            assert!(sent > 0, "{model} at {ms} ms: nothing sent");
            assert_eq!(step.requests, sent, "{model}, cancelled at {ms} ms");
            assert_eq!(
                step.errors[loadlab_metrics::ErrorKind::Interrupted.index()],
                sent,
                "{model}, cancelled at {ms} ms"
            );
        }
    }
}

/// Runs `load` for 10 s against a target answering in 300 ms, stopped by a threshold's abort
/// (a drain) `after` the start, and by a signal `signal_after` the abort if given.
async fn aborted_while_answering(
    load: Load,
    after: Duration,
    signal_after: Option<Duration>,
) -> (Totals, Duration) {
    let cancel = Cancel::new();
    let start = Instant::now();
    let canceller = {
        let cancel = cancel.clone();
        async move {
            tokio::time::sleep(after).await;
            cancel.drain_because(crate::StopCause::Threshold);
            if let Some(d) = signal_after {
                tokio::time::sleep(d).await;
                cancel.cancel_because(crate::StopCause::Signal("SIGINT".into()));
            }
        }
    };
    let transport = FakeTransport {
        service: Duration::from_millis(300),
        connects: Rc::new(Cell::new(0)),
        ..FakeTransport::default()
    };
    let run = run_with(
        transport,
        load,
        Duration::from_secs(10),
        cancel,
        Segment::WHOLE,
    );
    let (_, totals) = tokio::join!(canceller, run);
    (totals, start.elapsed())
}

#[tokio::test(start_paused = true)]
async fn requests_in_flight_at_an_abort_finish_and_none_starts_after_it() {
    let interrupted = loadlab_metrics::ErrorKind::Interrupted.index();
    let ms = Duration::from_millis;
    for (model, load, requests, ended) in [
        // 50/s: about 105 arrivals before the abort is seen (2.05 s, or the next 50 ms check),
        // 15 of them in flight: the last answered 300 ms after it.
        ("open", open(50.0, 10, 1000), 100..=107, ms(2300)..ms(2500)),
        // 5 VUs, one request each 300 ms: the 7th of each in flight at the abort, answered at
        // 2.1 s; no VU starts an 8th.
        ("closed", closed(5, &[(10, 5)]), 35..=35, ms(2090)..ms(2300)),
    ] {
        let (totals, took) = aborted_while_answering(load, ms(2050), None).await;
        let step = &totals.steps[0];
        assert_eq!(step.errors[interrupted], 0, "{model}: {:?}", step.errors);
        assert_eq!(step.failed, 0, "{model}");
        assert!(
            requests.contains(&step.requests),
            "{model}: {} requests",
            step.requests
        );
        // Every request was answered, and the run ended once the last one was.
        assert_eq!(step.latency.len(), step.requests, "{model}");
        assert!(ended.contains(&took), "{model}: ended after {took:?}");
    }
}

#[tokio::test(start_paused = true)]
async fn a_signal_during_an_abort_drain_cuts_the_rest_off() {
    let interrupted = loadlab_metrics::ErrorKind::Interrupted.index();
    let (totals, took) = aborted_while_answering(
        open(50.0, 10, 1000),
        Duration::from_millis(2050),
        Some(Duration::from_millis(100)),
    )
    .await;
    let step = &totals.steps[0];
    assert!(step.errors[interrupted] > 0, "{:?}", step.errors);
    assert!(took < Duration::from_millis(2300), "ended after {took:?}");
}
