//! Processes of the system under test, chosen by pid, command-line pattern or listening
//! port, each with all its descendants: CPU (% of one core), the busiest thread's CPU, RSS,
//! threads, processes and open files, as `processes.<name>.<series>`.
//!
//! Selections are re-resolved every interval from the process scan, so a restarted service
//! (new pid, same port or pattern) is followed; a selection that finds nothing makes its
//! series missing with one warning.

pub mod discover;
pub mod table;

use crate::collect::Collect;
use crate::sys::{count_cpu_list, read_into};
use loadlab_scenario::monitor::{ProcessSelector, ProcessWatch};
use std::collections::{HashMap, HashSet};
use table::{parse_stat, tree, ProcessTable};

/// Most threads whose CPU is read per monitored group and interval.
const MAX_THREADS_READ: usize = 1024;
/// Intervals between checks that a port's owner still listens (reading the socket tables
/// costs milliseconds; an owner that exits is noticed at once from the process scan).
const PORT_RECHECK: u64 = 10;
/// Intervals between lookups while nothing listens on the port.
const PORT_RETRY: u64 = 3;

enum Selector {
    Pid(i32),
    Match {
        regex: regex::Regex,
        /// Verdict per (pid, start time): each command line is read once.
        verdicts: HashMap<(i32, u64), bool>,
    },
    Port {
        port: u16,
        /// Listening socket inodes at the last lookup, and the owners found then.
        inodes: Vec<u64>,
        owners: Vec<(i32, u64)>,
        /// Intervals seen, and the interval of the next lookup.
        tick: u64,
        next_lookup: u64,
        /// Why the last lookup found nothing.
        last_error: Option<String>,
    },
}

struct Watch {
    name: String,
    source: String,
    selector: Selector,
    /// Roots found last interval, with their start times (facts are re-read when they change).
    roots: Vec<(i32, u64)>,
    open_files_limit: Option<u64>,
    cpus_allowed: Option<u32>,
    /// Thread CPU ticks at the last interval, by (tid, start time).
    threads_prev: HashMap<(i32, u64), u64>,
}

/// Samples the monitored process groups.
pub struct ProcessWatcher {
    watches: Vec<Watch>,
    self_pid: i32,
    buf: Vec<u8>,
}

impl ProcessWatcher {
    /// Fails only for a pattern that does not compile (the scenario checks it first).
    pub fn new(config: &[ProcessWatch]) -> Result<Self, crate::MonitorError> {
        let mut watches = Vec::new();
        for w in config {
            let selector = match &w.selector {
                ProcessSelector::Pid(pid) => Selector::Pid(*pid as i32),
                ProcessSelector::Port(port) => Selector::Port {
                    port: *port,
                    inodes: Vec::new(),
                    owners: Vec::new(),
                    tick: 0,
                    next_lookup: 0,
                    last_error: None,
                },
                ProcessSelector::Match(pattern) => Selector::Match {
                    regex: regex::Regex::new(pattern).map_err(|e| {
                        crate::MonitorError::BadPattern {
                            source_name: format!("processes.{}", w.name),
                            pattern: pattern.clone(),
                            message: e.to_string(),
                        }
                    })?,
                    verdicts: HashMap::new(),
                },
            };
            watches.push(Watch {
                name: w.name.clone(),
                source: format!("processes.{}", w.name),
                selector,
                roots: Vec::new(),
                open_files_limit: None,
                cpus_allowed: None,
                threads_prev: HashMap::new(),
            });
        }
        Ok(ProcessWatcher {
            watches,
            self_pid: std::process::id() as i32,
            buf: Vec::new(),
        })
    }

    pub fn is_empty(&self) -> bool {
        self.watches.is_empty()
    }

    /// Samples every group from this interval's process scan; `listeners` are the listening
    /// `(port, inode)` pairs when the socket tables were read this interval anyway. Returns
    /// the pids of all monitored processes with the name of their group.
    pub fn sample(
        &mut self,
        table: &ProcessTable,
        listeners: Option<&[(u16, u64)]>,
        out: &mut Collect,
    ) -> HashMap<i32, String> {
        let children = table.children();
        let mut monitored = HashMap::new();
        for watch in &mut self.watches {
            let roots = match resolve(&mut watch.selector, table, listeners, self.self_pid) {
                Ok(roots) => roots,
                Err(why) => {
                    out.fail(&watch.source, || why);
                    continue;
                }
            };
            out.ok(&watch.source);
            let with_start: Vec<(i32, u64)> = roots
                .iter()
                .map(|pid| (*pid, table.current[pid].start_ticks))
                .collect();
            if with_start != watch.roots {
                watch.roots = with_start;
                read_root_facts(watch, roots[0]);
            }
            let pids = tree(&roots, &children);
            if pids.contains(&self.self_pid) {
                // An in-process target (`loadlab demo`): its CPU is the generator's too.
                out.set(format!("{}.includes_generator", watch.source), 1.0);
                out.warn_once(&format!("{}.includes_generator", watch.source), || {
                    "this is loadlab's own process (an in-process target): its CPU includes the generator's; monitor the target's /metrics instead".into()
                });
            }
            for pid in &pids {
                monitored.insert(*pid, watch.name.clone());
            }
            sample_group(watch, table, &pids, &mut self.buf, out);
        }
        monitored
    }
}

/// The root processes of a group this interval, or why there are none.
fn resolve(
    selector: &mut Selector,
    table: &ProcessTable,
    listeners: Option<&[(u16, u64)]>,
    self_pid: i32,
) -> Result<Vec<i32>, String> {
    match selector {
        Selector::Pid(pid) => {
            if table.current.contains_key(pid) {
                Ok(vec![*pid])
            } else {
                Err(format!("process {pid} is not running"))
            }
        }
        Selector::Match { regex, verdicts } => {
            verdicts.retain(|(pid, start), _| {
                table
                    .current
                    .get(pid)
                    .is_some_and(|p| p.start_ticks == *start)
            });
            let mut matched = HashSet::new();
            for p in table.current.values() {
                // The generator's own command line may well contain the pattern.
                if p.pid == self_pid {
                    continue;
                }
                let hit = *verdicts.entry((p.pid, p.start_ticks)).or_insert_with(|| {
                    discover::cmdline(p.pid).is_some_and(|c| !c.is_empty() && regex.is_match(&c))
                });
                if hit {
                    matched.insert(p.pid);
                }
            }
            let mut roots: Vec<i32> = matched
                .iter()
                .copied()
                .filter(|pid| !matched.contains(&table.current[pid].ppid))
                .collect();
            roots.sort_unstable();
            if roots.is_empty() {
                Err(format!(
                    "no process's command line matches `{}`",
                    regex.as_str()
                ))
            } else {
                Ok(roots)
            }
        }
        Selector::Port {
            port,
            inodes,
            owners,
            tick,
            next_lookup,
            last_error,
        } => {
            *tick += 1;
            let alive = |(pid, start): &(i32, u64)| {
                table
                    .current
                    .get(pid)
                    .is_some_and(|p| p.start_ticks == *start)
            };
            let owners_alive = !owners.is_empty() && owners.iter().all(alive);
            if *tick < *next_lookup {
                if owners_alive {
                    return Ok(roots_of(owners, table));
                }
                if let Some(why) = last_error {
                    return Err(why.clone());
                }
            }
            let found = lookup_port(*port, listeners, inodes, owners, table);
            *next_lookup = *tick
                + if found.is_ok() {
                    PORT_RECHECK
                } else {
                    PORT_RETRY
                };
            *last_error = found.as_ref().err().cloned();
            found
        }
    }
}

/// Finds the processes listening on `port`, reading the socket tables unless this
/// interval's `listeners` are given; remembers the inodes and owners found.
fn lookup_port(
    port: u16,
    listeners: Option<&[(u16, u64)]>,
    inodes: &mut Vec<u64>,
    owners: &mut Vec<(i32, u64)>,
    table: &ProcessTable,
) -> Result<Vec<i32>, String> {
    let mut now: Vec<u64> = match listeners {
        Some(l) => l
            .iter()
            .filter(|(p, _)| *p == port)
            .map(|(_, i)| *i)
            .collect(),
        None => crate::sockets::listening_inodes(port)
            .map_err(|e| format!("cannot read /proc/net/tcp: {e}"))?,
    };
    now.sort_unstable();
    if now.is_empty() {
        inodes.clear();
        owners.clear();
        return Err(format!("nothing listens on port {port}"));
    }
    let alive = |(pid, start): &(i32, u64)| {
        table
            .current
            .get(pid)
            .is_some_and(|p| p.start_ticks == *start)
    };
    if now != *inodes || owners.is_empty() || !owners.iter().all(alive) {
        let found = discover::owners_of_sockets(&now.iter().copied().collect())
            .map_err(|e| format!("cannot scan /proc for port {port}: {e}"))?;
        *inodes = now;
        *owners = found
            .into_iter()
            .filter_map(|pid| table.current.get(&pid).map(|p| (pid, p.start_ticks)))
            .collect();
    }
    let roots = roots_of(owners, table);
    if roots.is_empty() {
        Err(format!(
            "port {port} is listened on, but its process cannot be seen (another user's process or another network namespace): run loadlab as root or as that user, or give `pid:`"
        ))
    } else {
        Ok(roots)
    }
}

/// The owners whose parent is not an owner too (a pre-forking server's master).
fn roots_of(owners: &[(i32, u64)], table: &ProcessTable) -> Vec<i32> {
    let pids: HashSet<i32> = owners.iter().map(|(pid, _)| *pid).collect();
    let mut roots: Vec<i32> = pids
        .iter()
        .copied()
        .filter(|pid| {
            table
                .current
                .get(pid)
                .is_some_and(|p| !pids.contains(&p.ppid))
        })
        .collect();
    roots.sort_unstable();
    roots
}

/// The open-file limit and allowed CPUs of a group's first root.
fn read_root_facts(watch: &mut Watch, root: i32) {
    let process = procfs::process::Process::new(root).ok();
    watch.open_files_limit = process
        .as_ref()
        .and_then(|p| p.limits().ok())
        .and_then(|l| match l.max_open_files.soft_limit {
            procfs::process::LimitValue::Value(v) => Some(v),
            procfs::process::LimitValue::Unlimited => None,
        });
    watch.cpus_allowed = std::fs::read_to_string(format!("/proc/{root}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
                .and_then(count_cpu_list)
        });
    watch.threads_prev.clear();
}

fn sample_group(
    watch: &mut Watch,
    table: &ProcessTable,
    pids: &[i32],
    buf: &mut Vec<u8>,
    out: &mut Collect,
) {
    let name = watch.name.clone();
    let series = |s: &str| format!("processes.{name}.{s}");
    let (mut ticks, mut rss, mut threads) = (0u64, 0u64, 0u64);
    for pid in pids {
        if let Some(p) = table.current.get(pid) {
            ticks += table.cpu_delta_ticks(*pid);
            rss += p.rss_pages * table.page_size;
            threads += u64::from(p.threads);
        }
    }
    if table.has_interval() {
        out.set(series("cpu_percent"), table.ticks_to_percent(ticks));
        if let Some(busiest) = busiest_thread_ticks(watch, pids, buf) {
            out.set(
                series("max_thread_cpu_percent"),
                table.ticks_to_percent(busiest),
            );
        }
    }
    out.set(series("rss_bytes"), rss as f64);
    out.set(series("threads"), threads as f64);
    out.set(series("processes"), pids.len() as f64);
    let mut open = 0usize;
    let mut readable = true;
    for pid in pids {
        match procfs::process::Process::new(*pid).and_then(|p| p.fd_count()) {
            Ok(n) => open += n,
            Err(_) => readable = false,
        }
    }
    if readable {
        out.set(series("open_files"), open as f64);
    } else {
        out.warn_once(&format!("{}.open_files", watch.source), || {
            "cannot count open files (another user's process?): run loadlab as root or as that user"
                .into()
        });
    }
    if let Some(limit) = watch.open_files_limit {
        out.set(series("open_files_limit"), limit as f64);
    }
    if let Some(cpus) = watch.cpus_allowed {
        out.set(series("cpus_allowed"), f64::from(cpus));
    }
}

/// CPU ticks of the busiest thread since the last interval (`None` on the first one).
fn busiest_thread_ticks(watch: &mut Watch, pids: &[i32], buf: &mut Vec<u8>) -> Option<u64> {
    let mut now: HashMap<(i32, u64), u64> = HashMap::with_capacity(watch.threads_prev.len());
    let mut busiest = None;
    'pids: for pid in pids {
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
            continue;
        };
        for task in tasks.flatten() {
            if now.len() >= MAX_THREADS_READ {
                break 'pids;
            }
            let path = task.path().join("stat");
            if read_into(path.to_str().unwrap_or(""), buf).is_err() {
                continue;
            }
            let Some(stat) = parse_stat(buf) else {
                continue;
            };
            let key = (stat.pid, stat.start_ticks);
            if let Some(prev) = watch.threads_prev.get(&key) {
                let d = stat.cpu_ticks.saturating_sub(*prev);
                busiest = Some(busiest.map_or(d, |b: u64| b.max(d)));
            }
            now.insert(key, stat.cpu_ticks);
        }
    }
    watch.threads_prev = now;
    busiest
}
