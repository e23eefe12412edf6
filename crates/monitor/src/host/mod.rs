//! The machine loadlab runs on: CPU (total and per core), pressure stall information,
//! memory, load, network, TCP sockets and ephemeral ports, the generator's own CPU and open
//! files, and the busiest other processes — everything needed to tell "the host was
//! saturated by someone else" from "the generator was saturated" (seed 004).

pub mod cpu;

use crate::collect::Collect;
use crate::procs::table::ProcessTable;
use crate::sample::ProcessCpu;
use crate::sockets::{SocketScan, SocketTotals, TCP_STATES};
use procfs::Current;
use std::collections::HashMap;

pub use loadlab_metrics::resources::TOP_PROCESSES;
/// Processes below this share of one core are not named.
const TOP_MIN_PERCENT: f64 = 0.5;

pub struct HostSampler {
    cpu: cpu::CpuSampler,
    /// Stall totals (µs) of cpu/memory/io, some and full, at the last interval.
    pressure_prev: [[Option<u64>; 2]; 3],
    net_prev: HashMap<String, (u64, u64)>,
    self_pid: i32,
    ephemeral_range_size: u32,
}

const PRESSURE: [&str; 3] = ["cpu", "memory", "io"];

impl HostSampler {
    pub fn new(ephemeral_range_size: u32) -> Self {
        let mut host = HostSampler {
            cpu: cpu::CpuSampler::new(),
            pressure_prev: [[None; 2]; 3],
            net_prev: HashMap::new(),
            self_pid: std::process::id() as i32,
            ephemeral_range_size,
        };
        // Baselines, so the first interval already has rates.
        host.pressure(0.0, &mut Collect::default());
        host.network(0.0, &mut Collect::default());
        host
    }

    /// Samples everything read from system-wide files; `dt` is the interval in seconds.
    pub fn sample(
        &mut self,
        dt: f64,
        totals: Option<&SocketTotals>,
        sockets: Option<&SocketScan>,
        out: &mut Collect,
    ) {
        self.cpu.sample(out);
        self.pressure(dt, out);
        self.memory(out);
        match procfs::LoadAverage::current() {
            Ok(load) => {
                out.set("host.load1", f64::from(load.one));
                out.set("host.load5", f64::from(load.five));
                out.set("host.load15", f64::from(load.fifteen));
            }
            Err(e) => out.fail("host.load", || format!("cannot read /proc/loadavg: {e}")),
        }
        self.network(dt, out);
        self.sockets(totals, sockets, out);
    }

    /// Socket totals every interval; per-state counts and the exact number of ephemeral
    /// ports taken when the tables were scanned (many sockets), else an upper bound.
    fn sockets(&self, totals: Option<&SocketTotals>, scan: Option<&SocketScan>, out: &mut Collect) {
        if let Some(t) = totals {
            out.set("host.tcp.in_use", t.in_use as f64);
            out.set("host.tcp.established", t.established as f64);
            out.set("host.tcp.time_wait", t.time_wait as f64);
            out.set("host.tcp.orphans", t.orphans as f64);
        }
        if let Some(scan) = scan {
            for (state, count) in TCP_STATES.iter().zip(scan.states) {
                out.set(format!("host.tcp.{state}"), f64::from(count));
            }
        }
        // Every socket holds at most one local port: below the scan threshold the totals
        // bound the ports taken from above.
        let in_use = match (scan, totals) {
            (Some(scan), _) => f64::from(scan.ephemeral_in_use),
            (None, Some(t)) => (t.in_use + t.time_wait) as f64,
            (None, None) => return,
        };
        let range = f64::from(self.ephemeral_range_size);
        out.set("host.ports.ephemeral_in_use", in_use.min(range));
        out.set("host.ports.ephemeral_range", range);
        out.set(
            "host.ports.ephemeral_used_percent",
            100.0 * in_use.min(range) / range,
        );
    }

    /// Share of the interval in which some (or all) tasks stalled on CPU, memory or I/O,
    /// from the kernel's cumulative stall totals (more exact than its 10 s averages).
    fn pressure(&mut self, dt: f64, out: &mut Collect) {
        for (i, resource) in PRESSURE.iter().enumerate() {
            let Ok(text) = std::fs::read_to_string(format!("/proc/pressure/{resource}")) else {
                // Kernels before 4.20, or PSI disabled (psi=0): say so once.
                out.warn_once("host.pressure", || {
                    "no pressure stall information (/proc/pressure): kernel older than 4.20 or booted with psi=0; host contention is judged on CPU busy and steal only".into()
                });
                return;
            };
            for (j, kind) in ["some", "full"].iter().enumerate() {
                let total = parse_pressure_total(&text, kind);
                if let (Some(now), Some(prev)) = (total, self.pressure_prev[i][j]) {
                    if dt > 0.0 {
                        let pct = 100.0 * now.saturating_sub(prev) as f64 / (dt * 1e6);
                        out.set(
                            format!("host.pressure.{resource}_{kind}_percent"),
                            pct.min(100.0),
                        );
                    }
                }
                self.pressure_prev[i][j] = total;
            }
        }
    }

    fn memory(&mut self, out: &mut Collect) {
        match procfs::Meminfo::current() {
            Ok(m) => {
                out.ok("host.memory");
                let available = m.mem_available.unwrap_or(m.mem_free + m.buffers + m.cached);
                out.set("host.memory.total_bytes", m.mem_total as f64);
                out.set("host.memory.available_bytes", available as f64);
                if m.mem_total > 0 {
                    out.set(
                        "host.memory.used_percent",
                        100.0 * (1.0 - available as f64 / m.mem_total as f64),
                    );
                }
            }
            Err(e) => out.fail("host.memory", || format!("cannot read /proc/meminfo: {e}")),
        }
    }

    fn network(&mut self, dt: f64, out: &mut Collect) {
        let devices = match procfs::net::dev_status() {
            Ok(d) => d,
            Err(e) => {
                out.fail("host.net", || format!("cannot read /proc/net/dev: {e}"));
                return;
            }
        };
        for (name, dev) in devices {
            let now = (dev.recv_bytes, dev.sent_bytes);
            if let Some(prev) = self.net_prev.get(&name) {
                if dt > 0.0 {
                    // Series names use dots as separators; VLANs (`eth0.100`) get `_`.
                    let iface = name.replace('.', "_");
                    let rx = now.0.saturating_sub(prev.0) as f64 / dt;
                    let tx = now.1.saturating_sub(prev.1) as f64 / dt;
                    out.set(format!("host.net.{iface}.rx_bytes_per_s"), rx);
                    out.set(format!("host.net.{iface}.tx_bytes_per_s"), tx);
                }
            }
            self.net_prev.insert(name, now);
        }
    }

    /// The generator's own CPU, memory, threads and open files against its limit.
    pub fn generator(&self, table: &ProcessTable, out: &mut Collect) {
        if let Some(me) = table.current.get(&self.self_pid) {
            if table.has_interval() {
                out.set("generator.cpu_percent", table.cpu_percent(self.self_pid));
            }
            out.set(
                "generator.rss_bytes",
                (me.rss_pages * table.page_size) as f64,
            );
            out.set("generator.threads", f64::from(me.threads));
        }
        if let Ok(n) = procfs::process::Process::myself().and_then(|p| p.fd_count()) {
            out.set("generator.open_files", n as f64);
        }
        if let Some(limit) = open_files_limit() {
            out.set("generator.open_files_limit", limit as f64);
        }
    }

    /// The CPU every process used (% of one core), the generator's own included. Each
    /// process's counter is its exact run time, where the host's busy share in `/proc/stat`
    /// is sampled at the scheduler tick: on a tickless kernel work done in short bursts
    /// between ticks is missed (a target serving 1,500 requests/s at 7% of a core left the
    /// host reading 3% busy beside a generator at 10%).
    pub fn processes_cpu(&self, table: &ProcessTable, out: &mut Collect) {
        if !table.has_interval() {
            return;
        }
        let ticks: u64 = table
            .current
            .keys()
            .map(|pid| table.cpu_delta_ticks(*pid))
            .sum();
        out.set("host.processes_cpu_percent", table.ticks_to_percent(ticks));
    }

    /// The busiest processes that are neither the generator nor monitored, by command name.
    pub fn top_others(
        &self,
        table: &ProcessTable,
        monitored: &HashMap<i32, String>,
    ) -> Vec<ProcessCpu> {
        if !table.has_interval() {
            return Vec::new();
        }
        let mut by_name: HashMap<&str, (u32, u64)> = HashMap::new();
        for p in table.current.values() {
            if p.pid == self.self_pid || monitored.contains_key(&p.pid) {
                continue;
            }
            let ticks = table.cpu_delta_ticks(p.pid);
            if ticks > 0 {
                let e = by_name.entry(p.comm.as_str()).or_default();
                e.0 += 1;
                e.1 += ticks;
            }
        }
        let mut top: Vec<ProcessCpu> = by_name
            .into_iter()
            .map(|(name, (processes, ticks))| ProcessCpu {
                name: name.to_string(),
                processes,
                cpu_percent: table.ticks_to_percent(ticks),
            })
            .filter(|p| p.cpu_percent >= TOP_MIN_PERCENT)
            .collect();
        top.sort_by(|a, b| {
            b.cpu_percent
                .total_cmp(&a.cpu_percent)
                .then(a.name.cmp(&b.name))
        });
        top.truncate(TOP_PROCESSES);
        top
    }
}

/// The soft open-file limit of this process (`None` when unlimited).
pub fn open_files_limit() -> Option<u64> {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `lim` is a valid, writable rlimit.
    let rc = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) };
    (rc == 0 && lim.rlim_cur != libc::RLIM_INFINITY).then_some(lim.rlim_cur)
}

/// `total=` of the `some` or `full` line of a pressure file.
fn parse_pressure_total(text: &str, kind: &str) -> Option<u64> {
    text.lines()
        .find(|l| l.starts_with(kind))?
        .split_whitespace()
        .find_map(|f| f.strip_prefix("total="))?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pressure_totals() {
        let text = "some avg10=14.21 avg60=13.64 avg300=12.96 total=77201837\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=12\n";
        assert_eq!(parse_pressure_total(text, "some"), Some(77201837));
        assert_eq!(parse_pressure_total(text, "full"), Some(12));
        // Kernels before 5.13 have no `full` line for cpu.
        assert_eq!(parse_pressure_total("some avg10=0 total=5\n", "full"), None);
    }

    #[test]
    fn samples_this_host() {
        let mut host = HostSampler::new(28232);
        std::thread::sleep(std::time::Duration::from_millis(50));
        let mut out = Collect::default();
        let mut scanner = crate::sockets::SocketScanner::new();
        let scan = scanner.scan().unwrap();
        let totals = SocketTotals::read().unwrap();
        host.sample(0.05, Some(&totals), Some(&scan), &mut out);
        let (values, missing, _) = out.take();
        assert!(missing.is_empty(), "{missing:?}");
        for series in [
            "host.cpu_count",
            "host.memory.available_bytes",
            "host.load1",
            "host.tcp.listen",
            "host.ports.ephemeral_used_percent",
        ] {
            assert!(values.contains_key(series), "{series} in {values:?}");
        }
        assert!(values["host.memory.available_bytes"] > 0.0);
        assert!(values.keys().any(|k| k.starts_with("host.net.lo.")));
    }
}
