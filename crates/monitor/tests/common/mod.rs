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
/// its own account to `report` — `start_unix_ms end_unix_ms cpu_ms` — so a test on a busy
/// machine, where the child may get less than it asks for, knows the share it really got.
fn burn(duty: f64, secs: f64, report: &str) {
    let period = Duration::from_millis(20);
    let (start_ms, cpu_start) = (unix_ms(), process_cpu());
    let end = Instant::now() + Duration::from_secs_f64(secs);
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
    }
    std::hint::black_box(x);
    let cpu_ms = (process_cpu() - cpu_start).as_secs_f64() * 1e3;
    std::fs::write(report, format!("{start_ms} {} {cpu_ms}", unix_ms())).unwrap();
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

/// A burner's own account: when it burned, and the share of a core it got (percent).
#[derive(Debug, Clone, Copy)]
pub struct BurnReport {
    pub start_ms: u64,
    pub end_ms: u64,
    pub percent: f64,
}

/// Waits for the report a burner writes when it is done.
pub fn burn_report(path: &std::path::Path) -> BurnReport {
    for _ in 0..400 {
        if let Ok(text) = std::fs::read_to_string(path) {
            let f: Vec<f64> = text
                .split_whitespace()
                .filter_map(|t| t.parse().ok())
                .collect();
            if f.len() == 3 {
                let _ = std::fs::remove_file(path);
                return BurnReport {
                    start_ms: f[0] as u64,
                    end_ms: f[1] as u64,
                    percent: 100.0 * f[2] / (f[1] - f[0]),
                };
            }
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    panic!("no burn report at {}", path.display());
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

/// A fresh path for a child's report.
pub fn report_path(tag: &str) -> std::path::PathBuf {
    static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    std::env::temp_dir().join(format!("loadlab-monitor-{tag}-{}-{n}", std::process::id()))
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
