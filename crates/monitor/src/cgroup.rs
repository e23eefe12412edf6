//! cgroups v2 (containers, systemd services): CPU used against the cgroup's CPU limit,
//! throttling, and memory current/peak/limit, as `cgroups.<name>.<series>`.
//!
//! Read straight from the cgroup's files (`cpu.stat`, `cpu.max`, `cpuset.cpus.effective`,
//! `memory.current`, `memory.peak`, `memory.max`): they are one number or a few `key value`
//! lines, and `procfs` does not cover cgroup directories. cgroup v1 is not supported.

use crate::collect::Collect;
use crate::sys::count_cpu_list;
use loadlab_scenario::monitor::{CgroupLocation, CgroupWatch};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Directories visited at most when looking up a container id.
const MAX_SEARCH: usize = 50_000;

#[derive(Debug, Clone, Copy, PartialEq)]
struct CpuStat {
    usage_usec: u64,
    nr_periods: u64,
    nr_throttled: u64,
    throttled_usec: u64,
}

struct Watch {
    name: String,
    source: String,
    location: CgroupLocation,
    dir: Option<PathBuf>,
    prev: Option<(CpuStat, Instant)>,
}

pub struct CgroupWatcher {
    watches: Vec<Watch>,
    /// Where the cgroup v2 hierarchy is mounted (container ids are looked up below it).
    mount: Option<PathBuf>,
    host_cpus: f64,
}

impl CgroupWatcher {
    pub fn new(config: &[CgroupWatch]) -> Self {
        Self::with_mount(config, cgroup2_mount())
    }

    /// With the hierarchy mounted at `mount` (tests use a directory of fake files).
    pub fn with_mount(config: &[CgroupWatch], mount: Option<PathBuf>) -> Self {
        CgroupWatcher {
            watches: config
                .iter()
                .map(|c| Watch {
                    name: c.name.clone(),
                    source: format!("cgroups.{}", c.name),
                    location: c.location.clone(),
                    dir: None,
                    prev: None,
                })
                .collect(),
            mount,
            host_cpus: std::thread::available_parallelism().map_or(1.0, |n| n.get() as f64),
        }
    }

    pub fn sample(&mut self, out: &mut Collect) {
        for w in &mut self.watches {
            if w.dir.is_none() {
                match locate(&w.location, self.mount.as_deref()) {
                    Ok(dir) => w.dir = Some(dir),
                    Err(why) => {
                        out.fail(&w.source, || why);
                        continue;
                    }
                }
            }
            let dir = w.dir.clone().unwrap_or_default();
            match read_cpu_stat(&dir) {
                Ok(stat) => {
                    out.ok(&w.source);
                    sample_one(w, &dir, stat, self.host_cpus, out);
                }
                Err(why) => {
                    // The container may have been restarted under a new directory.
                    if matches!(w.location, CgroupLocation::Container(_)) {
                        w.dir = None;
                    }
                    w.prev = None;
                    out.fail(&w.source, || why);
                }
            }
        }
    }
}

fn sample_one(w: &mut Watch, dir: &Path, stat: CpuStat, host_cpus: f64, out: &mut Collect) {
    let series = |s: &str| format!("cgroups.{}.{s}", w.name);
    let now = Instant::now();
    let limit = cpu_limit(dir).unwrap_or(host_cpus);
    out.set(series("cpu_limit_cores"), limit);
    if let Some((prev, at)) = w.prev {
        let dt = now.duration_since(at).as_secs_f64();
        if dt > 0.0 {
            let used = stat.usage_usec.saturating_sub(prev.usage_usec) as f64 / 1e6 / dt;
            out.set(series("cpu_percent"), 100.0 * used);
            out.set(series("cpu_of_limit_percent"), 100.0 * used / limit);
            let periods = stat.nr_periods.saturating_sub(prev.nr_periods);
            if periods > 0 {
                let throttled = stat.nr_throttled.saturating_sub(prev.nr_throttled);
                out.set(
                    series("cpu_throttled_percent"),
                    100.0 * throttled as f64 / periods as f64,
                );
                let waited = stat.throttled_usec.saturating_sub(prev.throttled_usec);
                out.set(series("throttled_ms_per_s"), waited as f64 / 1e3 / dt);
            }
        }
    }
    w.prev = Some((stat, now));
    if let Some(v) = read_number(&dir.join("memory.current")) {
        out.set(series("memory_bytes"), v as f64);
    }
    if let Some(v) = read_number(&dir.join("memory.peak")) {
        out.set(series("memory_peak_bytes"), v as f64);
    }
    if let Some(v) = read_number(&dir.join("memory.max")) {
        out.set(series("memory_limit_bytes"), v as f64);
    }
}

/// The cgroup directory of a watch, or why it cannot be found.
fn locate(location: &CgroupLocation, mount: Option<&Path>) -> Result<PathBuf, String> {
    match location {
        CgroupLocation::Path(path) => {
            if !path.is_dir() {
                return Err(format!("no cgroup directory {}", path.display()));
            }
            if !path.join("cgroup.controllers").exists() {
                return Err(format!(
                    "{} is not a cgroup v2 directory (no cgroup.controllers; cgroup v1 is not supported)",
                    path.display()
                ));
            }
            Ok(path.clone())
        }
        CgroupLocation::Container(id) => {
            let mount = mount.ok_or_else(|| {
                "no cgroup v2 hierarchy is mounted (cgroup v1 is not supported): give `path:` of a v2 cgroup".to_string()
            })?;
            find_container(mount, id).ok_or_else(|| {
                format!(
                    "no cgroup under {} is named after container {id}",
                    mount.display()
                )
            })
        }
    }
}

/// The cgroup directory whose name contains the container id (`docker-<id>.scope`,
/// `.../docker/<id>`, `cri-containerd-<id>.scope`, `libpod-<id>.scope`).
fn find_container(mount: &Path, id: &str) -> Option<PathBuf> {
    let mut stack = vec![mount.to_path_buf()];
    let mut visited = 0;
    while let Some(dir) = stack.pop() {
        visited += 1;
        if visited > MAX_SEARCH {
            return None;
        }
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            if !e.file_type().is_ok_and(|t| t.is_dir()) {
                continue;
            }
            let name = e.file_name();
            let name = name.to_string_lossy();
            // A shortened id matches the start of the full one inside the name.
            if name.contains(id) && e.path().join("cgroup.controllers").exists() {
                return Some(e.path());
            }
            stack.push(e.path());
        }
    }
    None
}

fn read_cpu_stat(dir: &Path) -> Result<CpuStat, String> {
    let text = std::fs::read_to_string(dir.join("cpu.stat"))
        .map_err(|e| format!("cannot read {}/cpu.stat: {e}", dir.display()))?;
    let field = |key: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(key)?.strip_prefix(' '))
            .and_then(|v| v.trim().parse::<u64>().ok())
    };
    Ok(CpuStat {
        usage_usec: field("usage_usec")
            .ok_or_else(|| format!("{}/cpu.stat has no usage_usec", dir.display()))?,
        nr_periods: field("nr_periods").unwrap_or(0),
        nr_throttled: field("nr_throttled").unwrap_or(0),
        throttled_usec: field("throttled_usec").unwrap_or(0),
    })
}

/// CPUs the cgroup may use: its quota (`cpu.max`), else its cpuset, else `None`.
fn cpu_limit(dir: &Path) -> Option<f64> {
    let quota = std::fs::read_to_string(dir.join("cpu.max"))
        .ok()
        .and_then(|t| {
            let mut it = t.split_whitespace();
            let (quota, period) = (it.next()?, it.next()?);
            let (q, p) = (quota.parse::<f64>().ok()?, period.parse::<f64>().ok()?);
            (p > 0.0).then_some(q / p)
        });
    quota.or_else(|| {
        std::fs::read_to_string(dir.join("cpuset.cpus.effective"))
            .ok()
            .and_then(|t| count_cpu_list(&t))
            .map(f64::from)
    })
}

/// A file holding one number; `max` (no limit) and unreadable files give `None`.
fn read_number(path: &Path) -> Option<u64> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

/// Where the cgroup v2 hierarchy is mounted (`/sys/fs/cgroup`, or `/sys/fs/cgroup/unified`
/// on hybrid systems), from `/proc/self/mountinfo`.
pub fn cgroup2_mount() -> Option<PathBuf> {
    let info = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    info.lines().find_map(|line| {
        let (left, right) = line.split_once(" - ")?;
        if right.split_whitespace().next()? != "cgroup2" {
            return None;
        }
        Some(PathBuf::from(left.split_whitespace().nth(4)?))
    })
}

/// The cgroup v2 directory of this process, if the hierarchy is mounted.
pub fn own_cgroup() -> Option<PathBuf> {
    let mount = cgroup2_mount()?;
    let text = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let rel = text.lines().find_map(|l| l.strip_prefix("0::"))?;
    Some(mount.join(rel.trim_start_matches('/')))
}

#[cfg(test)]
mod tests;
