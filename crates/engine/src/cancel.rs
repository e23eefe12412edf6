//! Cooperative cancellation (signals, aborts): a flag passed in, never a global, with the
//! reason it was raised (the run record says which signal stopped a run) and whether the
//! requests already sent may finish (a threshold's abort) or are cut off (a signal).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

#[derive(Debug, Default)]
struct Inner {
    flag: AtomicBool,
    /// The load stopped, but requests in flight may finish (see [`Cancel::drain_because`]).
    drain: AtomicBool,
    reason: Mutex<Option<String>>,
}

#[derive(Debug, Clone, Default)]
pub struct Cancel(Arc<Inner>);

impl Cancel {
    pub fn new() -> Self {
        Self::default()
    }

    /// Stops at once: requests in flight are cut off (and counted `interrupted`).
    pub fn cancel(&self) {
        self.0.drain.store(false, Ordering::Relaxed);
        self.0.flag.store(true, Ordering::Relaxed);
    }

    /// Cancels and remembers why (e.g. `SIGTERM`); the first reason is kept. Ends a drain.
    pub fn cancel_because(&self, reason: &str) {
        self.remember(reason);
        self.cancel();
    }

    /// Stops the load (no new request starts) but lets the requests in flight finish, up to
    /// the run's grace: what a threshold's abort does, so that its own stop does not turn
    /// requests the target was answering into failures. A later `cancel` ends the drain.
    pub fn drain_because(&self, reason: &str) {
        self.remember(reason);
        if !self.is_cancelled() {
            self.0.drain.store(true, Ordering::Relaxed);
        }
        self.0.flag.store(true, Ordering::Relaxed);
    }

    fn remember(&self, reason: &str) {
        if let Ok(mut r) = self.0.reason.lock() {
            r.get_or_insert_with(|| reason.to_string());
        }
    }

    pub fn is_cancelled(&self) -> bool {
        self.0.flag.load(Ordering::Relaxed)
    }

    /// Cancelled, and the requests in flight may still finish.
    pub fn drains(&self) -> bool {
        self.0.drain.load(Ordering::Relaxed)
    }

    pub fn reason(&self) -> Option<String> {
        self.0.reason.lock().ok().and_then(|r| r.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_drain_ends_with_a_signal_and_never_follows_one() {
        let c = Cancel::new();
        c.drain_because("threshold");
        assert!(c.is_cancelled() && c.drains());
        c.cancel_because("SIGINT");
        assert!(c.is_cancelled() && !c.drains());
        assert_eq!(c.reason().as_deref(), Some("threshold"));
        let c = Cancel::new();
        c.cancel_because("SIGTERM");
        c.drain_because("threshold");
        assert!(!c.drains(), "a signal already cut the run off");
    }
}
