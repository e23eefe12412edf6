//! The sending side of an output: its own thread behind a bounded queue, so that a slow or
//! down receiver never slows the load. When the queue is full the newest interval is dropped
//! and counted; a failed send backs off (250 ms doubling to 4 s) before the next try; at the
//! run's end what is queued is sent within [`FLUSH_BOUND`], the rest counted as dropped.

use super::snapshot::Snapshot;
use super::{SendError, Sink};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Intervals an output may hold before it drops (about a minute at 1 s intervals).
pub const QUEUE_BOUND: usize = 64;
/// How long the end of a run waits for an output to send what it holds.
pub const FLUSH_BOUND: Duration = Duration::from_secs(2);
const FIRST_BACKOFF: Duration = Duration::from_millis(250);
const MAX_BACKOFF: Duration = Duration::from_secs(4);

/// What an output did over the whole command (every run).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Counts {
    /// Intervals delivered.
    pub sent: u64,
    /// Intervals never tried: the queue was full, or the end's flush bound passed.
    pub dropped: u64,
    /// Intervals whose send failed.
    pub failed: u64,
    /// The last failure, as the receiver or the system said it.
    pub error: Option<String>,
}

/// Shared by a tap and the workers of its runs.
pub(crate) type SharedCounts = Arc<Mutex<Counts>>;
pub(crate) type SharedSink = Arc<Mutex<Box<dyn Sink>>>;

fn count(counts: &SharedCounts, f: impl FnOnce(&mut Counts)) {
    if let Ok(mut c) = counts.lock() {
        f(&mut c);
    }
}

/// One run's sender: the queue's sending end and the thread behind it.
pub(crate) struct Worker {
    tx: Option<SyncSender<Snapshot>>,
    thread: Option<JoinHandle<()>>,
    done: Receiver<()>,
    closing: Arc<AtomicBool>,
    abandoned: Arc<AtomicBool>,
    counts: SharedCounts,
}

impl Worker {
    pub fn start(sink: SharedSink, counts: SharedCounts) -> Self {
        let (tx, rx) = mpsc::sync_channel::<Snapshot>(QUEUE_BOUND);
        let (done_tx, done) = mpsc::channel();
        let closing = Arc::new(AtomicBool::new(false));
        let abandoned = Arc::new(AtomicBool::new(false));
        let flags = (closing.clone(), abandoned.clone());
        let c = counts.clone();
        let thread = std::thread::Builder::new()
            .name("loadlab-output".into())
            .spawn(move || {
                drain(rx, &sink, &c, &flags.0, &flags.1);
                let _ = done_tx.send(());
            })
            .ok();
        Self {
            tx: Some(tx),
            thread,
            done,
            closing,
            abandoned,
            counts,
        }
    }

    /// Queues an interval; never blocks (a full queue drops it and counts it).
    pub fn push(&self, snapshot: Snapshot) {
        let Some(tx) = &self.tx else { return };
        match tx.try_send(snapshot) {
            Ok(()) => {}
            Err(TrySendError::Full(_)) | Err(TrySendError::Disconnected(_)) => {
                count(&self.counts, |c| c.dropped += 1)
            }
        }
    }

    /// Sends what is queued within [`FLUSH_BOUND`]; what is left then is counted as dropped.
    pub fn finish(&mut self) {
        self.closing.store(true, Ordering::SeqCst);
        self.tx = None;
        if self.thread.is_none() {
            return;
        }
        if self.done.recv_timeout(FLUSH_BOUND).is_ok() {
            if let Some(t) = self.thread.take() {
                let _ = t.join();
            }
        } else {
            // The thread counts what it still holds as dropped and ends after its current
            // send (each send is bounded by the HTTP timeout); the run does not wait for it.
            self.abandoned.store(true, Ordering::SeqCst);
            self.thread = None;
        }
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        if self.tx.is_some() {
            self.finish();
        }
    }
}

fn drain(
    rx: Receiver<Snapshot>,
    sink: &SharedSink,
    counts: &SharedCounts,
    closing: &AtomicBool,
    abandoned: &AtomicBool,
) {
    let mut backoff = Duration::ZERO;
    while let Ok(snapshot) = rx.recv() {
        if abandoned.load(Ordering::SeqCst) {
            count(counts, |c| c.dropped += 1);
            continue;
        }
        if !backoff.is_zero() {
            wait(backoff, closing);
        }
        let result = match sink.lock() {
            Ok(mut s) => s.send(&snapshot),
            Err(_) => Err(SendError::Poisoned),
        };
        match result {
            Ok(()) => {
                backoff = Duration::ZERO;
                count(counts, |c| c.sent += 1);
            }
            Err(e) => {
                backoff = (backoff * 2).clamp(FIRST_BACKOFF, MAX_BACKOFF);
                count(counts, |c| {
                    c.failed += 1;
                    c.error = Some(e.to_string());
                });
            }
        }
    }
}

/// Sleeps `d`, or less once the run is ending (then every interval gets one try at once).
fn wait(d: Duration, closing: &AtomicBool) {
    let until = Instant::now() + d;
    while Instant::now() < until && !closing.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(20));
    }
}
