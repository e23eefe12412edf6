//! Sub-millisecond sleeps inside a tokio runtime.
//!
//! tokio's timer wheel ticks once per millisecond, so `sleep_until` wakes up to ~2 ms late:
//! at 5000 arrivals/s the open model's scheduler would send ten arrivals as a clump, and the
//! built-in target's `--service-time 5ms` would serve in 6.3 ms. A Linux `timerfd` armed with
//! the exact remaining time and awaited through the runtime's own epoll wakes within tens of
//! microseconds, at the cost of two cheap syscalls per wait (arm, read). Used by the engine and
//! the target.

pub mod resolution;

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::Instant;
use tokio::io::unix::AsyncFd;

pub struct PreciseTimer {
    fd: AsyncFd<OwnedFd>,
}

impl PreciseTimer {
    pub fn new() -> io::Result<Self> {
        // SAFETY: plain syscall; the returned descriptor is owned by the OwnedFd below.
        let raw = unsafe {
            libc::timerfd_create(
                libc::CLOCK_MONOTONIC,
                libc::TFD_NONBLOCK | libc::TFD_CLOEXEC,
            )
        };
        if raw < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `raw` is a fresh, valid descriptor that nothing else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        // SAFETY: the OwnedFd stays open, and owned by the AsyncFd, for the AsyncFd's whole life.
        let fd = unsafe { AsyncFd::register(fd) }?;
        Ok(Self { fd })
    }

    /// Waits until `deadline` (returns at once if it has passed).
    pub async fn sleep_until(&self, deadline: Instant) -> io::Result<()> {
        let now = Instant::now();
        if deadline <= now {
            return Ok(());
        }
        let wait = deadline - now;
        let spec = libc::itimerspec {
            it_interval: libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            },
            it_value: libc::timespec {
                tv_sec: wait.as_secs() as libc::time_t,
                tv_nsec: wait.subsec_nanos().max(1) as libc::c_long,
            },
        };
        arm(&self.fd, &spec)?;
        read_expirations(&self.fd).await.map(|_| ())
    }
}

/// A timer that fires every `period` from its start, for measuring how late a thread gets to
/// run (the engine's pause probe): the kernel keeps the schedule, so each tick says how late
/// it was handled and how many ticks passed unhandled.
pub struct PeriodicTimer {
    fd: AsyncFd<OwnedFd>,
    period: std::time::Duration,
    /// When the last expiration counted so far was due.
    due: Instant,
}

impl PeriodicTimer {
    pub fn new(period: std::time::Duration) -> io::Result<Self> {
        let timer = PreciseTimer::new()?;
        let mut periodic = Self {
            fd: timer.fd,
            period: period.max(std::time::Duration::from_micros(100)),
            due: Instant::now(),
        };
        periodic.start()?;
        Ok(periodic)
    }

    /// (Re)starts the ticks, the first one a period from now.
    pub fn start(&mut self) -> io::Result<()> {
        let p = self.period;
        let spec = libc::itimerspec {
            it_interval: libc::timespec {
                tv_sec: p.as_secs() as libc::time_t,
                tv_nsec: p.subsec_nanos() as libc::c_long,
            },
            it_value: libc::timespec {
                tv_sec: p.as_secs() as libc::time_t,
                tv_nsec: p.subsec_nanos().max(1) as libc::c_long,
            },
        };
        self.due = Instant::now();
        self.settime(&spec)
    }

    /// Stops the ticks until [`PeriodicTimer::start`]: an idle thread is not woken.
    pub fn stop(&mut self) -> io::Result<()> {
        // SAFETY: an all-zero itimerspec is valid and disarms the timer.
        let spec: libc::itimerspec = unsafe { std::mem::zeroed() };
        self.settime(&spec)
    }

    fn settime(&self, spec: &libc::itimerspec) -> io::Result<()> {
        arm(&self.fd, spec)
    }

    /// Waits for the next tick; returns how late the latest expiration was handled and how
    /// many expirations passed since the last call (more than one: the thread did not run
    /// for that many periods).
    pub async fn tick(&mut self) -> io::Result<(std::time::Duration, u64)> {
        let n = read_expirations(&self.fd).await?.max(1);
        self.due += self.period * n as u32;
        let late = Instant::now().saturating_duration_since(self.due);
        Ok((late, n))
    }
}

/// Arms (or, with an all-zero `spec`, disarms) the timer.
fn arm(fd: &AsyncFd<OwnedFd>, spec: &libc::itimerspec) -> io::Result<()> {
    // SAFETY: valid descriptor and a fully initialised itimerspec.
    if unsafe { libc::timerfd_settime(fd.as_raw_fd(), 0, spec, std::ptr::null_mut()) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Waits until the timer has fired and consumes its expirations: how many there were.
async fn read_expirations(fd: &AsyncFd<OwnedFd>) -> io::Result<u64> {
    loop {
        let mut guard = fd.readable().await?;
        let mut expirations = [0u8; 8];
        let read = guard.try_io(|inner| {
            // SAFETY: reading 8 bytes into an 8-byte buffer from a valid descriptor.
            let n = unsafe { libc::read(inner.as_raw_fd(), expirations.as_mut_ptr().cast(), 8) };
            if n < 0 {
                Err(io::Error::last_os_error())
            } else {
                Ok(())
            }
        });
        match read {
            Ok(Ok(())) => {
                // The expirations are consumed: the descriptor is not readable until the
                // timer fires again. Without this the runtime keeps it marked ready, and the
                // next wait pays a read that only says "not yet".
                guard.clear_ready();
                return Ok(u64::from_ne_bytes(expirations));
            }
            Ok(Err(e)) if e.kind() == io::ErrorKind::WouldBlock => continue,
            Ok(Err(e)) => return Err(e),
            Err(_would_block) => continue,
        }
    }
}

/// Sleeps for `duration` precisely, falling back to tokio's timer if no timerfd is available.
pub async fn sleep_precisely(duration: std::time::Duration) {
    let deadline = Instant::now() + duration;
    if let Ok(timer) = PreciseTimer::new() {
        if timer.sleep_until(deadline).await.is_ok() {
            return;
        }
    }
    tokio::time::sleep_until(deadline.into()).await;
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn wakes_within_a_fraction_of_a_millisecond() {
        let timer = PreciseTimer::new().unwrap();
        let mut late = Vec::new();
        for i in 0..50u64 {
            let waited = resolution::run_queue_wait();
            let deadline = Instant::now() + Duration::from_micros(150 + i * 7);
            timer.sleep_until(deadline).await.unwrap();
            assert!(Instant::now() >= deadline, "never early");
            // The timer's own lateness: what the thread spent waiting for a CPU meanwhile is
            // the machine's load (a compiler beside the suite), not the timer.
            let cpu_wait = resolution::run_queue_wait().saturating_sub(waited);
            late.push(
                Instant::now()
                    .saturating_duration_since(deadline)
                    .saturating_sub(cpu_wait),
            );
        }
        late.sort();
        // tokio's own timer is up to ~2 ms late at every wake-up: most of these must be far
        // below a millisecond (one may meet an interrupt or a descheduled vCPU).
        let p90 = late[44];
        assert!(
            p90 < Duration::from_millis(1),
            "p90 lateness {p90:?} of {late:?}"
        );
    }

    #[tokio::test]
    async fn precise_sleeps_are_not_rounded_up_to_milliseconds() {
        // 20 sleeps of 2.2 ms: tokio's timer would take ≥ 3 ms each (60 ms in all).
        let waited = resolution::run_queue_wait();
        let start = Instant::now();
        for _ in 0..20 {
            sleep_precisely(Duration::from_micros(2200)).await;
        }
        let total = start.elapsed();
        assert!(total >= Duration::from_millis(44), "{total:?}");
        // Less the time the thread waited for a CPU (the machine's load, not the timer).
        let net = total.saturating_sub(resolution::run_queue_wait().saturating_sub(waited));
        assert!(net < Duration::from_millis(60), "{net:?} of {total:?}");
    }

    #[tokio::test]
    async fn a_stopped_periodic_timer_stays_silent_until_started_again() {
        let period = Duration::from_millis(2);
        let mut timer = PeriodicTimer::new(period).unwrap();
        let (late, expirations) = timer.tick().await.unwrap();
        assert!(
            expirations >= 1 && late < Duration::from_millis(50),
            "{late:?}"
        );

        timer.stop().unwrap();
        let silent = tokio::time::timeout(period * 10, timer.tick()).await;
        assert!(silent.is_err(), "ticked while stopped: {silent:?}");

        timer.start().unwrap();
        let started = Instant::now();
        let (late, expirations) = timer.tick().await.unwrap();
        // The first tick after a start is a period after it, not a backlog of the 10 periods
        // missed while stopped: its expirations are those of the time since the start (more
        // than one only when the thread waited for a CPU; 5 seen on a busy host).
        let elapsed = started.elapsed();
        let since_start = (elapsed.as_nanos() / period.as_nanos()) as u64;
        assert!(
            expirations >= 1 && expirations <= since_start.max(1),
            "{expirations} expirations {elapsed:?} after the start"
        );
        assert!(elapsed >= period, "{elapsed:?}");
        assert!(late < Duration::from_millis(50), "{late:?}");
    }
}
