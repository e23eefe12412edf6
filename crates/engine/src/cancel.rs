//! Cooperative cancellation (signals, aborts): a flag passed in, never a global, with the
//! reason it was raised (the run record says which signal stopped a run).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

#[derive(Debug, Default)]
struct Inner {
    flag: AtomicBool,
    reason: Mutex<Option<String>>,
}

#[derive(Debug, Clone, Default)]
pub struct Cancel(Arc<Inner>);

impl Cancel {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn cancel(&self) {
        self.0.flag.store(true, Ordering::Relaxed);
    }

    /// Cancels and remembers why (e.g. `SIGTERM`); the first reason is kept.
    pub fn cancel_because(&self, reason: &str) {
        if let Ok(mut r) = self.0.reason.lock() {
            r.get_or_insert_with(|| reason.to_string());
        }
        self.cancel();
    }

    pub fn is_cancelled(&self) -> bool {
        self.0.flag.load(Ordering::Relaxed)
    }

    pub fn reason(&self) -> Option<String> {
        self.0.reason.lock().ok().and_then(|r| r.clone())
    }
}
