//! Small facts about this process and the machine that `procfs` does not cover: a thread's
//! own CPU time (the monitor measures its cost with it) and the CPUs a process may use.

use std::io::Read;
use std::time::Duration;

/// Lowers the calling thread's priority (10 nicer than the workers, `SCHED_BATCH`), for the generator's
/// bookkeeping threads (the sampler, the engine's coordinator): they use the time a worker
/// sleeps and never preempt it on waking. Nice 10 alone did not stop that: woken by a
/// worker's interval, the coordinator took the worker's core for 0.2 + 0.2 ms while the other
/// core idled, and the arrival due then went 0.5 ms late (`perf sched timehist`). Only for
/// threads that end with their job (it cannot be undone without privileges).
pub fn lower_this_thread_priority() {
    // SAFETY: plain syscalls on the calling thread (Linux's nice() is per thread). Relative:
    // an absolute nice 10 put these threads above workers of a `nice -n 15 loadlab …`.
    unsafe {
        libc::nice(10);
        let param = libc::sched_param { sched_priority: 0 };
        libc::sched_setscheduler(0, libc::SCHED_BATCH, &param);
    }
}

/// CPU time consumed by the calling thread so far.
pub fn thread_cpu_time() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; the clock id is a constant.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return Duration::ZERO;
    }
    Duration::new(
        ts.tv_sec.max(0) as u64,
        ts.tv_nsec.clamp(0, 999_999_999) as u32,
    )
}

/// How many CPUs the calling process may run on (its affinity mask), at least 1.
pub fn cpus_allowed_self() -> usize {
    // SAFETY: a zeroed cpu_set_t is a valid empty set; the size passed is its size.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) == 0 {
            let n = libc::CPU_COUNT(&set);
            if n > 0 {
                return n as usize;
            }
        }
    }
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// The CPUs the calling process may run on (its affinity mask), in order.
pub fn cpu_list_self() -> Vec<u32> {
    // SAFETY: as in `cpus_allowed_self`; CPU_ISSET only reads the set.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return Vec::new();
        }
        (0..libc::CPU_SETSIZE as usize)
            .filter(|&cpu| libc::CPU_ISSET(cpu, &set))
            .map(|cpu| cpu as u32)
            .collect()
    }
}

/// The calling thread's scheduler statistics from `/proc/thread-self/schedstat`: time it ran,
/// time it was runnable but waited for a CPU (its run delay), and how many times it was
/// scheduled. `None` where the kernel keeps no such statistics.
pub fn thread_schedstat() -> Option<SchedStat> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let mut fields = text.split_whitespace().map(|f| f.parse::<u64>().ok());
    Some(SchedStat {
        run: Duration::from_nanos(fields.next()??),
        waited: Duration::from_nanos(fields.next()??),
        slices: fields.next()??,
    })
}

/// A thread's scheduler statistics (see [`thread_schedstat`]).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct SchedStat {
    pub run: Duration,
    pub waited: Duration,
    pub slices: u64,
}

/// What the classification needs to know about this process as the generator.
pub fn generator_facts() -> loadlab_metrics::resources::GeneratorFacts {
    loadlab_metrics::resources::GeneratorFacts {
        cores_allowed: cpus_allowed_self() as f64,
    }
}

/// Counts the CPUs in a list such as `0-3,8,10-11` (the `Cpus_allowed_list` or
/// `cpuset.cpus.effective` format).
pub fn count_cpu_list(list: &str) -> Option<u32> {
    let mut n = 0u32;
    for part in list.trim().split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (u32, u32) = (a.trim().parse().ok()?, b.trim().parse().ok()?);
                n += b.checked_sub(a)? + 1;
            }
            None => {
                part.trim().parse::<u32>().ok()?;
                n += 1;
            }
        }
    }
    (n > 0).then_some(n)
}

/// Reads a file into `buf` (cleared first), reusing its allocation across intervals.
pub fn read_into(path: &str, buf: &mut Vec<u8>) -> std::io::Result<()> {
    buf.clear();
    std::fs::File::open(path)?.read_to_end(buf)?;
    Ok(())
}

/// Milliseconds since the Unix epoch.
pub fn unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bookkeeping_thread_is_niced_and_batch_and_the_others_are_not() {
        let policy_and_nice = || {
            // SAFETY: plain syscalls about the calling thread.
            unsafe {
                let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
                (
                    libc::sched_getscheduler(0),
                    libc::getpriority(libc::PRIO_PROCESS, tid),
                )
            }
        };
        let (own_policy, own_nice) = policy_and_nice();
        let (policy, nice) = std::thread::spawn(move || {
            lower_this_thread_priority();
            policy_and_nice()
        })
        .join()
        .unwrap();
        assert_eq!(policy, libc::SCHED_BATCH);
        // 10 nicer than the threads it should not disturb (`nice -n 15 cargo test`: 19).
        assert_eq!(nice, (own_nice + 10).min(19));
        let (other, _) = std::thread::spawn(policy_and_nice).join().unwrap();
        assert_eq!(other, own_policy, "other threads keep theirs");
    }

    #[test]
    fn cpu_lists() {
        assert_eq!(count_cpu_list("0-3,8,10-11\n"), Some(7));
        assert_eq!(count_cpu_list("0"), Some(1));
        assert_eq!(count_cpu_list(""), None);
        assert_eq!(count_cpu_list("3-1"), None);
        assert_eq!(count_cpu_list("x"), None);
    }

    #[test]
    fn thread_cpu_time_advances_when_busy() {
        let before = thread_cpu_time();
        let mut x = 0u64;
        let start = std::time::Instant::now();
        while start.elapsed() < Duration::from_millis(30) {
            x = x.wrapping_add(std::hint::black_box(1));
        }
        assert!(x > 0);
        assert!(thread_cpu_time() > before);
        assert!(cpus_allowed_self() >= 1);
    }
}
