//! Burst: `count` iterations released at once (a spike), each on its own connection,
//! latency measured from the common release instant.

use super::wait_all;
use crate::flow::Worker;
use crate::transport::Transport;
use crate::vu::VuState;
use loadlab_scenario::plan::Segment;
use loadlab_scenario::BurstLoad;
use std::cell::Cell;
use std::rc::Rc;
use tokio::sync::Notify;

pub async fn run<T: Transport>(
    worker: Rc<Worker<T>>,
    load: BurstLoad,
    segment: Segment,
    active: Rc<Cell<u64>>,
) {
    let finished = Rc::new(Notify::new());
    let release = worker.start;
    tokio::time::sleep_until(release).await;
    for i in 0..load.share(segment) {
        active.set(active.get() + 1);
        let mut state = VuState::new(i * u64::from(segment.count) + u64::from(segment.index) + 1);
        let w = worker.clone();
        let (a, f) = (active.clone(), finished.clone());
        tokio::task::spawn_local(async move {
            let mut conns = w.new_conn_set();
            w.iteration(&mut conns, &mut state, Some(release), false)
                .await;
            a.set(a.get() - 1);
            f.notify_one();
        });
        tokio::task::coop::consume_budget().await;
    }
    wait_all(&active, &finished).await;
}
