//! How late this host wakes a sleeping thread: the precision its timings can have. On an idle
//! virtual machine a timer that expires wakes its thread tens of microseconds to a millisecond
//! late (the vCPU halted, the hypervisor schedules it back), and the open model sends a sparse
//! arrival that much late whatever the generator does. Measured on the host that runs, before
//! the load, so that the generator's validity floor is this host's own (issue 35), not one
//! tuned on another machine.
//!
//! A wake-up is also late when the woken thread waits for a CPU that other work holds: that is
//! contention, which the generator's validity judgement must still see, not precision. So each
//! wake-up's lateness is net of the run-queue wait the kernel counted for this thread meanwhile
//! (`/proc/thread-self/schedstat`): on a host busy with a compiler, wake-ups 3–7 ms late were
//! 3–7 ms of waiting for a CPU and a few tens of microseconds of timer.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Lateness of a timer's wake-ups on this host, from a short measurement, net of the time the
/// thread waited for a CPU.
#[derive(Debug, Clone)]
pub struct WakeLatency {
    /// Each wake-up's lateness less its run-queue wait, sorted.
    late: Vec<Duration>,
}

impl WakeLatency {
    pub fn from_samples(mut late: Vec<Duration>) -> Self {
        late.sort_unstable();
        Self { late }
    }

    /// The lateness at quantile `q` (0..=1), by the nearest rank.
    pub fn quantile(&self, q: f64) -> Duration {
        if self.late.is_empty() {
            return Duration::ZERO;
        }
        let rank = (q.clamp(0.0, 1.0) * self.late.len() as f64).ceil() as usize;
        self.late[rank.clamp(1, self.late.len()) - 1]
    }

    pub fn samples(&self) -> usize {
        self.late.len()
    }
}

/// Sleeps `sleeps.len()` times on a timerfd, as the engine's workers do (timer slack at its
/// minimum, the same clock), each for the given time, and returns how late each wake-up was
/// beyond the time the thread waited for a CPU.
pub fn measure_wake_latency(sleeps: &[Duration]) -> io::Result<WakeLatency> {
    let sleeper = Sleeper::new()?;
    let mut late = Vec::with_capacity(sleeps.len());
    for &sleep in sleeps {
        late.push(sleeper.late_after(sleep)?);
    }
    Ok(WakeLatency::from_samples(late))
}

/// Keeps measuring how late this host wakes a sleeping thread, on a thread of its own, until
/// [`WakeWatch::finish`]: the given sleeps over and over, at most `limit` samples (the first
/// ones kept). Run beside a load, it is the host's timing precision *while* the generator ran:
/// on a virtual machine it comes and goes within seconds (a measurement before a run read p95
/// from 0.13 to 5 ms on the same idle VM), so a floor taken before the run alone called runs
/// sent as late as the host then woke any thread disturbed. Each wake-up costs a few
/// microseconds of CPU.
pub struct WakeWatch {
    stop: Arc<AtomicBool>,
    late: Arc<Mutex<Vec<Duration>>>,
}

impl WakeWatch {
    pub fn start(sleeps: Vec<Duration>, limit: usize) -> io::Result<Self> {
        let stop = Arc::new(AtomicBool::new(false));
        let late = Arc::new(Mutex::new(Vec::new()));
        let (thread_stop, thread_late) = (stop.clone(), late.clone());
        std::thread::Builder::new()
            .name("loadlab-wake-watch".into())
            .spawn(move || {
                let Ok(sleeper) = Sleeper::new() else {
                    return;
                };
                let pause = pause_after_round(&sleeps);
                for (i, sleep) in sleeps.iter().copied().cycle().enumerate() {
                    if i > 0 && i % sleeps.len() == 0 && !pause.is_zero() {
                        std::thread::sleep(pause);
                    }
                    let Ok(lateness) = sleeper.late_after(sleep) else {
                        return;
                    };
                    if thread_stop.load(Ordering::Relaxed) {
                        return;
                    }
                    let mut late = thread_late.lock().unwrap_or_else(|e| e.into_inner());
                    if late.len() < limit {
                        late.push(lateness);
                    }
                }
            })?;
        Ok(Self { stop, late })
    }

    /// Stops the watch (its thread ends after its current sleep, unwaited) and returns what
    /// it measured so far.
    pub fn finish(self) -> WakeLatency {
        self.stop.store(true, Ordering::Relaxed);
        let late = std::mem::take(&mut *self.late.lock().unwrap_or_else(|e| e.into_inner()));
        WakeLatency::from_samples(late)
    }
}

/// The most a watch wakes in a second, on average. Its wake-ups share the generator's cores:
/// unpaced, the 0.5–6 ms sleeps woke it about 330 times a second, 5% of the CPU of a run at
/// 5,000 requests/s on one core (each wake-up of an idle vCPU also switches the worker out and
/// back). A round of sleeps is still measured as one, then the watch rests.
pub const WATCH_WAKES_PER_S: f64 = 100.0;

/// How long a watch rests after each round of `sleeps`, so that it wakes at most
/// [`WATCH_WAKES_PER_S`] times a second (zero when its sleeps are that long already).
pub fn pause_after_round(sleeps: &[Duration]) -> Duration {
    let round: Duration = sleeps.iter().sum();
    let cycle = Duration::from_secs_f64(sleeps.len() as f64 / WATCH_WAKES_PER_S);
    cycle.saturating_sub(round)
}

/// Sleeps like those of a thread woken about every `gap` (an open model's worker between
/// sparse arrivals): 24 lengths spread over `gap`/2 to 3·`gap`/2, within 0.5 to 100 ms. The
/// longer a vCPU stays idle, the later it wakes: on the same idle VM, sleeps of 1 ms woke
/// 0.09–0.18 ms late at p90 and sleeps of 10–20 ms 0.27–1.6 ms, so a watch is only a floor
/// for sends that wait as long as its own sleeps do.
pub fn sleeps_around(gap: Duration) -> Vec<Duration> {
    let gap = gap.as_secs_f64();
    (0..24u32)
        .map(|i| {
            // A fixed shuffle of the 24 steps, so that lengths do not rise in a ramp.
            let step = f64::from((i * 7) % 24) / 23.0;
            Duration::from_secs_f64((gap * (0.5 + step)).clamp(0.0005, 0.1))
        })
        .collect()
}

/// A blocking timerfd on the calling thread, with the timer slack at its minimum.
struct Sleeper {
    fd: OwnedFd,
    /// This thread's `/proc/thread-self/schedstat`, kept open: a watch beside a run reads it
    /// twice per wake-up, hundreds of times a second on the generator's cores, and opening it
    /// each time cost five system calls per read instead of one.
    schedstat: Option<std::fs::File>,
}

impl Sleeper {
    fn new() -> io::Result<Self> {
        wake_promptly();
        // SAFETY: plain syscall; the descriptor is owned by the OwnedFd below.
        let raw = unsafe { libc::timerfd_create(libc::CLOCK_MONOTONIC, libc::TFD_CLOEXEC) };
        if raw < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `raw` is a fresh, valid descriptor nothing else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        let schedstat = std::fs::File::open("/proc/thread-self/schedstat").ok();
        Ok(Self { fd, schedstat })
    }

    /// As [`run_queue_wait`], read again from the file kept open.
    fn run_queue_wait(&self) -> Duration {
        use std::os::unix::fs::FileExt;
        let mut buf = [0u8; 128];
        let n = self
            .schedstat
            .as_ref()
            .and_then(|f| f.read_at(&mut buf, 0).ok())
            .unwrap_or(0);
        waited_in(&buf[..n])
    }

    /// Sleeps for `sleep`; how late it woke, less the time it waited for a CPU meanwhile.
    fn late_after(&self, sleep: Duration) -> io::Result<Duration> {
        let waited_before = self.run_queue_wait();
        let deadline = Instant::now() + sleep;
        let spec = libc::itimerspec {
            it_interval: libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            },
            it_value: libc::timespec {
                tv_sec: sleep.as_secs() as libc::time_t,
                tv_nsec: sleep.subsec_nanos().max(1) as libc::c_long,
            },
        };
        // SAFETY: valid descriptor and a fully initialised itimerspec.
        if unsafe { libc::timerfd_settime(self.fd.as_raw_fd(), 0, &spec, std::ptr::null_mut()) } < 0
        {
            return Err(io::Error::last_os_error());
        }
        let mut expirations = [0u8; 8];
        // SAFETY: a blocking read of 8 bytes into an 8-byte buffer from a valid descriptor.
        let n = unsafe { libc::read(self.fd.as_raw_fd(), expirations.as_mut_ptr().cast(), 8) };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        let lateness = Instant::now().saturating_duration_since(deadline);
        let waited = self.run_queue_wait().saturating_sub(waited_before);
        Ok(lateness.saturating_sub(waited))
    }
}

/// How long this thread has waited for a CPU in all (0 where the kernel keeps no schedstat).
#[cfg(test)]
pub(crate) fn run_queue_wait() -> Duration {
    waited_in(&std::fs::read("/proc/thread-self/schedstat").unwrap_or_default())
}

/// The run-queue wait (the second field, in ns) of a schedstat line; zero when unreadable.
fn waited_in(schedstat: &[u8]) -> Duration {
    std::str::from_utf8(schedstat)
        .ok()
        .and_then(|t| t.split_whitespace().nth(1)?.parse().ok())
        .map_or(Duration::ZERO, Duration::from_nanos)
}

/// The sleeps of the measurement before a run: 24 sleeps of 0.5 to 6 ms (the gaps of sparse
/// arrivals, the ones woken for exactly; longer sleeps let an idle CPU sink into deeper idle
/// states and wake later), about 75 ms in all.
pub fn run_start_sleeps() -> Vec<Duration> {
    (0..24u64)
        .map(|i| Duration::from_micros(500 + (i * 2_391) % 5_500))
        .collect()
}

/// Makes this thread's timers fire when due: its timer slack set to 1 ns (Linux's default is
/// 50 µs, to merge a timer with others), and a short time slice asked for, so that it runs
/// as soon as it wakes ([`prefer_prompt_wakeups`]).
pub fn wake_promptly() {
    // SAFETY: PR_SET_TIMERSLACK takes an unsigned long and changes only this thread.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0);
    }
    prefer_prompt_wakeups();
}

/// The time slice this thread asks the kernel's fair scheduler for (Linux ≥ 6.12, EEVDF).
pub const SHORT_SLICE: Duration = Duration::from_micros(100);

/// Asks for a short time slice ([`SHORT_SLICE`]) for this thread, so that when it wakes it
/// takes the CPU from a thread that is running at once, instead of waiting for that thread's
/// slice to end: EEVDF lets a running task finish up to its slice (3 ms by default) before
/// a woken one of equal weight runs, unless the woken one asked for a shorter slice
/// (`PREEMPT_SHORT`). Measured on a 2-core VM at 400 arrivals/s: the kernel's own DAMON thread
/// (`kdamond`) ran 0.6–2.3 ms on the worker's core while the worker's timer had expired, and
/// those sends went out that late. The thread's policy and nice value stay as they are; no
/// privilege is needed. Older kernels ignore the request or refuse it, which changes nothing.
fn prefer_prompt_wakeups() {
    let Some(mut attr) = SchedAttr::of_this_thread() else {
        return;
    };
    if attr.sched_policy != libc::SCHED_OTHER as u32 {
        return;
    }
    attr.sched_runtime = SHORT_SLICE.as_nanos() as u64;
    // SAFETY: a fully initialised sched_attr of the size given; pid 0 is the calling thread.
    unsafe {
        libc::syscall(libc::SYS_sched_setattr, 0, &attr, 0);
    }
}

/// `struct sched_attr` as the kernel defines it (SCHED_ATTR_SIZE_VER1, 56 bytes).
#[repr(C)]
#[derive(Debug, Default)]
struct SchedAttr {
    size: u32,
    sched_policy: u32,
    sched_flags: u64,
    sched_nice: i32,
    sched_priority: u32,
    sched_runtime: u64,
    sched_deadline: u64,
    sched_period: u64,
    sched_util_min: u32,
    sched_util_max: u32,
}

impl SchedAttr {
    /// The calling thread's scheduling attributes, where the kernel gives them.
    fn of_this_thread() -> Option<SchedAttr> {
        let mut attr = SchedAttr::default();
        let size = std::mem::size_of::<SchedAttr>() as u32;
        // SAFETY: sched_getattr writes at most `size` bytes into `attr`, a valid sched_attr
        // (SCHED_ATTR_SIZE_VER1 layout); pid 0 is the calling thread.
        let got = unsafe { libc::syscall(libc::SYS_sched_getattr, 0, &mut attr, size, 0) };
        attr.size = size;
        (got == 0).then_some(attr)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_thread_that_wakes_promptly_asks_for_a_short_time_slice() {
        let time_slice =
            || SchedAttr::of_this_thread().map(|a| Duration::from_nanos(a.sched_runtime));
        std::thread::spawn(move || {
            let before = time_slice();
            wake_promptly();
            let after = time_slice();
            // Kernels before 6.12 report no slice (0) and keep none; those after report the
            // default slice (0.7–3 ms) before, and must keep the one asked for.
            if before.is_some_and(|s| !s.is_zero()) {
                assert_eq!(after, Some(SHORT_SLICE), "before: {before:?}");
            }
        })
        .join()
        .unwrap();
    }

    #[test]
    fn the_schedstat_kept_open_is_read_anew_each_time() {
        assert_eq!(waited_in(b"8000 456 7\n"), Duration::from_nanos(456));
        assert_eq!(waited_in(b""), Duration::ZERO);
        std::thread::spawn(|| {
            let sleeper = Sleeper::new().unwrap();
            let Some(file) = &sleeper.schedstat else {
                return; // a kernel without schedstat
            };
            let ran = || {
                use std::os::unix::fs::FileExt;
                let mut buf = [0u8; 128];
                let n = file.read_at(&mut buf, 0).unwrap();
                let text = std::str::from_utf8(&buf[..n]).unwrap().to_string();
                text.split_whitespace()
                    .next()
                    .unwrap()
                    .parse::<u64>()
                    .unwrap()
            };
            let before = ran();
            let spin = Instant::now();
            while spin.elapsed() < Duration::from_millis(20) {
                std::hint::black_box(spin.elapsed());
            }
            assert!(
                ran() > before,
                "the kept file shows this thread's new run time"
            );
            let fresh_before = run_queue_wait();
            let kept = sleeper.run_queue_wait();
            assert!(kept >= fresh_before && kept <= run_queue_wait());
        })
        .join()
        .unwrap();
    }

    #[test]
    fn quantiles_by_nearest_rank() {
        let w = WakeLatency::from_samples((1..=100).rev().map(Duration::from_micros).collect());
        assert_eq!(w.quantile(0.5), Duration::from_micros(50));
        assert_eq!(w.quantile(0.99), Duration::from_micros(99));
        assert_eq!(w.quantile(1.0), Duration::from_micros(100));
        assert_eq!(w.quantile(0.0), Duration::from_micros(1));
        assert_eq!(
            WakeLatency::from_samples(vec![]).quantile(0.5),
            Duration::ZERO
        );
    }

    #[test]
    fn a_measurement_never_wakes_early_and_takes_about_its_sleeps() {
        let sleeps = run_start_sleeps();
        let total: Duration = sleeps.iter().sum();
        let started = Instant::now();
        let w = measure_wake_latency(&sleeps).unwrap();
        assert_eq!(w.samples(), 24);
        assert!(started.elapsed() >= total, "{:?}", started.elapsed());
        // Lateness is measured, not assumed: positive and far below the sleeps themselves
        // on any machine that runs the suite.
        assert!(w.quantile(0.5) < Duration::from_millis(50), "{w:?}");
    }

    #[test]
    fn a_watch_measures_until_it_is_finished_and_keeps_at_most_its_limit() {
        let watch = WakeWatch::start(run_start_sleeps(), 10).unwrap();
        std::thread::sleep(Duration::from_millis(150));
        // 150 ms of sleeps of 0.5-6 ms: more than 10 wake-ups, of which 10 are kept.
        let w = watch.finish();
        assert_eq!(w.samples(), 10, "{w:?}");
        let short = WakeWatch::start(vec![Duration::from_millis(40)], 100).unwrap();
        std::thread::sleep(Duration::from_millis(130));
        // Three or so 40 ms sleeps, unless the machine running the suite is very busy.
        let n = short.finish().samples();
        assert!((1..=4).contains(&n), "{n}");
    }

    #[test]
    fn a_watch_rests_between_rounds_of_short_sleeps_only() {
        let ms = Duration::from_millis;
        // (sleeps, rest after each round)
        let cases: [(Vec<Duration>, Duration); 4] = [
            // 24 sleeps, 75.3 ms in all: a 240 ms cycle holds 24 wake-ups at 100 a second.
            (
                run_start_sleeps(),
                ms(240) - run_start_sleeps().iter().sum::<Duration>(),
            ),
            (vec![ms(1); 10], ms(90)),
            (vec![ms(10); 24], Duration::ZERO),
            (sleeps_around(ms(20)), Duration::ZERO),
        ];
        for (sleeps, rest) in cases {
            assert_eq!(pause_after_round(&sleeps), rest, "{sleeps:?}");
        }
    }

    #[test]
    fn a_watch_of_short_sleeps_wakes_at_most_about_its_rate() {
        let watch = WakeWatch::start(run_start_sleeps(), 10_000).unwrap();
        std::thread::sleep(Duration::from_millis(1_000));
        let n = watch.finish().samples();
        // Unpaced, a second of these sleeps woke about 330 times; paced, four rounds or so
        // of 24 (at least the first one whole, however busy the machine).
        assert!((24..=130).contains(&n), "{n}");
    }

    #[test]
    fn sleeps_spread_around_the_gap_within_bounds() {
        let s = sleeps_around(Duration::from_millis(20));
        let us = |d: &Duration| (d.as_secs_f64() * 1e6).round() as u64;
        let (min, max) = (s.iter().min().unwrap(), s.iter().max().unwrap());
        assert_eq!((us(min), us(max)), (10_000, 30_000));
        assert!(s.windows(2).any(|w| w[0] > w[1]), "not a ramp: {s:?}");
        assert!(sleeps_around(Duration::from_micros(100))
            .iter()
            .all(|&d| d == Duration::from_micros(500)));
        assert!(sleeps_around(Duration::from_secs(1))
            .iter()
            .all(|&d| d == Duration::from_millis(100)));
    }
}
