//! What the open model's scheduler does for a steered run: re-plan the arrivals not yet
//! started from each change on (once per change), sleep until an arrival or a change, and wait
//! out a plan that ran dry (paused) until it is resumed or the run ends. Without steering each
//! of these is what the scheduler did before.

use super::arrival_queue::ArrivalQueue;
use super::now;
use crate::flow::Worker;
use crate::steering::SteerWatch;
use crate::transport::Transport;
use loadlab_scenario::plan::{ArrivalTimes, Segment};
use loadlab_scenario::Load;
use tokio::time::{Duration, Instant};

pub(super) struct Steered {
    watch: Option<SteerWatch>,
    /// Where the last re-plan began: the same change seen twice must not start its arrivals
    /// twice.
    replanned_from: Option<Duration>,
}

impl Steered {
    pub fn new(watch: Option<SteerWatch>) -> Self {
        Self {
            watch,
            replanned_from: None,
        }
    }

    /// The arrivals to follow from a change the run was steered by since the last call (the
    /// buffered ones from then on forgotten), if there was one.
    pub fn replan<T: Transport>(
        &mut self,
        worker: &Worker<T>,
        queue: &ArrivalQueue,
        segment: Segment,
        seed: u64,
    ) -> Option<ArrivalTimes<'static>> {
        let (Load::Open(driven), from) = self.watch.as_mut()?.changed()? else {
            return None;
        };
        if self.replanned_from.is_some_and(|last| from <= last) {
            return None;
        }
        self.replanned_from = Some(from);
        queue.discard_from(worker.start + from);
        Some(driven.into_arrivals_from(segment, seed, from))
    }

    /// Sleeps until `wake` as the scheduler does, or until the run is steered (a paused or
    /// slow plan must hear a change at once); true when the sleep ran out.
    pub async fn sleep<T: Transport>(&mut self, worker: &Worker<T>, wake: Instant) -> bool {
        match self.watch.as_mut() {
            Some(watch) => tokio::select! {
                woke = worker.sleep_unless_reads_park(wake) => woke,
                _ = watch.wait() => false,
            },
            None => worker.sleep_unless_reads_park(wake).await,
        }
    }

    /// A plan that ran dry: false when the scheduler is done; true after waiting for a change
    /// (a steered run, paused, may be resumed until its end).
    pub async fn wait_while_dry<T: Transport>(&mut self, worker: &Worker<T>) -> bool {
        let Some(watch) = self.watch.as_mut() else {
            return false;
        };
        if now() >= worker.end {
            return false;
        }
        worker
            .while_reading(async {
                tokio::select! {
                    _ = watch.wait() => {}
                    _ = tokio::time::sleep_until(worker.end) => {}
                }
            })
            .await;
        true
    }
}
