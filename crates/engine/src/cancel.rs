//! Cooperative cancellation (signals, aborts): a flag passed in, never a global, with the
//! reason it was raised (the run record says which signal stopped a run) and whether the
//! requests already sent may finish (a threshold's abort) or are cut off (a signal). Each run
//! stops through a child of the caller's flag, so a threshold's abort ends that run only and
//! a study, a capacity search or `--retry-invalid` goes on with the next.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

#[derive(Debug, Default)]
struct Inner {
    flag: AtomicBool,
    /// The load stopped, but requests in flight may finish (see [`Cancel::drain_because`]).
    drain: AtomicBool,
    reason: Mutex<Option<String>>,
    /// The caller's flag: its signal stops this one too, this one's abort not the caller.
    parent: Option<Cancel>,
}

#[derive(Debug, Clone, Default)]
pub struct Cancel(Arc<Inner>);

impl Cancel {
    pub fn new() -> Self {
        Self::default()
    }

    /// A flag raised with this one (a signal) that can also be raised on its own (one run's
    /// threshold abort) without raising this one.
    pub fn child(&self) -> Self {
        Self(Arc::new(Inner {
            parent: Some(self.clone()),
            ..Inner::default()
        }))
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

    fn parent_cancelled(&self) -> Option<&Cancel> {
        self.0.parent.as_ref().filter(|p| p.is_cancelled())
    }

    pub fn is_cancelled(&self) -> bool {
        self.0.flag.load(Ordering::Relaxed) || self.parent_cancelled().is_some()
    }

    /// Cancelled, and the requests in flight may still finish.
    pub fn drains(&self) -> bool {
        match self.parent_cancelled() {
            // A signal to the caller cuts off a drain of this run's own.
            Some(parent) => parent.drains() && !self.own_cut_off(),
            None => self.0.drain.load(Ordering::Relaxed),
        }
    }

    fn own_cut_off(&self) -> bool {
        self.0.flag.load(Ordering::Relaxed) && !self.0.drain.load(Ordering::Relaxed)
    }

    /// Why it was raised: its own reason first (the first one kept), else the caller's.
    pub fn reason(&self) -> Option<String> {
        let own = self.0.reason.lock().ok().and_then(|r| r.clone());
        own.or_else(|| self.0.parent.as_ref().and_then(Cancel::reason))
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

    #[test]
    fn a_run_s_abort_stays_in_the_run_and_a_signal_reaches_every_run() {
        let study = Cancel::new();
        let first = study.child();
        first.drain_because("threshold");
        assert!(first.is_cancelled() && first.drains());
        assert!(
            !study.is_cancelled(),
            "the next run of the study still runs"
        );
        let second = study.child();
        assert!(!second.is_cancelled() && second.reason().is_none());
        study.cancel_because("SIGINT");
        assert!(second.is_cancelled() && !second.drains());
        assert_eq!(second.reason().as_deref(), Some("SIGINT"));
        assert!(!first.drains(), "the signal cuts the first run's drain off");
        assert_eq!(first.reason().as_deref(), Some("threshold"));
        let third = Cancel::new();
        let run = third.child();
        third.drain_because("threshold");
        assert!(run.is_cancelled() && run.drains());
    }
}
