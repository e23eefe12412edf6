//! Host CPU from `/proc/stat` (through `procfs`): busy share and its split into user,
//! system, iowait and steal, for all CPUs together and for each core.

use crate::collect::Collect;
use procfs::{CpuTime, KernelStats};

/// Shares of one interval, in percent of the CPUs counted (0–100).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct CpuShares {
    /// Everything but idle and iowait (so steal counts as busy: the CPU was not ours to use).
    pub busy: f64,
    /// user + nice (guest time is included in user by the kernel).
    pub user: f64,
    /// system + irq + softirq.
    pub system: f64,
    pub iowait: f64,
    pub steal: f64,
}

/// One CPU's counters in ticks: user, system, iowait, steal, idle.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ticks(pub [u64; 5]);

impl From<&CpuTime> for Ticks {
    fn from(t: &CpuTime) -> Self {
        let user = t.user + t.nice;
        let system = t.system + t.irq.unwrap_or(0) + t.softirq.unwrap_or(0);
        Ticks([
            user,
            system,
            t.iowait.unwrap_or(0),
            t.steal.unwrap_or(0),
            t.idle,
        ])
    }
}

/// Shares between two readings of the same counters; `None` when no tick passed.
pub fn shares(prev: Ticks, cur: Ticks) -> Option<CpuShares> {
    let (p, c) = (prev.0, cur.0);
    // Counters can step back slightly (iowait, CPU hotplug): clamp each delta at zero.
    let d: Vec<f64> = p
        .iter()
        .zip(c)
        .map(|(a, b)| b.saturating_sub(*a) as f64)
        .collect();
    let total: f64 = d.iter().sum();
    if total <= 0.0 {
        return None;
    }
    let pct = |x: f64| 100.0 * x / total;
    Some(CpuShares {
        busy: pct(d[0] + d[1] + d[3]),
        user: pct(d[0]),
        system: pct(d[1]),
        iowait: pct(d[2]),
        steal: pct(d[3]),
    })
}

/// Keeps the previous reading of `/proc/stat`.
pub struct CpuSampler {
    prev: Option<KernelStats>,
}

impl CpuSampler {
    pub fn new() -> Self {
        use procfs::CurrentSI;
        CpuSampler {
            prev: KernelStats::current().ok(),
        }
    }

    pub fn sample(&mut self, out: &mut Collect) {
        use procfs::CurrentSI;
        const SOURCE: &str = "host.cpu";
        let cur = match KernelStats::current() {
            Ok(cur) => cur,
            Err(e) => {
                out.fail(SOURCE, || format!("cannot read /proc/stat: {e}"));
                return;
            }
        };
        out.ok(SOURCE);
        out.set("host.cpu_count", cur.cpu_time.len() as f64);
        if let Some(prev) = &self.prev {
            if let Some(s) = shares((&prev.total).into(), (&cur.total).into()) {
                out.set("host.cpu_percent", s.busy);
                out.set("host.cpu.user_percent", s.user);
                out.set("host.cpu.system_percent", s.system);
                out.set("host.cpu.iowait_percent", s.iowait);
                out.set("host.cpu.steal_percent", s.steal);
            }
            if prev.cpu_time.len() == cur.cpu_time.len() {
                for (i, (p, c)) in prev.cpu_time.iter().zip(&cur.cpu_time).enumerate() {
                    if let Some(s) = shares(p.into(), c.into()) {
                        out.set(format!("host.core.{i}.cpu_percent"), s.busy);
                        out.set(format!("host.core.{i}.user_percent"), s.user);
                        out.set(format!("host.core.{i}.system_percent"), s.system);
                        out.set(format!("host.core.{i}.iowait_percent"), s.iowait);
                        out.set(format!("host.core.{i}.steal_percent"), s.steal);
                    }
                }
            }
        }
        self.prev = Some(cur);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(user: u64, system: u64, idle: u64, iowait: u64, steal: u64) -> Ticks {
        Ticks([user, system, iowait, steal, idle])
    }

    #[test]
    fn splits_busy_time() {
        let s = shares(t(100, 50, 1000, 10, 0), t(160, 70, 1010, 20, 10)).unwrap();
        // deltas: user 60, system 20, idle 10, iowait 10, steal 10 → total 110
        let close = |a: f64, b: f64| (a - b).abs() < 1e-9;
        assert!(close(s.user, 6000.0 / 110.0));
        assert!(close(s.system, 2000.0 / 110.0));
        assert!(close(s.steal, 1000.0 / 110.0));
        assert!(close(s.iowait, 1000.0 / 110.0));
        assert!(close(s.busy, 9000.0 / 110.0));
        assert_eq!(shares(t(1, 1, 1, 1, 1), t(1, 1, 1, 1, 1)), None);
        // A counter stepping back does not give negative shares.
        let s = shares(t(100, 0, 100, 50, 0), t(150, 0, 150, 40, 0)).unwrap();
        assert!((s.busy - 50.0).abs() < 1e-9 && s.iowait == 0.0);
    }
}
