//! How the open model's scheduler waits when responses are read at its wake-ups (see
//! http/deferred.rs): it looks at them when it wakes for arrivals, sleeps for them when they
//! are due first, and reads them as they come when only they can end its wait.

use crate::flow::Worker;
use crate::http::DeferredIo;
use crate::transport::Transport;
use std::future::Future;
use tokio::time::Instant;

impl<T: Transport> Worker<T> {
    /// Wakes the tasks whose deferred reads have bytes and lets them finish before the caller
    /// goes on: their connections come back to the pool for the arrivals it starts next,
    /// instead of those arrivals opening more (or waiting for them).
    pub async fn poll_reads(&self) {
        if self.deferred.as_ref().is_some_and(|io| io.poll() > 0) {
            tokio::task::yield_now().await;
        }
    }

    /// Sleeps until `at`, or until a deferred read parks while none was, as its due time may
    /// come first: then returns false and the caller works out its wake-up again.
    pub async fn sleep_unless_reads_park(&self, at: Instant) -> bool {
        match &self.deferred {
            Some(io) if io.due().is_none() => tokio::select! {
                biased;
                _ = io.parked() => false,
                _ = self.sleep_until(at) => true,
            },
            _ => {
                self.sleep_until(at).await;
                true
            }
        }
    }

    /// When deferred reads must be looked at next (`None`: none is waiting).
    pub fn reads_due(&self) -> Option<Instant> {
        self.deferred.as_ref().and_then(|io| io.due())
    }

    /// Awaits `fut`, looking at deferred reads whenever they are due meanwhile: whoever waits
    /// in the open model's scheduler keeps the responses it waits for coming in.
    pub async fn while_reading<F: Future>(&self, fut: F) -> F::Output {
        self.reading(fut, Pace::WhenDue).await
    }

    /// Awaits `fut`, reading deferred responses as soon as they come: for waits that only
    /// responses end (every `max_in_flight` slot or connection held, the run's last requests).
    /// Read at the next wake-up instead, each would hold its slot up to 2 ms more: with
    /// `--max-in-flight 50`, 30,000 arrivals/s delivered 23,700/s.
    pub async fn reading_as_they_come<F: Future>(&self, fut: F) -> F::Output {
        self.reading(fut, Pace::AsTheyCome).await
    }

    async fn reading<F: Future>(&self, fut: F, mut pace: Pace) -> F::Output {
        let Some(io) = &self.deferred else {
            return fut.await;
        };
        tokio::pin!(fut);
        loop {
            tokio::select! {
                biased;
                out = &mut fut => return out,
                ready = self.reads_to_look_at(io, pace) => {
                    if ready.is_err() {
                        // The set cannot be waited on: its reads keep their own deadline.
                        pace = Pace::WhenDue;
                    }
                }
            }
            self.poll_reads().await;
        }
    }

    /// Resolves when there are reads to look at, at `pace`.
    async fn reads_to_look_at(&self, io: &DeferredIo, pace: Pace) -> std::io::Result<()> {
        match pace {
            Pace::AsTheyCome => io.any_ready().await,
            Pace::WhenDue => loop {
                match io.due() {
                    Some(due) => {
                        self.sleep_until(due).await;
                        return Ok(());
                    }
                    None => io.parked().await,
                }
            },
        }
    }
}

/// When a waiting scheduler looks at deferred reads.
#[derive(Clone, Copy)]
enum Pace {
    /// When the oldest parked read is due (it rides the arrivals' wake-ups otherwise).
    WhenDue,
    /// As soon as bytes come (waiting on the set's descriptor).
    AsTheyCome,
}
