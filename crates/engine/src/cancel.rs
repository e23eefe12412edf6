//! Cooperative cancellation (signals, aborts, a control's stop): a flag passed in, never a
//! global, with the typed cause it was raised for (the run record says which signal stopped a
//! run, and how each run stopped) and whether the
//! requests already sent may finish (a threshold's abort) or are cut off (a signal). Each run
//! stops through a child of the caller's flag, so a threshold's abort ends that run only and
//! a study, a capacity search or `--retry-invalid` goes on with the next.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// Why a flag was raised.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StopCause {
    /// A signal to the process (`SIGINT`, `SIGTERM`, `SIGHUP`): requests in flight are cut
    /// off, and the record names the signal.
    Signal(String),
    /// A threshold's abort: the load stops, requests in flight finish.
    Threshold,
    /// A control's stop (`loadlab control … stop`, the page's button): as a threshold's.
    Control,
}

#[derive(Debug, Default)]
struct Inner {
    flag: AtomicBool,
    /// The load stopped, but requests in flight may finish (see [`Cancel::drain_because`]).
    drain: AtomicBool,
    cause: Mutex<Option<StopCause>>,
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

    /// Cancels and remembers why (a signal); the first cause is kept. Ends a drain.
    pub fn cancel_because(&self, cause: StopCause) {
        self.remember(cause);
        self.cancel();
    }

    /// Stops the load (no new request starts) but lets the requests in flight finish, up to
    /// the run's grace: what a threshold's abort does, so that its own stop does not turn
    /// requests the target was answering into failures. A later `cancel` ends the drain.
    pub fn drain_because(&self, cause: StopCause) {
        self.remember(cause);
        if !self.is_cancelled() {
            self.0.drain.store(true, Ordering::Relaxed);
        }
        self.0.flag.store(true, Ordering::Relaxed);
    }

    fn remember(&self, cause: StopCause) {
        if let Ok(mut c) = self.0.cause.lock() {
            c.get_or_insert(cause);
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

    /// Why it was raised: its own cause first (the first one kept), else the caller's.
    pub fn cause(&self) -> Option<StopCause> {
        let own = self.0.cause.lock().ok().and_then(|c| c.clone());
        own.or_else(|| self.0.parent.as_ref().and_then(Cancel::cause))
    }

    /// The signal that raised it (its own or the caller's), if a signal did.
    pub fn signal(&self) -> Option<String> {
        match self.cause() {
            Some(StopCause::Signal(name)) => Some(name),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_drain_ends_with_a_signal_and_never_follows_one() {
        let c = Cancel::new();
        c.drain_because(StopCause::Threshold);
        assert!(c.is_cancelled() && c.drains());
        c.cancel_because(StopCause::Signal("SIGINT".into()));
        assert!(c.is_cancelled() && !c.drains());
        assert_eq!(c.cause(), Some(StopCause::Threshold));
        let c = Cancel::new();
        c.cancel_because(StopCause::Signal("SIGTERM".into()));
        c.drain_because(StopCause::Threshold);
        assert!(!c.drains(), "a signal already cut the run off");
    }

    #[test]
    fn a_run_s_abort_stays_in_the_run_and_a_signal_reaches_every_run() {
        let study = Cancel::new();
        let first = study.child();
        first.drain_because(StopCause::Threshold);
        assert!(first.is_cancelled() && first.drains());
        assert!(
            !study.is_cancelled(),
            "the next run of the study still runs"
        );
        let second = study.child();
        assert!(!second.is_cancelled() && second.cause().is_none());
        study.cancel_because(StopCause::Signal("SIGINT".into()));
        assert!(second.is_cancelled() && !second.drains());
        assert_eq!(second.signal().as_deref(), Some("SIGINT"));
        assert!(!first.drains(), "the signal cuts the first run's drain off");
        assert_eq!(first.cause(), Some(StopCause::Threshold));
        let third = Cancel::new();
        let run = third.child();
        third.drain_because(StopCause::Threshold);
        assert!(run.is_cancelled() && run.drains());
    }
}
