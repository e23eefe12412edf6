//! The calling thread's CPU time, to measure what the dashboard costs the coordinator (its
//! wall time there would count the time it was preempted on a busy host).

use std::time::Duration;

/// CPU time consumed by the calling thread so far (user + system).
pub fn thread_cpu() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime only writes into the struct we pass.
    if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) } != 0 {
        return Duration::ZERO;
    }
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}
