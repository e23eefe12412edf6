//! Every process of the machine, read from `/proc/<pid>/stat` once per interval: the one
//! scan that gives the generator's CPU, the monitored process trees (through parent ids)
//! and the busiest other processes of a contended host.
//!
//! Read by hand rather than with `procfs::process::all_processes()`: the scan runs every
//! interval over hundreds of processes, and a reused buffer with a parser that allocates only
//! the command name keeps it at a few microseconds per process.

use crate::sys::read_into;
use std::collections::HashMap;
use std::time::Instant;

/// What one `/proc/<pid>/stat` line says.
#[derive(Debug, Clone, PartialEq)]
pub struct ProcStat {
    pub pid: i32,
    pub comm: String,
    pub ppid: i32,
    /// utime + stime, in clock ticks.
    pub cpu_ticks: u64,
    pub threads: u32,
    pub rss_pages: u64,
    /// Start time after boot, in clock ticks (tells a reused pid apart).
    pub start_ticks: u64,
    /// A zombie (`Z`) or dead (`X`) process: it has exited and only waits for its parent to
    /// reap it, with no memory and no open files left.
    pub exited: bool,
}

/// Parses a `stat` line; the command name may hold spaces and parentheses, so the fields
/// are counted from the last `)`.
pub fn parse_stat(line: &[u8]) -> Option<ProcStat> {
    let open = line.iter().position(|&b| b == b'(')?;
    let close = line.iter().rposition(|&b| b == b')')?;
    let pid = std::str::from_utf8(&line[..open])
        .ok()?
        .trim()
        .parse()
        .ok()?;
    let comm = String::from_utf8_lossy(line.get(open + 1..close)?).into_owned();
    let rest = std::str::from_utf8(line.get(close + 2..)?).ok()?;
    // Fields after the name, from field 3 (state): ppid is field 4, utime 14, stime 15,
    // num_threads 20, starttime 22, rss 24.
    let f: Vec<&str> = rest.split_ascii_whitespace().take(22).collect();
    let num = |i: usize| f.get(i - 3).and_then(|s| s.parse::<u64>().ok());
    Some(ProcStat {
        pid,
        comm,
        ppid: f.get(1)?.parse().ok()?,
        cpu_ticks: num(14)? + num(15)?,
        threads: num(20)? as u32,
        start_ticks: num(22)?,
        rss_pages: num(24)?,
        exited: matches!(f.first(), Some(&"Z" | &"X" | &"x")),
    })
}

/// The processes of the last two scans.
pub struct ProcessTable {
    pub current: HashMap<i32, ProcStat>,
    previous: HashMap<i32, ProcStat>,
    /// Time since boot at the previous scan, in ticks (processes started later are new).
    previous_uptime_ticks: Option<u64>,
    current_uptime_ticks: Option<u64>,
    pub ticks_per_second: f64,
    pub page_size: u64,
    /// Seconds between the last two scans.
    pub dt: f64,
    last_scan: Option<Instant>,
    buf: Vec<u8>,
    path: String,
}

impl ProcessTable {
    pub fn new() -> Self {
        ProcessTable {
            current: HashMap::new(),
            previous: HashMap::new(),
            previous_uptime_ticks: None,
            current_uptime_ticks: None,
            ticks_per_second: procfs::ticks_per_second() as f64,
            page_size: procfs::page_size(),
            dt: 0.0,
            last_scan: None,
            buf: Vec::with_capacity(512),
            path: String::with_capacity(32),
        }
    }

    /// Reads every process; processes that exit meanwhile, or exited and wait to be reaped,
    /// are skipped: a monitored target that died is "not running", not a process of 0 bytes
    /// and 0 open files.
    pub fn scan(&mut self) -> std::io::Result<()> {
        let now = Instant::now();
        let uptime_ticks = uptime_ticks(self.ticks_per_second);
        std::mem::swap(&mut self.current, &mut self.previous);
        self.current.clear();
        for entry in std::fs::read_dir("/proc")? {
            let Ok(entry) = entry else { continue };
            let name = entry.file_name();
            let Some(pid) = name.to_str().and_then(|n| n.parse::<i32>().ok()) else {
                continue;
            };
            if let Some(stat) = self.read_stat(pid).filter(|s| !s.exited) {
                self.current.insert(pid, stat);
            }
        }
        self.dt = self
            .last_scan
            .map_or(0.0, |t| now.duration_since(t).as_secs_f64());
        self.last_scan = Some(now);
        self.previous_uptime_ticks =
            std::mem::replace(&mut self.current_uptime_ticks, uptime_ticks);
        Ok(())
    }

    fn read_stat(&mut self, pid: i32) -> Option<ProcStat> {
        use std::fmt::Write;
        self.path.clear();
        let _ = write!(self.path, "/proc/{pid}/stat");
        read_into(&self.path, &mut self.buf).ok()?;
        parse_stat(&self.buf)
    }

    /// CPU ticks `pid` used since the previous scan; a process born since then counts whole,
    /// one whose start predates the previous scan but was not seen counts nothing.
    pub fn cpu_delta_ticks(&self, pid: i32) -> u64 {
        let Some(cur) = self.current.get(&pid) else {
            return 0;
        };
        match self.previous.get(&pid) {
            Some(prev) if prev.start_ticks == cur.start_ticks => {
                cur.cpu_ticks.saturating_sub(prev.cpu_ticks)
            }
            _ => match self.previous_uptime_ticks {
                Some(up) if cur.start_ticks >= up => cur.cpu_ticks,
                _ => 0,
            },
        }
    }

    /// Percent of one core used by `pid` between the last two scans.
    pub fn cpu_percent(&self, pid: i32) -> f64 {
        self.ticks_to_percent(self.cpu_delta_ticks(pid))
    }

    pub fn ticks_to_percent(&self, ticks: u64) -> f64 {
        if self.dt <= 0.0 {
            return f64::NAN;
        }
        100.0 * ticks as f64 / self.ticks_per_second / self.dt
    }

    /// Whether two scans exist, so CPU shares can be computed.
    pub fn has_interval(&self) -> bool {
        self.dt > 0.0 && !self.previous.is_empty()
    }

    /// Children of every process, from the current scan.
    pub fn children(&self) -> HashMap<i32, Vec<i32>> {
        let mut map: HashMap<i32, Vec<i32>> = HashMap::new();
        for p in self.current.values() {
            map.entry(p.ppid).or_default().push(p.pid);
        }
        map
    }
}

/// Seconds since boot, in clock ticks.
fn uptime_ticks(ticks_per_second: f64) -> Option<u64> {
    let text = std::fs::read_to_string("/proc/uptime").ok()?;
    let secs: f64 = text.split_whitespace().next()?.parse().ok()?;
    Some((secs * ticks_per_second) as u64)
}

/// `roots` and all their descendants, each once.
pub fn tree(roots: &[i32], children: &HashMap<i32, Vec<i32>>) -> Vec<i32> {
    let mut out: Vec<i32> = Vec::new();
    let mut stack: Vec<i32> = roots.to_vec();
    while let Some(pid) = stack.pop() {
        if out.contains(&pid) {
            continue;
        }
        out.push(pid);
        if let Some(kids) = children.get(&pid) {
            stack.extend(kids);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_stat_lines_with_odd_names() {
        let line = b"4242 (my (odd) prog) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 7 0 123456 1000000 2500 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n";
        let s = parse_stat(line).unwrap();
        assert_eq!(s.pid, 4242);
        assert_eq!(s.comm, "my (odd) prog");
        assert_eq!(s.ppid, 1);
        assert_eq!(s.cpu_ticks, 300);
        assert_eq!(s.threads, 7);
        assert_eq!(s.start_ticks, 123456);
        assert_eq!(s.rss_pages, 2500);
        assert!(!s.exited);
        assert_eq!(parse_stat(b"12 (x) S 1 2"), None);
        let zombie = b"77 (burner) Z 1 77 77 0 -1 4228108 0 0 0 0 150 0 0 0 20 0 1 0 99 0 0 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0\n";
        assert!(parse_stat(zombie).unwrap().exited);
    }

    #[test]
    fn trees_include_descendants_once() {
        let mut children = HashMap::new();
        children.insert(1, vec![2, 3]);
        children.insert(2, vec![4]);
        children.insert(4, vec![2]); // a cycle cannot loop forever
        let mut t = tree(&[1], &children);
        t.sort();
        assert_eq!(t, vec![1, 2, 3, 4]);
        assert_eq!(tree(&[9], &children), vec![9]);
    }

    #[test]
    fn scans_this_machine() {
        let mut table = ProcessTable::new();
        table.scan().unwrap();
        let me = std::process::id() as i32;
        assert!(table.current.contains_key(&me));
        assert!(!table.has_interval());
        std::thread::sleep(std::time::Duration::from_millis(20));
        table.scan().unwrap();
        assert!(table.has_interval());
        assert!(table.cpu_percent(me) >= 0.0);
        assert!(table.current[&me].threads >= 1);
    }
}
