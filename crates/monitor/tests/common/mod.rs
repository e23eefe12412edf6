//! Child processes for the monitor's tests, made by re-running the test binary itself with a
//! role in `LOADLAB_MONITOR_CHILD` (no helper binaries, nothing to install): a CPU burner with
//! a known duty cycle, a tree of burners, and a TCP listener.
//!
//! Each test file that spawns children has `#[test] fn child_process_entry()` calling
//! [`child_entry`]; without the variable it returns at once.

#![allow(dead_code)]

use loadlab_monitor::{Monitor, Sample};
use loadlab_scenario::monitor::MonitorConfig;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const ROLE: &str = "LOADLAB_MONITOR_CHILD";

/// Runs the role given in the environment, then exits the process.
pub fn child_entry() {
    let Ok(role) = std::env::var(ROLE) else {
        return;
    };
    let parts: Vec<&str> = role.split(':').collect();
    match parts.as_slice() {
        ["burn", duty, secs, report] => burn(duty.parse().unwrap(), secs.parse().unwrap(), report),
        ["tree", n, duty, secs, report] => {
            let kids: Vec<Child> = (0..n.parse::<usize>().unwrap())
                .map(|i| spawn_role(&format!("burn:{duty}:{secs}:{report}.{i}")))
                .collect();
            for mut k in kids {
                let _ = k.wait();
            }
        }
        ["listen", file, secs] => {
            let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            let port = listener.local_addr().unwrap().port();
            std::fs::write(file, port.to_string()).unwrap();
            std::thread::sleep(Duration::from_secs_f64(secs.parse().unwrap()));
        }
        _ => panic!("unknown child role {role}"),
    }
    std::process::exit(0);
}

/// Uses `duty` of one core for `secs`: in each 20 ms period it burns `duty × 20 ms` of its
/// own CPU time (not wall time) and sleeps for the rest of the period. At the end it writes
/// its own account to `report`: `start_unix_ms end_unix_ms cpu_ms` on the first line, then
/// `unix_ms cpu_ms` at each period's start. So a test on a busy machine, where the child gets
/// less than it asks for and unevenly, knows the share it really got in any window.
fn burn(duty: f64, secs: f64, report: &str) {
    let period = Duration::from_millis(20);
    let (start_ms, cpu_start) = (unix_ms(), process_cpu());
    let end = Instant::now() + Duration::from_secs_f64(secs);
    let cpu_ms = || (process_cpu() - cpu_start).as_secs_f64() * 1e3;
    let mut timeline = vec![format!("{} 0", unix_ms_exact())];
    let mut x = 0u64;
    while Instant::now() < end {
        let start = Instant::now();
        let cpu0 = loadlab_monitor::thread_cpu_time();
        while loadlab_monitor::thread_cpu_time() - cpu0 < period.mul_f64(duty) {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(std::hint::black_box(1));
        }
        if let Some(rest) = period.checked_sub(start.elapsed()) {
            std::thread::sleep(rest);
        }
        timeline.push(format!("{} {}", unix_ms_exact(), cpu_ms()));
    }
    std::hint::black_box(x);
    let summary = format!("{start_ms} {} {}", unix_ms(), cpu_ms());
    std::fs::write(report, format!("{summary}\n{}\n", timeline.join("\n"))).unwrap();
}

fn unix_ms_exact() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
        * 1e3
}

fn unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

/// User + system CPU time of this process.
fn process_cpu() -> Duration {
    // SAFETY: `usage` is a valid, writable rusage.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    assert_eq!(unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) }, 0);
    let d = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    d(usage.ru_utime) + d(usage.ru_stime)
}

/// A burner's own account: when it burned, the share of a core it got (percent), and its
/// CPU time as it went.
#[derive(Debug, Clone)]
pub struct BurnReport {
    pub start_ms: u64,
    pub end_ms: u64,
    pub percent: f64,
    /// (unix ms, CPU ms used since the start), at each period's start.
    pub timeline: Vec<(f64, f64)>,
}

impl BurnReport {
    /// CPU ms used by `t_ms` (interpolated between the periods it was read at).
    fn cpu_ms_at(&self, t_ms: f64) -> f64 {
        let after = self.timeline.partition_point(|&(t, _)| t <= t_ms);
        match (
            after.checked_sub(1).map(|i| self.timeline[i]),
            self.timeline.get(after),
        ) {
            (Some((t0, c0)), Some(&(t1, c1))) => c0 + (c1 - c0) * (t_ms - t0) / (t1 - t0),
            (Some((_, c)), None) => c,
            (None, _) => 0.0,
        }
    }

    /// The share of a core it used in `[from_ms, to_ms]`, by its own account.
    pub fn percent_between(&self, from_ms: f64, to_ms: f64) -> f64 {
        100.0 * (self.cpu_ms_at(to_ms) - self.cpu_ms_at(from_ms)) / (to_ms - from_ms)
    }
}

/// Waits for the report a burner writes when it is done.
pub fn burn_report(path: &std::path::Path) -> BurnReport {
    for _ in 0..400 {
        if let Some(report) = std::fs::read_to_string(path)
            .ok()
            .and_then(|text| parse_burn_report(&text))
        {
            let _ = std::fs::remove_file(path);
            return report;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    panic!("no burn report at {}", path.display());
}

fn parse_burn_report(text: &str) -> Option<BurnReport> {
    let numbers = |line: &str| -> Vec<f64> {
        line.split_whitespace()
            .filter_map(|t| t.parse().ok())
            .collect()
    };
    let mut lines = text.lines();
    let summary = numbers(lines.next()?);
    let [start, end, cpu] = summary[..] else {
        return None;
    };
    let timeline: Vec<(f64, f64)> = lines
        .map(numbers)
        .filter_map(|n| (n.len() == 2).then(|| (n[0], n[1])))
        .collect();
    // Written at once at the end: a report without its last line is still being written.
    (text.ends_with('\n') && timeline.len() >= 2).then(|| BurnReport {
        start_ms: start as u64,
        end_ms: end as u64,
        percent: 100.0 * cpu / (end - start),
        timeline,
    })
}

/// Over the samples whose whole interval lies within every burner's burn: the mean of
/// `series`, and the mean of what the burners say they used (summed) in the same intervals.
pub fn measured_and_own_account(
    samples: &[Sample],
    series: &str,
    burners: &[BurnReport],
) -> (f64, f64) {
    let start = burners.iter().map(|b| b.start_ms).max().unwrap();
    let end = burners.iter().map(|b| b.end_ms).min().unwrap();
    let pairs: Vec<(f64, f64)> = samples
        .iter()
        .filter(|s| s.unix_ms.saturating_sub(s.interval_ms) >= start && s.unix_ms <= end)
        .filter_map(|s| {
            let (from, to) = ((s.unix_ms - s.interval_ms) as f64, s.unix_ms as f64);
            let own: f64 = burners.iter().map(|b| b.percent_between(from, to)).sum();
            s.get(series).map(|measured| (measured, own))
        })
        .collect();
    assert!(
        pairs.len() >= 2,
        "too few samples of {series} inside the burn: {samples:#?}"
    );
    let n = pairs.len() as f64;
    (
        pairs.iter().map(|p| p.0).sum::<f64>() / n,
        pairs.iter().map(|p| p.1).sum::<f64>() / n,
    )
}

/// Mean of a series over the samples whose whole interval lies in `[start_ms, end_ms]`.
pub fn mean_within(samples: &[Sample], series: &str, start_ms: u64, end_ms: u64) -> f64 {
    let values: Vec<f64> = samples
        .iter()
        .filter(|s| s.unix_ms.saturating_sub(s.interval_ms) >= start_ms && s.unix_ms <= end_ms)
        .filter_map(|s| s.get(series))
        .collect();
    assert!(
        values.len() >= 2,
        "too few samples of {series} inside the burn: {samples:#?}"
    );
    values.iter().sum::<f64>() / values.len() as f64
}

/// A fresh path for a child's report, in a scratch directory of its own: removed with the
/// report (and its `.N` siblings) when this is dropped, the test passed or failed.
pub struct ReportPath {
    path: std::path::PathBuf,
    _dir: tempfile::TempDir,
}

impl std::ops::Deref for ReportPath {
    type Target = std::path::Path;
    fn deref(&self) -> &std::path::Path {
        &self.path
    }
}

/// A fresh path for a child's report (see [`ReportPath`]): keep it alive while the child
/// writes.
pub fn report_path(tag: &str) -> ReportPath {
    let dir = tempfile::Builder::new()
        .prefix(&format!("loadlab-monitor-{tag}-"))
        .tempdir()
        .unwrap();
    ReportPath {
        path: dir.path().join("report"),
        _dir: dir,
    }
}

/// Starts this test binary again in `role`. The role is also the last argument (an extra
/// test filter that matches nothing), so tests can find the child by its command line.
pub fn spawn_role(role: &str) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "child_process_entry",
            "--nocapture",
            "--test-threads=1",
            role,
        ])
        .env(ROLE, role)
        .stdout(Stdio::null())
        .spawn()
        .expect("re-run the test binary as a child")
}

/// Serialises the tests that measure CPU: run side by side, a hog or a second burner would
/// take the CPU share the measured child is supposed to get.
pub fn exclusive() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// Kills and reaps a child when dropped, so a failing test leaves no process behind.
pub struct Reaped(pub Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Samples `config` for `duration` and returns every sample.
pub fn sample_for(config: &MonitorConfig, duration: Duration) -> Vec<Sample> {
    let mut monitor = Monitor::start(config).expect("monitor starts");
    std::thread::sleep(duration);
    let mut samples = monitor.drain();
    samples.extend(monitor.stop().samples);
    samples
}

/// Mean of a series over the samples that have it, skipping the first `skip`.
pub fn mean_of(samples: &[Sample], series: &str, skip: usize) -> f64 {
    let values: Vec<f64> = samples
        .iter()
        .filter_map(|s| s.get(series))
        .skip(skip)
        .collect();
    assert!(!values.is_empty(), "no values of {series} in {samples:#?}");
    values.iter().sum::<f64>() / values.len() as f64
}
