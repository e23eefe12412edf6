//! What the target tells about itself, in the Prometheus text format on `GET /metrics`:
//! requests by route and status, requests in flight, the queue for workers, histograms of
//! the whole handling time and of the service time, and the CPU and memory of the process
//! and of the target's own threads (which matters when it runs inside loadlab, as in the demo).
//!
//! Recording is lock-free (relaxed atomic adds on fixed arrays), so it costs the hot path a
//! few nanoseconds; only rendering `/metrics` reads `/proc`.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering::Relaxed};
use std::sync::Mutex;
use std::time::Duration;

use crate::routes::{Route, RouteError};

/// Route labels, in the order of [`route_index`].
const ROUTES: [&str; 13] = [
    "/health",
    "/api/ping",
    "/api/auth/signin",
    "/api/applications",
    "/api/applications/{id}",
    "/api/applications/{id}/submit",
    "/api/users",
    "/api/transactions",
    "/api/reservations",
    "/api/patients/{id}",
    "/metrics",
    "/api/signups",
    "other",
];

/// Status codes the target answers with; anything else is counted as `other`.
const CODES: [u16; 11] = [200, 201, 400, 401, 404, 405, 409, 413, 500, 503, 0];

/// Upper bounds of the histogram buckets, in seconds (plus +Inf).
const BUCKETS: [f64; 15] = [
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
    10.0,
];

pub fn route_index(route: Result<Route, RouteError>) -> usize {
    match route {
        Ok(Route::Health) => 0,
        Ok(Route::Ping) => 1,
        Ok(Route::Signin) => 2,
        Ok(Route::CreateApplication) => 3,
        Ok(Route::GetApplication(_)) => 4,
        Ok(Route::SubmitApplication(_)) => 5,
        Ok(Route::CreateUser) => 6,
        Ok(Route::CreateTransaction) => 7,
        Ok(Route::CreateReservation) => 8,
        Ok(Route::GetPatient(_)) => 9,
        Ok(Route::Metrics) => 10,
        Ok(Route::Signup) => 11,
        Err(_) => 12,
    }
}

fn code_index(status: u16) -> usize {
    CODES
        .iter()
        .position(|c| *c == status)
        .unwrap_or(CODES.len() - 1)
}

/// A histogram of durations with fixed buckets, safe to record from any thread.
#[derive(Debug, Default)]
pub struct DurationHistogram {
    /// Per bucket (not cumulative); the last one is +Inf.
    counts: [AtomicU64; BUCKETS.len() + 1],
    sum_ns: AtomicU64,
}

impl DurationHistogram {
    pub fn record(&self, d: Duration) {
        let secs = d.as_secs_f64();
        let i = BUCKETS
            .iter()
            .position(|b| secs <= *b)
            .unwrap_or(BUCKETS.len());
        self.counts[i].fetch_add(1, Relaxed);
        self.sum_ns
            .fetch_add(d.as_nanos().min(u128::from(u64::MAX)) as u64, Relaxed);
    }

    fn render(&self, out: &mut String, name: &str, help: &str) {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} histogram");
        let mut cumulative = 0u64;
        for (i, c) in self.counts.iter().enumerate() {
            cumulative += c.load(Relaxed);
            let le = BUCKETS.get(i).map_or("+Inf".to_string(), |b| b.to_string());
            let _ = writeln!(out, "{name}_bucket{{le=\"{le}\"}} {cumulative}");
        }
        let sum = self.sum_ns.load(Relaxed) as f64 / 1e9;
        let _ = writeln!(out, "{name}_sum {sum}\n{name}_count {cumulative}");
    }
}

/// The counters of one server instance.
#[derive(Debug, Default)]
pub struct TargetMetrics {
    requests: [[AtomicU64; CODES.len()]; ROUTES.len()],
    in_flight: AtomicI64,
    /// Arrival at the handler to the response (queueing for a worker included).
    duration: DurationHistogram,
    /// Holding a worker: the service time plus the endpoint's own work.
    service: DurationHistogram,
    /// Kernel thread ids of the target's threads, for their CPU time.
    threads: Mutex<Vec<i32>>,
}

/// Counts a request in flight until dropped (also when the client goes away mid-request).
pub struct InFlight<'a>(&'a AtomicI64);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Relaxed);
    }
}

impl TargetMetrics {
    pub fn begin(&self) -> InFlight<'_> {
        self.in_flight.fetch_add(1, Relaxed);
        InFlight(&self.in_flight)
    }

    pub fn record(&self, route: usize, status: u16, duration: Duration) {
        self.requests[route][code_index(status)].fetch_add(1, Relaxed);
        self.duration.record(duration);
    }

    pub fn record_service(&self, d: Duration) {
        self.service.record(d);
    }

    /// Registers the calling thread as one of the target's (at thread start).
    pub fn register_current_thread(&self) {
        if let Some(tid) = current_tid() {
            if let Ok(mut threads) = self.threads.lock() {
                threads.push(tid);
            }
        }
    }

    /// The exposition served on `/metrics`.
    pub fn render(&self, queue_length: usize) -> String {
        let mut out = String::with_capacity(4096);
        out.push_str("# HELP http_requests_total Requests answered, by route and status code.\n# TYPE http_requests_total counter\n");
        for (r, route) in ROUTES.iter().enumerate() {
            for (c, code) in CODES.iter().enumerate() {
                let n = self.requests[r][c].load(Relaxed);
                if n > 0 {
                    let code = if *code == 0 {
                        "other".to_string()
                    } else {
                        code.to_string()
                    };
                    let _ = writeln!(
                        out,
                        "http_requests_total{{route=\"{route}\",code=\"{code}\"}} {n}"
                    );
                }
            }
        }
        let _ = writeln!(
            out,
            "# HELP http_requests_in_flight Requests being handled now, waiting for a worker included.\n# TYPE http_requests_in_flight gauge\nhttp_requests_in_flight {}",
            self.in_flight.load(Relaxed).max(0)
        );
        let _ = writeln!(
            out,
            "# HELP loadlab_target_queue_length Requests waiting for a worker.\n# TYPE loadlab_target_queue_length gauge\nloadlab_target_queue_length {queue_length}"
        );
        self.duration.render(
            &mut out,
            "http_request_duration_seconds",
            "Time from the request reaching the handler to the response, queueing included.",
        );
        self.service.render(
            &mut out,
            "loadlab_target_service_time_seconds",
            "Time a request held a worker (service time plus the endpoint's work).",
        );
        render_process(&mut out, &self.threads);
        out
    }
}

/// Prometheus' standard process metrics, plus the CPU of the target's own threads.
fn render_process(out: &mut String, threads: &Mutex<Vec<i32>>) {
    let tick = clock_ticks_per_second();
    if let Some(cpu) = process_cpu_seconds() {
        let _ = writeln!(out, "# HELP process_cpu_seconds_total User and system CPU time of the process.\n# TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total {cpu}");
    }
    if let Some(rss) = resident_memory_bytes() {
        let _ = writeln!(out, "# HELP process_resident_memory_bytes Resident memory of the process.\n# TYPE process_resident_memory_bytes gauge\nprocess_resident_memory_bytes {rss}");
    }
    if let Ok(fds) = std::fs::read_dir("/proc/self/fd") {
        let _ = writeln!(out, "# HELP process_open_fds Open file descriptors.\n# TYPE process_open_fds gauge\nprocess_open_fds {}", fds.count());
    }
    if let Some(max) = max_fds() {
        let _ = writeln!(out, "# HELP process_max_fds Open file descriptor limit.\n# TYPE process_max_fds gauge\nprocess_max_fds {max}");
    }
    let tids = threads.lock().map(|t| t.clone()).unwrap_or_default();
    let (mut cpu, mut alive) = (0.0, 0usize);
    for tid in tids {
        if let Some(t) = thread_cpu_seconds(tid, tick) {
            cpu += t;
            alive += 1;
        }
    }
    if alive > 0 {
        let _ = writeln!(out, "# HELP loadlab_target_cpu_seconds_total CPU time of the target's own threads (differs from process_cpu_seconds_total when the target runs inside loadlab).\n# TYPE loadlab_target_cpu_seconds_total counter\nloadlab_target_cpu_seconds_total {cpu}");
        let _ = writeln!(out, "# HELP loadlab_target_threads Threads serving the target.\n# TYPE loadlab_target_threads gauge\nloadlab_target_threads {alive}");
    }
}

fn process_cpu_seconds() -> Option<f64> {
    // SAFETY: `usage` is a valid, writable rusage.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) } != 0 {
        return None;
    }
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    Some(secs(usage.ru_utime) + secs(usage.ru_stime))
}

fn resident_memory_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    Some(pages * u64::try_from(page).ok()?)
}

fn max_fds() -> Option<u64> {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `lim` is a valid, writable rlimit.
    let rc = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) };
    (rc == 0 && lim.rlim_cur != libc::RLIM_INFINITY).then_some(lim.rlim_cur)
}

fn clock_ticks_per_second() -> f64 {
    // SAFETY: sysconf has no preconditions.
    unsafe { libc::sysconf(libc::_SC_CLK_TCK) as f64 }
}

/// CPU time of one of this process's threads: nanoseconds from `schedstat` where the kernel
/// has it, else utime + stime in clock ticks from `stat`.
fn thread_cpu_seconds(tid: i32, ticks_per_second: f64) -> Option<f64> {
    if let Ok(sched) = std::fs::read_to_string(format!("/proc/self/task/{tid}/schedstat")) {
        if let Some(ns) = sched
            .split_whitespace()
            .next()
            .and_then(|n| n.parse::<u64>().ok())
        {
            return Some(ns as f64 / 1e9);
        }
    }
    let stat = std::fs::read_to_string(format!("/proc/self/task/{tid}/stat")).ok()?;
    let after = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = after.split_whitespace().collect();
    // Fields counted from 3 (state): utime is 14, stime 15.
    let ticks = f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?;
    (ticks_per_second > 0.0).then(|| ticks as f64 / ticks_per_second)
}

#[cfg(target_os = "linux")]
fn current_tid() -> Option<i32> {
    // SAFETY: gettid has no preconditions.
    Some(unsafe { libc::gettid() })
}

#[cfg(not(target_os = "linux"))]
fn current_tid() -> Option<i32> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_buckets_are_cumulative() {
        let h = DurationHistogram::default();
        h.record(Duration::from_micros(50));
        h.record(Duration::from_millis(3));
        h.record(Duration::from_secs(60));
        let mut out = String::new();
        h.render(&mut out, "x", "help");
        assert!(out.contains("x_bucket{le=\"0.0001\"} 1\n"), "{out}");
        assert!(out.contains("x_bucket{le=\"0.005\"} 2\n"), "{out}");
        assert!(out.contains("x_bucket{le=\"10\"} 2\n"), "{out}");
        assert!(out.contains("x_bucket{le=\"+Inf\"} 3\n"), "{out}");
        assert!(out.contains("x_sum 60.00305\n"), "{out}");
        assert!(out.contains("x_count 3\n"), "{out}");
    }

    #[test]
    fn each_route_is_counted_under_its_own_label() {
        let cases = [
            (Ok(Route::Health), "/health"),
            (Ok(Route::CreateUser), "/api/users"),
            (Ok(Route::Signup), "/api/signups"),
            (Ok(Route::GetPatient(None)), "/api/patients/{id}"),
            (Ok(Route::Metrics), "/metrics"),
            (Err(RouteError::NotFound), "other"),
        ];
        for (route, label) in cases {
            assert_eq!(ROUTES[route_index(route)], label, "{route:?}");
        }
    }

    #[test]
    fn renders_requests_by_route_and_code() {
        let m = TargetMetrics::default();
        m.register_current_thread();
        {
            let _a = m.begin();
            let _b = m.begin();
            assert!(m.render(0).contains("http_requests_in_flight 2\n"));
        }
        m.record(route_index(Ok(Route::Ping)), 200, Duration::from_millis(1));
        m.record(route_index(Ok(Route::Ping)), 200, Duration::from_millis(1));
        m.record(route_index(Err(RouteError::NotFound)), 404, Duration::ZERO);
        m.record(route_index(Ok(Route::Signin)), 418, Duration::ZERO);
        let text = m.render(7);
        for line in [
            "http_requests_total{route=\"/api/ping\",code=\"200\"} 2\n",
            "http_requests_total{route=\"other\",code=\"404\"} 1\n",
            "http_requests_total{route=\"/api/auth/signin\",code=\"other\"} 1\n",
            "http_requests_in_flight 0\n",
            "loadlab_target_queue_length 7\n",
            "http_request_duration_seconds_count 4\n",
            "loadlab_target_service_time_seconds_count 0\n",
            "# TYPE process_cpu_seconds_total counter\n",
            "loadlab_target_threads 1\n",
        ] {
            assert!(text.contains(line), "{line:?} in\n{text}");
        }
        assert!(text.contains("process_resident_memory_bytes "));
    }
}
