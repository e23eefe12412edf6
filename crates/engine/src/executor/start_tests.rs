//! The common start in real time: how late a worker wakes for it is the first arrivals'
//! send lag, so it is measured on the host's clock, not in paused time.

use super::test_support::{scenario, worker, FakeTransport};
use super::wait_for_start;
use crate::cancel::Cancel;
use std::time::Duration;
use tokio::time::Instant;

/// Median lateness (µs) of `waits` waits for a start 3 ms ahead.
async fn median_lateness(waits: usize, mut wait: impl AsyncFnMut(Instant)) -> u128 {
    let mut late = Vec::new();
    for _ in 0..waits {
        let start = Instant::now() + Duration::from_millis(3);
        wait(start).await;
        late.push(Instant::now().saturating_duration_since(start).as_micros());
    }
    late.sort_unstable();
    late[late.len() / 2]
}

#[test]
fn workers_wake_for_the_start_on_the_precise_timer_not_on_tokios_millisecond() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let mut w = worker(FakeTransport::default(), scenario(), Duration::from_secs(1));
        w.precise_timer = Some(loadlab_timer::PreciseTimer::new().unwrap());
        let cancel = Cancel::new();
        // Interleaved, so that a busy host slows both alike: tokio's timer rounds every wait
        // up to its next millisecond tick (0.5 ms late on average, on a quiet host too).
        let (mut precise, mut coarse) = (Vec::new(), Vec::new());
        for _ in 0..5 {
            precise.push(
                median_lateness(3, async |start| {
                    w.start = start;
                    wait_for_start(&w, &cancel).await;
                })
                .await,
            );
            coarse.push(
                median_lateness(3, async |start| tokio::time::sleep_until(start).await).await,
            );
        }
        precise.sort_unstable();
        coarse.sort_unstable();
        assert!(
            precise[2] + 200 < coarse[2],
            "median lateness: {} µs on the start's timer, {} µs on tokio's",
            precise[2],
            coarse[2]
        );
    });
}
