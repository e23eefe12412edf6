//! Per-second snapshots of a worker's measurements, sent to the coordinator for progress and charts.

use crate::cancel::Cancel;
use crate::flow::Worker;
use crate::transport::Transport;
use loadlab_metrics::IntervalSnapshot;
use std::cell::Cell;
use std::rc::Rc;
use std::sync::mpsc::Sender;
use tokio::time::{Duration, Instant};

pub async fn tick<T: Transport>(
    worker: Rc<Worker<T>>,
    active: Rc<Cell<u64>>,
    out: Sender<IntervalSnapshot>,
    cancel: Cancel,
    mut done: tokio::sync::watch::Receiver<bool>,
) {
    let mut index: u32 = 0;
    loop {
        let boundary = worker.start + Duration::from_secs(u64::from(index) + 1);
        // Wake at the boundary, or earlier when the run ends.
        tokio::select! {
            _ = tokio::time::sleep_until(boundary) => {}
            _ = done.changed() => {}
        }
        let finished = *done.borrow() || cancel.is_cancelled();
        if Instant::now() >= boundary || finished {
            let snapshot = worker
                .recorder
                .borrow_mut()
                .interval
                .take(index, active.get());
            if out.send(snapshot).is_err() {
                return;
            }
            index += 1;
        }
        if finished {
            return;
        }
    }
}
