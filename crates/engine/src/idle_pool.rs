//! A worker's idle keep-alive connections per origin, shared by open-model arrivals (and the
//! `shared`/pooled policies), and the bound on connections being opened at once.
//!
//! Why the bound: an arrival that finds no idle connection opens one, and opening costs the
//! generator (and the target) several times a request. At a high rate a short stall — the
//! target's accept queue, a descheduled core — leaves every arrival without an idle connection,
//! so every arrival opens one, which costs more than the arrivals' budget, so the next ones
//! find none either: the run tips into opening a connection per request (seen at 30,000/s
//! against nginx: 20,000 connections opened a second, its 4,096 worker connections exhausted,
//! 90 % resets) and never recovers. Like hyper's pool, an arrival that finds none idle while
//! [`opening_bound`] connections are already being opened to its origin takes whichever
//! connection comes first — one a request gives back or one that finishes opening — instead of
//! opening yet another. Its latency still runs from its intended time; the wait is counted
//! (`delayed_by_connect_limit`) and kept out of its service time.
//!
//! The bound follows the path, as TCP's pacing follows its minimum round trip: where a connect
//! is fast (loopback, a LAN) opening is bound by CPU, and a few at once open tens of thousands
//! a second while the spiral above stays out of reach; where a connect is a long round trip
//! opening costs little CPU and the pool must grow by many per round trip.

use std::cell::{Cell, RefCell};
use std::time::Duration;
use tokio::sync::Notify;
use tokio::time::Instant;

/// Connections opened at once to an origin whose connect time is not known yet (before the
/// first connection to it has opened).
pub const INITIAL_OPENING: usize = 16;
/// The bound where connects are fast. Measured at 50,000/s against nginx on loopback: with 4,
/// 3 of 4 runs settled on a few hundred connections; with 2, 8, 16 and 64, more runs tipped
/// into opening a thousand or more (bench/README.md).
pub const MIN_OPENING: usize = 4;
/// The bound where connects are long round trips: the pool grows by up to 64 a round trip.
pub const MAX_OPENING: usize = 64;
/// One more connection opening at once per this much of the fastest connect seen: 4 below
/// 100 µs (loopback: 15–50 µs), 16 at 400 µs, 64 from 1.6 ms (a WAN round trip).
const CONNECT_PER_OPENING: Duration = Duration::from_micros(25);
/// A connect still going after this long (or 8 times the fastest) no longer counts against
/// the bound (see [`Opening::leave`]).
const SLOW_CONNECT: Duration = Duration::from_millis(50);

/// How many connections may be opened to an origin at once, given the fastest connect (TCP,
/// without TLS: the path's round trip, not the CPU a handshake takes) seen so far. The fastest
/// and not the latest: connects slow down when the target is overloaded, and a bound that grew
/// with them would open more exactly when opening hurts most.
pub fn opening_bound(fastest_connect: Option<Duration>) -> usize {
    match fastest_connect {
        None => INITIAL_OPENING,
        Some(d) => {
            let n = d.as_nanos().div_ceil(CONNECT_PER_OPENING.as_nanos());
            (n.min(MAX_OPENING as u128) as usize).max(MIN_OPENING)
        }
    }
}

/// Idle connections kept beyond those the requests in flight could use.
const SPARE: usize = 16;

struct Origin<C> {
    idle: RefCell<Vec<C>>,
    opening: Cell<usize>,
    /// The fastest connect to it so far (see [`opening_bound`]).
    fastest_connect: Cell<Option<Duration>>,
    waiting: Cell<usize>,
    /// Told when a connection comes back or an opening ends, while someone waits.
    changed: Notify,
    /// Arrivals are held until a connection is available (see [`IdlePool::hold`])...
    held: Cell<bool>,
    /// ...and this is when one next was.
    ready_at: Cell<Option<Instant>>,
}

pub struct IdlePool<C> {
    origins: Vec<Origin<C>>,
}

/// How a request got its connection.
pub enum Checkout<'a, C> {
    /// An idle one.
    Idle(C),
    /// None was idle: open one, holding this place until it is open (or failed).
    Open(Opening<'a, C>),
}

/// One connection being opened; dropping it (opened, failed, or its request timed out
/// mid-connect) frees the place and tells a waiter.
pub struct Opening<'a, C> {
    origin: &'a Origin<C>,
    /// Still counted against the bound (see [`Opening::leave`]).
    counted: bool,
}

impl<C> Opening<'_, C> {
    /// The connection opened; `connect`: how long its TCP connect took.
    pub fn opened(self, connect: Duration) {
        let fastest = &self.origin.fastest_connect;
        fastest.set(Some(fastest.get().map_or(connect, |f| f.min(connect))));
    }

    /// How long this connect counts against the bound: far longer than a connect to this
    /// origin takes (8 times the fastest, at least 50 ms), far shorter than the 1 s after which
    /// a SYN the target dropped is sent again.
    pub fn counted_for(&self) -> Duration {
        let fastest = self.origin.fastest_connect.get().unwrap_or_default();
        (fastest * 8).max(SLOW_CONNECT)
    }

    /// The connect goes on, but no longer counts against the bound: one this slow waits on
    /// the network (a target whose accept queue overflowed drops SYNs, and the kernel sends
    /// them again after 1 s), not on the CPU the bound protects. Without this, four dropped
    /// SYNs stopped every opening at once for a second, and the arrivals behind them with it.
    pub fn leave(&mut self) {
        if std::mem::take(&mut self.counted) {
            let o = self.origin;
            o.opening.set(o.opening.get().saturating_sub(1));
            o.became_ready();
        }
    }
}

impl<C> Drop for Opening<'_, C> {
    fn drop(&mut self) {
        self.leave();
    }
}

impl<C> IdlePool<C> {
    pub fn new(origins: usize) -> Self {
        Self {
            origins: (0..origins)
                .map(|_| Origin {
                    idle: RefCell::new(Vec::new()),
                    opening: Cell::new(0),
                    fastest_connect: Cell::new(None),
                    waiting: Cell::new(0),
                    changed: Notify::new(),
                    held: Cell::new(false),
                    ready_at: Cell::new(None),
                })
                .collect(),
        }
    }

    /// An idle connection to `origin`, if there is one.
    pub fn take(&self, origin: usize) -> Option<C> {
        self.origins[origin].idle.borrow_mut().pop()
    }

    /// Keeps an idle connection for the next request, unless the pool already holds more than
    /// `recent_peak_in_flight` requests could use: after a slow spell (hundreds in flight at
    /// once) the extra connections are closed instead of held, so memory and file descriptors
    /// follow the recent concurrency, not its all-time peak; closing them at once instead
    /// would reopen them at the next burst.
    pub fn give_back(&self, origin: usize, conn: C, recent_peak_in_flight: usize) {
        let o = &self.origins[origin];
        {
            let mut idle = o.idle.borrow_mut();
            if idle.len() < recent_peak_in_flight + SPARE {
                idle.push(conn);
            }
        }
        o.became_ready();
    }

    /// How many requests to `origin` would have a connection now, idle or opened within the
    /// bound, without waiting.
    pub fn available(&self, origin: usize) -> usize {
        let o = &self.origins[origin];
        let places = opening_bound(o.fastest_connect.get()).saturating_sub(o.opening.get());
        o.idle.borrow().len() + places
    }

    /// Arrivals wait for a connection to `origin` to be [`available`](Self::available): the
    /// instant one next may be is kept for [`ready_since`](Self::ready_since).
    pub fn hold(&self, origin: usize) {
        let o = &self.origins[origin];
        o.held.set(true);
        o.ready_at.set(None);
    }

    /// When a connection to `origin` came back or an opening ended after
    /// [`hold`](Self::hold), if one has.
    pub fn ready_since(&self, origin: usize) -> Option<Instant> {
        self.origins[origin].ready_at.get()
    }

    /// Waits until a connection to `origin` comes back or an opening ends.
    pub async fn changed(&self, origin: usize) {
        let o = &self.origins[origin];
        o.waiting.set(o.waiting.get() + 1);
        let _waiting = Waiting(&o.waiting);
        o.changed.notified().await;
    }

    /// An idle connection, or the right to open one; waits while none is idle and
    /// [`opening_bound`] are being opened. The second value says whether it waited.
    pub async fn checkout(&self, origin: usize) -> (Checkout<'_, C>, bool) {
        let o = &self.origins[origin];
        let mut waited = false;
        loop {
            if let Some(conn) = self.take(origin) {
                return (Checkout::Idle(conn), waited);
            }
            if o.opening.get() < opening_bound(o.fastest_connect.get()) {
                o.opening.set(o.opening.get() + 1);
                let opening = Opening {
                    origin: o,
                    counted: true,
                };
                return (Checkout::Open(opening), waited);
            }
            waited = true;
            o.waiting.set(o.waiting.get() + 1);
            let _waiting = Waiting(&o.waiting);
            o.changed.notified().await;
        }
    }

    /// Connections being opened to `origin` now.
    #[cfg(test)]
    pub fn opening(&self, origin: usize) -> usize {
        self.origins[origin].opening.get()
    }
}

impl<C> Origin<C> {
    /// A connection came back or an opening ended: a held arrival may start, and one waiter
    /// is told.
    fn became_ready(&self) {
        if self.held.replace(false) {
            self.ready_at.set(Some(Instant::now()));
        }
        if self.waiting.get() > 0 {
            self.changed.notify_one();
        }
    }
}

struct Waiting<'a>(&'a Cell<usize>);

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.set(self.0.get().saturating_sub(1));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::rc::Rc;

    #[tokio::test(flavor = "current_thread", start_paused = true)]
    async fn an_arrival_waits_for_the_first_connection_once_enough_are_opening() {
        let pool: Rc<IdlePool<u32>> = Rc::new(IdlePool::new(2));
        let mut openings = Vec::new();
        for _ in 0..INITIAL_OPENING {
            match pool.checkout(0).await {
                (Checkout::Open(o), false) => openings.push(o),
                _ => panic!("the first {INITIAL_OPENING} open connections without waiting"),
            }
        }
        assert_eq!(pool.opening(0), INITIAL_OPENING);
        // Another origin has its own places.
        assert!(matches!(pool.checkout(1).await, (Checkout::Open(_), false)));
        assert_eq!(pool.opening(1), 0, "a dropped opening frees its place");
        let local = tokio::task::LocalSet::new();
        local
            .run_until(async {
                let waiter = {
                    let pool = pool.clone();
                    tokio::task::spawn_local(async move {
                        match pool.checkout(0).await {
                            (Checkout::Idle(c), true) => c,
                            _ => panic!("expected to wait, then take the given-back connection"),
                        }
                    })
                };
                tokio::task::yield_now().await;
                assert!(
                    !waiter.is_finished(),
                    "waits while {INITIAL_OPENING} are opening"
                );
                pool.give_back(0, 7, 0);
                assert_eq!(waiter.await.unwrap(), 7);
                // An opening that ends lets the next one open.
                let second = {
                    let pool = pool.clone();
                    tokio::task::spawn_local(async move {
                        matches!(pool.checkout(0).await, (Checkout::Open(_), true))
                    })
                };
                tokio::task::yield_now().await;
                assert!(!second.is_finished());
                openings.pop();
                assert!(second.await.unwrap(), "it waited, then got a place to open");
            })
            .await;
        assert_eq!(pool.opening(0), INITIAL_OPENING - 1);
    }

    #[test]
    fn the_bound_follows_the_fastest_connect() {
        let us = Duration::from_micros;
        for (fastest, bound) in [
            (None, INITIAL_OPENING),
            (Some(us(0)), MIN_OPENING),
            (Some(us(20)), MIN_OPENING),
            (Some(us(100)), 4),
            (Some(us(101)), 5),
            (Some(us(400)), 16),
            (Some(us(1_000)), 40),
            (Some(us(1_600)), MAX_OPENING),
            (Some(Duration::from_millis(80)), MAX_OPENING),
        ] {
            assert_eq!(opening_bound(fastest), bound, "{fastest:?}");
        }
    }

    #[tokio::test(flavor = "current_thread", start_paused = true)]
    async fn a_fast_connect_lowers_the_bound_and_a_slower_one_does_not_raise_it() {
        let pool: IdlePool<u32> = IdlePool::new(1);
        let opened = |pool: &IdlePool<u32>, took: Duration| {
            let o = pool.origins[0].opening.get();
            let fresh = Opening {
                origin: &pool.origins[0],
                counted: true,
            };
            pool.origins[0].opening.set(o + 1);
            fresh.opened(took);
        };
        opened(&pool, Duration::from_micros(30));
        // A loaded target answers connects slowly: the bound stays where the path put it.
        opened(&pool, Duration::from_millis(5));
        assert_eq!(pool.opening(0), 0);
        let mut held = Vec::new();
        for _ in 0..MIN_OPENING {
            match pool.checkout(0).await {
                (Checkout::Open(o), false) => held.push(o),
                _ => panic!("{MIN_OPENING} open at once"),
            }
        }
        let next = tokio::time::timeout(Duration::from_millis(1), pool.checkout(0)).await;
        assert!(next.is_err(), "the next one waits");
        held.pop();
        assert!(matches!(pool.checkout(0).await, (Checkout::Open(_), false)));
    }

    #[tokio::test(flavor = "current_thread", start_paused = true)]
    async fn a_connect_that_left_the_bound_frees_its_place_once() {
        let pool: IdlePool<u32> = IdlePool::new(1);
        let (mut first, _) = match pool.checkout(0).await {
            (Checkout::Open(o), waited) => (o, waited),
            _ => panic!("opens"),
        };
        assert_eq!(first.counted_for(), SLOW_CONNECT, "no connect timed yet");
        let _second = pool.checkout(0).await;
        assert_eq!(pool.opening(0), 2);
        first.leave();
        first.leave();
        assert_eq!(pool.opening(0), 1);
        first.opened(Duration::from_millis(20));
        assert_eq!(
            pool.opening(0),
            1,
            "dropping it does not free a place again"
        );
        let (third, _) = pool.checkout(0).await;
        match third {
            Checkout::Open(o) => assert_eq!(o.counted_for(), Duration::from_millis(160)),
            Checkout::Idle(_) => panic!("nothing idle"),
        }
    }

    #[test]
    fn the_pool_keeps_what_recent_concurrency_could_use() {
        let pool: IdlePool<u32> = IdlePool::new(1);
        for c in 0..40 {
            pool.give_back(0, c, 4);
        }
        let mut kept = 0;
        while pool.take(0).is_some() {
            kept += 1;
        }
        assert_eq!(kept, 4 + SPARE);
    }
}
