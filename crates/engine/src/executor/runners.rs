//! Reusable open-model runners: one long-lived task per arrival slot in use, instead of a new
//! task (and its allocation, connection set and user state) per arrival. The scheduler hands
//! an arrival to an idle runner; a runner that finishes takes the next due arrival itself
//! without a round trip through the scheduler. There are never more runners than the most
//! arrivals ever in flight at once, so `max_in_flight` also bounds them.

use super::arrival_queue::{Arrival, ArrivalQueue, Next};
use crate::flow::Worker;
use crate::transport::Transport;
use crate::vu::VuState;
use std::cell::{Cell, RefCell};
use std::future::poll_fn;
use std::rc::Rc;
use std::task::{Poll, Waker};
use tokio::sync::Notify;

/// Where the scheduler leaves an arrival for one idle runner.
#[derive(Default)]
struct Mailbox {
    arrival: Cell<Option<Arrival>>,
    waker: RefCell<Option<Waker>>,
}

pub(super) struct Runners<T: Transport> {
    worker: Rc<Worker<T>>,
    queue: Rc<ArrivalQueue>,
    idle: Rc<RefCell<Vec<Rc<Mailbox>>>>,
    closed: Rc<Cell<bool>>,
    /// Arrivals handed to runners that have not run yet (shared with the queue, whose
    /// connection gate counts them as taken).
    handed: Rc<Cell<u64>>,
    /// Told when a slot frees while an arrival waits for one, and when none is in flight.
    pub freed: Rc<Notify>,
}

impl<T: Transport> Runners<T> {
    pub fn new(worker: Rc<Worker<T>>, queue: Rc<ArrivalQueue>) -> Self {
        let handed = queue.handed.clone();
        Self {
            worker,
            queue,
            idle: Rc::default(),
            closed: Rc::default(),
            handed,
            freed: Rc::default(),
        }
    }

    /// Waits until every arrival handed out has begun its request: one started a little
    /// after the end (up to a batch window late) is still sent, not silently skipped when
    /// the run then stops.
    pub async fn all_begun(&self) {
        while self.handed.get() > 0 {
            tokio::task::yield_now().await;
        }
    }

    /// Starts `arrival` on an idle runner, or on a new one when all are busy.
    pub fn start(&self, arrival: Arrival) {
        let idle = self.idle.borrow_mut().pop();
        match idle {
            Some(mailbox) => {
                self.handed.set(self.handed.get() + 1);
                mailbox.arrival.set(Some(arrival));
                if let Some(waker) = mailbox.waker.borrow_mut().take() {
                    waker.wake();
                }
            }
            None => {
                self.handed.set(self.handed.get() + 1);
                tokio::task::spawn_local(run(
                    self.worker.clone(),
                    self.queue.clone(),
                    self.idle.clone(),
                    self.closed.clone(),
                    self.handed.clone(),
                    self.freed.clone(),
                    arrival,
                ));
            }
        }
    }

    /// Idle runners end now, busy ones after their request.
    pub fn close(&self) {
        self.closed.set(true);
        for mailbox in self.idle.borrow_mut().drain(..) {
            if let Some(waker) = mailbox.waker.borrow_mut().take() {
                waker.wake();
            }
        }
    }
}

async fn run<T: Transport>(
    worker: Rc<Worker<T>>,
    queue: Rc<ArrivalQueue>,
    idle: Rc<RefCell<Vec<Rc<Mailbox>>>>,
    closed: Rc<Cell<bool>>,
    handed: Rc<Cell<u64>>,
    freed: Rc<Notify>,
    first: Arrival,
) {
    let mailbox = Rc::new(Mailbox::default());
    let mut conns = worker.new_conn_set();
    let mut state = VuState::new(first.vu);
    let mut arrival = first;
    // The iteration below checks whether the run is stopping before its first await.
    handed.set(handed.get() - 1);
    loop {
        // Each arrival is a new user: its own VU number, first iteration, nothing captured.
        state.start_over(arrival.vu);
        worker
            .iteration(&mut conns, &mut state, Some(arrival.intended), true)
            .await;
        if queue.finished_one() {
            freed.notify_one();
        }
        // An iteration can end without ever waiting (a request that fails before any I/O):
        // taking the next due arrival at once must not starve the worker's other tasks.
        tokio::task::coop::consume_budget().await;
        if let Next::Start(next) = queue.take_due(&worker) {
            arrival = next;
            continue;
        }
        if closed.get() {
            return;
        }
        idle.borrow_mut().push(mailbox.clone());
        let next = poll_fn(|cx| match mailbox.arrival.take() {
            Some(a) => Poll::Ready(Some(a)),
            None if closed.get() => Poll::Ready(None),
            None => {
                *mailbox.waker.borrow_mut() = Some(cx.waker().clone());
                Poll::Pending
            }
        })
        .await;
        match next {
            Some(next) => {
                handed.set(handed.get() - 1);
                arrival = next;
            }
            None => return,
        }
    }
}
