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

/// Bounds beyond which the generator, not the target, limited the measurement.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HealthLimits {
    pub max_cpu_percent: f64,
    pub max_lag_ms: f64,
}

/// Reasons the generator itself made the run invalid (empty when it was healthy).
pub fn generator_verdict(
    cpu_percent: f64,
    threads: usize,
    lag_p99_ms: f64,
    limits: &HealthLimits,
) -> Vec<String> {
    let mut reasons = Vec::new();
    if cpu_percent >= limits.max_cpu_percent {
        reasons.push(format!(
            "the load generator was saturated: its workers used {cpu_percent:.0}% of {threads} core(s) (limit {:.0}%), so measured latency includes time spent waiting for the generator itself; use fewer VUs, a lower rate, more --threads, or a separate machine",
            limits.max_cpu_percent
        ));
    }
    if lag_p99_ms > limits.max_lag_ms {
        reasons.push(format!(
            "the scheduler started arrivals late: lag p99 {lag_p99_ms:.1} ms exceeds {:.0} ms, so the offered load was not what the plan said",
            limits.max_lag_ms
        ));
    }
    reasons
}

/// The open model must deliver at least 98% of its planned arrivals.
pub fn delivery_verdict(planned: f64, dropped: u64, max_in_flight: u32) -> Option<String> {
    let share = if planned > 0.0 {
        dropped as f64 / planned
    } else {
        0.0
    };
    (share > 0.02).then(|| {
        format!(
            "{dropped} of {planned:.0} planned arrivals ({:.1}%) could not start because max_in_flight ({max_in_flight}) requests were already open: the target could not keep up with the offered rate, so less than 98% of the plan was delivered",
            100.0 * share
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generator_verdicts_table() {
        let limits = HealthLimits {
            max_cpu_percent: 90.0,
            max_lag_ms: 10.0,
        };
        let cases = [
            (50.0, 1.0, 0, ""),
            (89.9, 9.9, 0, ""),
            (
                90.0,
                1.0,
                1,
                "the load generator was saturated: its workers used 90% of 2 core(s)",
            ),
            (
                12.0,
                10.5,
                1,
                "the scheduler started arrivals late: lag p99 10.5 ms",
            ),
            (99.0, 50.0, 2, "the load generator was saturated"),
        ];
        for (cpu, lag, count, start) in cases {
            let reasons = generator_verdict(cpu, 2, lag, &limits);
            assert_eq!(reasons.len(), count, "cpu {cpu} lag {lag}: {reasons:?}");
            if count > 0 {
                assert!(reasons[0].starts_with(start), "{reasons:?}");
            }
        }
    }

    #[test]
    fn delivery_verdicts_table() {
        assert_eq!(delivery_verdict(1000.0, 0, 10), None);
        assert_eq!(delivery_verdict(1000.0, 20, 10), None);
        let r = delivery_verdict(1000.0, 21, 10).unwrap();
        assert!(r.starts_with("21 of 1000 planned arrivals (2.1%)"), "{r}");
        assert_eq!(delivery_verdict(0.0, 0, 10), None);
    }

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
