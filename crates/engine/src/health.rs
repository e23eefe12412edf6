//! The generator's own health: CPU time of its worker threads and its memory, from the kernel.

/// CPU seconds consumed by the calling thread (user + system).
pub fn thread_cpu_seconds() -> f64 {
    rusage_seconds(libc::RUSAGE_THREAD)
}

fn rusage_seconds(who: libc::c_int) -> f64 {
    // SAFETY: getrusage only writes into the struct we pass.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(who, &mut usage) } != 0 {
        return 0.0;
    }
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

/// Peak resident memory of the whole process, in bytes.
pub fn max_rss_bytes() -> u64 {
    // SAFETY: as above.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) } != 0 {
        return 0;
    }
    (usage.ru_maxrss as u64) * 1024
}

/// What the generator's workers used, to decide whether it was the bottleneck.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GeneratorUsage {
    pub cpu_seconds: f64,
    pub wall_seconds: f64,
    pub threads: u32,
}

impl GeneratorUsage {
    /// CPU time / wall time / cores used, in percent.
    pub fn cpu_percent(&self) -> f64 {
        if self.wall_seconds <= 0.0 || self.threads == 0 {
            return 0.0;
        }
        100.0 * self.cpu_seconds / (self.wall_seconds * self.threads as f64)
    }
}

/// Cores this process may run on (affinity and cgroup quota respected).
pub fn available_cores() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_percent_is_of_the_threads_used() {
        let u = GeneratorUsage {
            cpu_seconds: 1.5,
            wall_seconds: 1.0,
            threads: 2,
        };
        assert!((u.cpu_percent() - 75.0).abs() < 1e-9);
        let idle = GeneratorUsage {
            cpu_seconds: 0.0,
            wall_seconds: 0.0,
            threads: 1,
        };
        assert_eq!(idle.cpu_percent(), 0.0);
    }
}
