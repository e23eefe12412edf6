//! Shared connections to one origin (`http.connections`), multiplexed: every request of the
//! worker takes a stream slot on the least busy connection (ties taken in turn, so that two
//! connections at low concurrency both carry requests), at most `max_streams` — or the
//! server's SETTINGS_MAX_CONCURRENT_STREAMS, if lower — per HTTP/2 connection, one per
//! HTTP/1.1 one. When every slot is taken a request waits (the caller counts that wait, like
//! `max_in_flight`'s, outside service time).
//!
//! A connection not open yet counts one slot: the request that takes it opens it, and its
//! real capacity is known once the server's SETTINGS are (the handshake waits for them). A
//! connection that breaks or goes away (GOAWAY) is replaced when its slot is taken next; its
//! streams still open finish on the old one, and count until they do.

use super::h1::HttpConn;
use super::http2::Http2Conn;
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use tokio::sync::Notify;

/// A connection as opened for a slot.
pub enum Established {
    Http1(HttpConn),
    Http2(Http2Conn),
}

impl Established {
    /// How it was opened, taken so that only the request that opened it reports it.
    pub fn take_opened(&mut self) -> Option<crate::transport::ConnectTiming> {
        match self {
            Established::Http1(c) => c.opened.take(),
            Established::Http2(c) => c.opened().take(),
        }
    }
}

enum State {
    Closed,
    Connecting,
    /// `None` while a request has it.
    Http1(Option<HttpConn>),
    Http2(Http2Conn),
}

struct Slot {
    state: State,
    /// Streams (requests) lent on this slot and not returned, on any of its connections.
    in_flight: usize,
    /// Bumped at each new connection, so an old connection's failure closes only itself.
    generation: u64,
    /// Woken when the slot's state changes (connected, closed, its HTTP/1.1 connection back).
    changed: Rc<Notify>,
}

pub struct Pool {
    max_streams: usize,
    slots: RefCell<Vec<Slot>>,
    /// Woken when a slot may have become free.
    freed: Notify,
    /// Where the search for the least busy slot starts next: one past the last slot leased,
    /// so equally busy slots take turns instead of the first one taking every request.
    next: Cell<usize>,
}

/// A stream slot on one of the pool's connections; dropping it gives the slot back.
pub struct Lease {
    pool: Rc<Pool>,
    slot: usize,
    generation: u64,
    /// This lease is opening the slot's connection.
    connecting: bool,
    /// This lease holds the slot's HTTP/1.1 connection.
    holds_http1: bool,
}

/// What a lease sends on.
pub enum Ready {
    Http1(HttpConn),
    Http2(Http2Conn),
    /// The slot has no connection: open one and hand it to [`Lease::connected`].
    Connect,
}

impl Pool {
    pub fn new(connections: usize, max_streams: usize) -> Rc<Pool> {
        Rc::new(Pool {
            max_streams: max_streams.max(1),
            slots: RefCell::new(
                (0..connections.max(1))
                    .map(|_| Slot {
                        state: State::Closed,
                        in_flight: 0,
                        generation: 0,
                        changed: Rc::new(Notify::new()),
                    })
                    .collect(),
            ),
            freed: Notify::new(),
            next: Cell::new(0),
        })
    }

    /// Streams a slot can carry now.
    fn capacity(&self, slot: &Slot) -> usize {
        match &slot.state {
            State::Closed | State::Connecting | State::Http1(_) => 1,
            State::Http2(c) => self.max_streams.min(c.max_streams()).max(1),
        }
    }

    /// Takes a free stream slot, waiting for one when all are taken; true if it waited.
    pub async fn lease(self: &Rc<Self>) -> (Lease, bool) {
        let mut waited = false;
        loop {
            if let Some(i) = self.least_busy() {
                self.next.set(i + 1);
                let mut slots = self.slots.borrow_mut();
                slots[i].in_flight += 1;
                let generation = slots[i].generation;
                return (
                    Lease {
                        pool: self.clone(),
                        slot: i,
                        generation,
                        connecting: false,
                        holds_http1: false,
                    },
                    waited,
                );
            }
            waited = true;
            self.freed.notified().await;
        }
    }

    /// The free slot with the fewest streams; among equally busy ones, the first from `next`
    /// on (round robin).
    ///
    /// An HTTP/2 connection's capacity is read under its stream store's lock: asking each of
    /// ten connections on every request was 2.3% of the generator's CPU (bench/README.md,
    /// HTTP/2 profile). The least busy slot within the configured `max_streams` is asked
    /// first; only when the server's own limit has filled it are all of them asked.
    fn least_busy(&self) -> Option<usize> {
        let slots = self.slots.borrow();
        let n = slots.len();
        let start = self.next.get() % n;
        let in_turn = || (0..n).map(|k| (start + k) % n);
        // `min_by_key` keeps the first of equal keys: the one nearest `start`.
        let candidate = in_turn()
            .filter(|&i| slots[i].in_flight < self.max_streams)
            .min_by_key(|&i| slots[i].in_flight)?;
        if slots[candidate].in_flight < self.capacity(&slots[candidate]) {
            return Some(candidate);
        }
        in_turn()
            .filter(|&i| slots[i].in_flight < self.capacity(&slots[i]))
            .min_by_key(|&i| slots[i].in_flight)
    }

    /// Streams lent and not returned, over all slots.
    #[cfg(test)]
    pub fn in_flight(&self) -> usize {
        self.slots.borrow().iter().map(|s| s.in_flight).sum()
    }
}

impl Lease {
    /// Waits until the slot's connection can take this stream, or says to open it.
    pub async fn ready(&mut self) -> Ready {
        loop {
            let changed = {
                let mut slots = self.pool.slots.borrow_mut();
                let slot = &mut slots[self.slot];
                match &mut slot.state {
                    State::Http2(c) => {
                        self.generation = slot.generation;
                        return Ready::Http2(c.clone());
                    }
                    State::Http1(c @ Some(_)) => {
                        self.generation = slot.generation;
                        self.holds_http1 = true;
                        return Ready::Http1(c.take().expect("checked"));
                    }
                    State::Closed => {
                        slot.state = State::Connecting;
                        self.connecting = true;
                        return Ready::Connect;
                    }
                    State::Http1(None) | State::Connecting => slot.changed.clone(),
                }
            };
            changed.notified().await;
        }
    }

    /// The connection this lease opened: the slot's from now on.
    pub fn connected(&mut self, conn: Established) {
        let mut slots = self.pool.slots.borrow_mut();
        let slot = &mut slots[self.slot];
        slot.generation += 1;
        slot.state = match conn {
            Established::Http1(c) => State::Http1(Some(c)),
            Established::Http2(c) => State::Http2(c),
        };
        self.connecting = false;
        slot.changed.notify_waiters();
        drop(slots);
        // Its real capacity is known now: waiting requests may fit.
        self.pool.freed.notify_waiters();
    }

    /// Opening the connection failed: the next request on the slot tries again.
    pub fn connect_failed(&mut self) {
        self.connecting = false;
        self.close_slot(None);
    }

    /// The HTTP/1.1 connection this lease took, back to the slot (or closed).
    pub fn put_back(&mut self, conn: HttpConn, reusable: bool) {
        self.holds_http1 = false;
        let mut slots = self.pool.slots.borrow_mut();
        let slot = &mut slots[self.slot];
        if reusable && slot.generation == self.generation {
            slot.state = State::Http1(Some(conn));
            slot.changed.notify_waiters();
        } else {
            drop(slots);
            self.close_slot(Some(self.generation));
        }
    }

    /// The connection this stream ran on cannot take more streams (it broke or is going
    /// away): the slot opens a new one for its next request.
    pub fn broke(&mut self) {
        self.close_slot(Some(self.generation));
    }

    /// Closes the slot's connection if it is still `generation` (any, for `None`).
    fn close_slot(&self, generation: Option<u64>) {
        let mut slots = self.pool.slots.borrow_mut();
        let slot = &mut slots[self.slot];
        if generation.is_none_or(|g| g == slot.generation) {
            slot.state = State::Closed;
            slot.changed.notify_waiters();
        }
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        if self.connecting {
            // Dropped while opening the connection (the request timed out).
            self.close_slot(None);
        }
        if self.holds_http1 {
            // Dropped mid-exchange: the connection went with it.
            self.close_slot(Some(self.generation));
        }
        self.pool.slots.borrow_mut()[self.slot].in_flight -= 1;
        self.pool.freed.notify_one();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_closed_slot_takes_one_stream_and_a_waiter_gets_the_slot_when_freed() {
        tokio::task::LocalSet::new()
            .run_until(waiter_gets_a_freed_slot())
            .await;
    }

    async fn waiter_gets_a_freed_slot() {
        let pool = Pool::new(2, 100);
        let (a, waited_a) = pool.lease().await;
        let (b, waited_b) = pool.lease().await;
        assert!(!waited_a && !waited_b);
        assert_ne!(a.slot, b.slot, "the least busy slot first");
        assert_eq!(pool.in_flight(), 2);
        // Both slots are closed (capacity 1 until connected): a third request waits.
        let third = {
            let pool = pool.clone();
            tokio::task::spawn_local(async move {
                let (lease, waited) = pool.lease().await;
                (lease.slot, waited)
            })
        };
        tokio::task::yield_now().await;
        assert!(!third.is_finished());
        let freed = a.slot;
        drop(a);
        let (slot, waited) = third.await.unwrap();
        assert_eq!((slot, waited), (freed, true));
        drop(b);
        assert_eq!(pool.in_flight(), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn one_request_at_a_time_takes_the_connections_in_turn() {
        // `http.connections: 3` at a concurrency of one: each request finds every slot idle,
        // and the tie goes to the next slot in turn, so all three connections carry requests.
        let pool = Pool::new(3, 100);
        let mut used = Vec::new();
        for _ in 0..6 {
            let (lease, waited) = pool.lease().await;
            assert!(!waited);
            used.push(lease.slot);
        }
        // (Each lease above was dropped at the end of its iteration.)
        assert_eq!(used, [0, 1, 2, 0, 1, 2]);
        // The least busy slot still wins over the turn: slot 0 busy, 1 and 2 idle.
        let (busy, _) = pool.lease().await;
        assert_eq!(busy.slot, 0);
        let (next, _) = pool.lease().await;
        assert_eq!(next.slot, 1);
        drop(next);
        let (after, _) = pool.lease().await;
        assert_eq!(after.slot, 2, "slots 1 and 2 idle: the turn goes on to 2");
    }

    #[tokio::test(start_paused = true)]
    async fn a_lease_dropped_while_connecting_lets_the_next_one_connect() {
        let pool = Pool::new(1, 100);
        let (mut a, _) = pool.lease().await;
        assert!(matches!(a.ready().await, Ready::Connect));
        drop(a);
        let (mut b, waited) = pool.lease().await;
        assert!(!waited);
        assert!(matches!(b.ready().await, Ready::Connect));
        b.connect_failed();
        drop(b);
        let (mut c, _) = pool.lease().await;
        assert!(matches!(c.ready().await, Ready::Connect));
    }
}
