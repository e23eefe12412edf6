//! The capacity model that makes the target saturate like a real service: a fixed
//! number of workers, a bounded FIFO queue in front of them, a service time per request
//! and randomly injected failures.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use tokio::sync::{Semaphore, SemaphorePermit};

use crate::config::{ServiceDist, TargetConfig};

/// Why a request was not served normally.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// All workers busy and the queue full: answer 503 at once.
    QueueFull,
    /// The injected failure fired: answer 500 (after holding a worker since `acquired`).
    InjectedError { acquired: Instant },
}

/// Shared capacity state of one server instance.
#[derive(Debug)]
pub struct Capacity {
    /// One permit per worker; `None` = unlimited workers. Tokio's semaphore is fair, so
    /// waiting requests are served in arrival order.
    workers: Option<Semaphore>,
    /// Requests currently waiting for a permit.
    waiting: AtomicUsize,
    queue_limit: Option<usize>,
    service_time: Duration,
    service_dist: ServiceDist,
    error_rate: f64,
    degrade: Option<crate::config::Degrade>,
    stall: Option<crate::config::Stall>,
    /// When the first request was served (for `degrade` and `stall`).
    first: OnceLock<Instant>,
}

/// A worker slot held while a request is served; released on drop.
#[derive(Debug)]
pub struct Slot<'a> {
    _permit: Option<SemaphorePermit<'a>>,
    /// When the worker was obtained (the end of queueing, the start of service).
    pub acquired: Instant,
}

/// Decrements the waiting counter even when the request is cancelled (client gone).
struct WaitingGuard<'a>(&'a AtomicUsize);

impl Drop for WaitingGuard<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Capacity {
    pub fn new(config: &TargetConfig) -> Self {
        Capacity {
            workers: config.workers.map(Semaphore::new),
            waiting: AtomicUsize::new(0),
            queue_limit: config.queue_limit,
            service_time: config.service_time,
            service_dist: config.service_dist,
            error_rate: config.error_rate,
            degrade: config.degrade,
            stall: config.stall,
            first: OnceLock::new(),
        }
    }

    /// The mean service time now: the degraded one once `degrade.after` has passed since the
    /// first request.
    fn mean_service_time(&self) -> Duration {
        let first = *self.first.get_or_init(Instant::now);
        match self.degrade {
            Some(d) if first.elapsed() >= d.after => d.service_time,
            _ => self.service_time,
        }
    }

    /// Runs the whole model for one request: waits for a worker (or refuses when the
    /// queue is full), spends the service time, then maybe injects a failure. The
    /// returned slot must be held while the request's work is done.
    pub async fn serve(&self) -> Result<Slot<'_>, Refusal> {
        if let Some(stall) = self.stall {
            let first = *self.first.get_or_init(Instant::now);
            let wait = stall.wait_at(first.elapsed());
            if !wait.is_zero() {
                loadlab_timer::sleep_precisely(wait).await;
            }
        }
        let slot = self.acquire().await?;
        let delay =
            sample_service_time(self.service_dist, self.mean_service_time(), fastrand::f64());
        if !delay.is_zero() {
            // Exact, not rounded up to tokio's 1 ms ticks: `--service-time 5ms` means 5 ms.
            loadlab_timer::sleep_precisely(delay).await;
        }
        if self.error_rate > 0.0 && fastrand::f64() < self.error_rate {
            return Err(Refusal::InjectedError {
                acquired: slot.acquired,
            });
        }
        Ok(slot)
    }

    /// Takes a worker slot, waiting in FIFO order if all are busy.
    async fn acquire(&self) -> Result<Slot<'_>, Refusal> {
        let Some(sem) = &self.workers else {
            return Ok(Slot {
                _permit: None,
                acquired: Instant::now(),
            });
        };
        // A free permit only exists when nobody waits (the semaphore hands released
        // permits straight to waiters), so this fast path keeps FIFO order.
        if let Ok(permit) = sem.try_acquire() {
            return Ok(Slot {
                _permit: Some(permit),
                acquired: Instant::now(),
            });
        }
        let joined = match self.queue_limit {
            None => {
                self.waiting.fetch_add(1, Ordering::AcqRel);
                true
            }
            Some(limit) => self
                .waiting
                .fetch_update(Ordering::AcqRel, Ordering::Acquire, |w| {
                    (w < limit).then_some(w + 1)
                })
                .is_ok(),
        };
        if !joined {
            return Err(Refusal::QueueFull);
        }
        let _guard = WaitingGuard(&self.waiting);
        // The semaphore is never closed; treat it like overload if it ever were.
        let permit = sem.acquire().await.map_err(|_| Refusal::QueueFull)?;
        Ok(Slot {
            _permit: Some(permit),
            acquired: Instant::now(),
        })
    }

    /// Requests currently waiting for a worker.
    pub fn waiting(&self) -> usize {
        self.waiting.load(Ordering::Acquire)
    }
}

/// Service time of one request. `u` is uniform in `[0, 1)` (e.g. `fastrand::f64()`);
/// taking it as a parameter keeps the function pure and testable.
pub fn sample_service_time(dist: ServiceDist, mean: Duration, u: f64) -> Duration {
    if mean.is_zero() {
        return Duration::ZERO;
    }
    match dist {
        ServiceDist::Fixed => mean,
        ServiceDist::Exp => {
            // Inverse CDF; 1-u is in (0, 1] so the logarithm is finite and <= 0.
            let u = if u.is_finite() {
                u.clamp(0.0, 1.0)
            } else {
                0.5
            };
            let factor = -(1.0 - u).max(f64::MIN_POSITIVE).ln();
            Duration::try_from_secs_f64(mean.as_secs_f64() * factor).unwrap_or(mean)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_is_exact_and_zero_is_zero() {
        let d = Duration::from_millis(50);
        assert_eq!(sample_service_time(ServiceDist::Fixed, d, 0.9), d);
        assert_eq!(
            sample_service_time(ServiceDist::Exp, Duration::ZERO, 0.9),
            Duration::ZERO
        );
    }

    #[test]
    fn exp_mean_is_close_to_requested_mean() {
        let mean = Duration::from_millis(20);
        let mut rng = fastrand::Rng::with_seed(7);
        let n = 2000;
        let total: f64 = (0..n)
            .map(|_| sample_service_time(ServiceDist::Exp, mean, rng.f64()).as_secs_f64())
            .sum();
        let got = total / n as f64;
        // Standard error of the mean is mean/sqrt(2000) ~ 2.2%; allow 10%.
        assert!(
            (got - 0.020).abs() < 0.002,
            "sample mean {got:.5}s, expected 0.020s"
        );
        // Extreme inputs never panic.
        for u in [0.0, 1.0, f64::NAN, -3.0, 0.999_999_999] {
            let _ = sample_service_time(ServiceDist::Exp, mean, u);
        }
    }

    #[tokio::test]
    async fn queue_limit_refuses_when_full() {
        let cap = Capacity::new(&TargetConfig {
            workers: Some(1),
            queue_limit: Some(0),
            ..TargetConfig::default()
        });
        let held = cap.serve().await.expect("first request gets the worker");
        assert_eq!(cap.serve().await.err(), Some(Refusal::QueueFull));
        drop(held);
        assert!(cap.serve().await.is_ok());
        assert_eq!(cap.waiting(), 0);
    }

    #[test]
    fn a_degrading_service_changes_its_service_time_after_the_delay() {
        let degrade = |after_ms: u64| {
            Capacity::new(&TargetConfig {
                service_time: Duration::from_millis(5),
                degrade: Some(crate::config::Degrade {
                    after: Duration::from_millis(after_ms),
                    service_time: Duration::from_millis(300),
                }),
                ..TargetConfig::default()
            })
        };
        let now = degrade(0);
        assert_eq!(now.mean_service_time(), Duration::from_millis(300));
        let later = degrade(60_000);
        assert_eq!(later.mean_service_time(), Duration::from_millis(5));
        assert_eq!(later.mean_service_time(), Duration::from_millis(5));
    }
}
