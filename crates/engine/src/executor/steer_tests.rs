//! Steering in paused time: a raised rate, a pause and a resume re-plan the open model's
//! arrivals from the moment of each command, with no catch-up burst and no lag from the
//! pause; a closed model's VU count follows, VUs retiring at their iteration's end.

use super::test_support::{closed, open, run_steered, FakeTransport};
use crate::steering::Steering;
use loadlab_metrics::SteerSource;
use loadlab_scenario::steer::{Level, SteerCommand, SteerRequest};
use loadlab_scenario::OpenLoad;
use std::cell::RefCell;
use std::rc::Rc;
use tokio::time::{Duration, Instant};

/// Sends per whole second from `start`.
fn per_second(sent: &[Instant], start: Instant, secs: usize) -> Vec<usize> {
    let mut counts = vec![0; secs];
    for t in sent {
        let s = t.duration_since(start).as_secs() as usize;
        if s < secs {
            counts[s] += 1;
        }
    }
    counts
}

/// Sends `commands` (at seconds from now) through `steering`, in paused time.
async fn command_at(steering: Steering, commands: Vec<(f64, SteerRequest)>) {
    let start = Instant::now();
    for (at, request) in commands {
        tokio::time::sleep_until(start + Duration::from_secs_f64(at)).await;
        steering
            .command_from(request, SteerSource::Api)
            .expect("the command is followed");
    }
}

fn level(level: Level) -> SteerRequest {
    SteerRequest::Command(SteerCommand::Level {
        level,
        over: Duration::ZERO,
    })
}

#[tokio::test(start_paused = true)]
async fn a_raised_rate_a_pause_and_a_resume_re_plan_the_arrivals_from_each_command() {
    let steering = Steering::new();
    let sent = Rc::new(RefCell::new(Vec::new()));
    let transport = FakeTransport {
        service: Duration::from_millis(2),
        sent: sent.clone(),
        ..FakeTransport::default()
    };
    let start = Instant::now();
    let commands = vec![
        (1.0, level(Level::Rate(400.0))),
        (2.0, SteerRequest::Command(SteerCommand::Pause)),
        (3.0, SteerRequest::Command(SteerCommand::Resume)),
        // A stop ends the load; it must not make the workers plan anything again.
        (3.5, SteerRequest::Stop),
    ];
    let local = tokio::task::LocalSet::new();
    local.spawn_local(command_at(steering.clone(), commands));
    let totals = local
        .run_until(run_steered(
            transport,
            open(100.0, 4, 1000),
            Duration::from_secs(4),
            &steering,
        ))
        .await;
    let counts = per_second(&sent.borrow(), start, 4);
    // 100/s, then 400/s, nothing while paused, 400/s again for the half second until the
    // stop (and the stop's own check of its flag, every 50 ms): each within a few arrivals.
    for (second, (got, want)) in counts.iter().zip([100, 400, 0, 210]).enumerate() {
        assert!(
            got.abs_diff(want) <= 21,
            "second {second}: {got} sends, {want} planned ({counts:?})"
        );
    }
    assert!(
        counts[..3]
            .iter()
            .zip([100, 400, 0])
            .all(|(g, w)| g.abs_diff(w) <= 1),
        "{counts:?}"
    );
    // Each arrival timed from its re-planned intended start: no lag from the pause, no burst
    // of the paused second's arrivals at the resume.
    let worst = Duration::from_micros(totals.lag.max());
    assert!(
        worst <= OpenLoad::DEFAULT_BATCH_WINDOW + Duration::from_millis(1),
        "lag max {worst:?}"
    );
    let events = steering.finish();
    assert_eq!(events.len(), 4);
    assert_eq!((events[0].before, events[0].after), (100.0, 400.0));
    assert_eq!((events[2].before, events[2].after), (0.0, 400.0));
}

#[tokio::test(start_paused = true)]
async fn vus_follow_their_count_and_idle_while_paused() {
    let steering = Steering::new();
    let sent = Rc::new(RefCell::new(Vec::new()));
    // Each iteration takes 100 ms: a VU sends 10 requests a second.
    let transport = FakeTransport {
        service: Duration::from_millis(100),
        sent: sent.clone(),
        ..FakeTransport::default()
    };
    let start = Instant::now();
    let commands = vec![
        (1.0, level(Level::Vus(4))),
        (2.0, SteerRequest::Command(SteerCommand::Pause)),
        (3.0, SteerRequest::Command(SteerCommand::Resume)),
    ];
    let local = tokio::task::LocalSet::new();
    local.spawn_local(command_at(steering.clone(), commands));
    local
        .run_until(run_steered(
            transport,
            closed(1, &[(4, 1)]),
            Duration::from_secs(4),
            &steering,
        ))
        .await;
    let sent = sent.borrow();
    let counts = per_second(&sent, start, 4);
    // The second paused holds only the iterations the 4 VUs began at its first instant, the
    // boundary the pause met.
    for (second, (got, want)) in counts.iter().zip([10, 40, 4, 40]).enumerate() {
        assert!(
            got.abs_diff(want) <= 2,
            "second {second}: {got} sends, {want} planned ({counts:?})"
        );
    }
    let (paused, resumed) = (
        start + Duration::from_millis(2001),
        start + Duration::from_secs(3),
    );
    let while_paused = sent
        .iter()
        .filter(|t| **t >= paused && **t < resumed)
        .count();
    assert_eq!(while_paused, 0, "{counts:?}");
}
