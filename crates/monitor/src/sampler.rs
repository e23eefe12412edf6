//! The sampling thread: wakes once per interval on a fixed schedule (no drift), asks the
//! Prometheus scrapers to start, reads the local sources, gathers the scrapes and sends one
//! [`Sample`]. Nothing here touches the request path: the engine only drains samples.

use crate::cgroup::CgroupWatcher;
use crate::collect::Collect;
use crate::host::HostSampler;
use crate::procs::{table::ProcessTable, ProcessWatcher};
use crate::prometheus::Scrapers;
use crate::sample::{MetricKind, MonitorCost, MonitorReport, MonitorWarning, Sample};
use crate::sockets::{SocketScan, SocketScanner, SocketTotals};
use crate::sys::{thread_cpu_time, unix_ms};
use crate::MonitorError;
use loadlab_scenario::monitor::{MonitorConfig, MIN_MONITOR_INTERVAL};
use loadlab_scenario::units::format_duration;
use std::collections::BTreeMap;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Starts monitors.
pub struct Monitor;

impl Monitor {
    /// Starts sampling `config` on a new thread; the first sample arrives one interval later.
    /// Sources that cannot be read (no such pid, endpoint down) do not fail the start: their
    /// series are missing and a warning says why.
    pub fn start(config: &MonitorConfig) -> Result<MonitorHandle, MonitorError> {
        Self::start_aligned(config, None)
    }

    /// Like [`Monitor::start`], but samples end on `align + k × interval` (a run's interval
    /// boundaries), so that each sample covers one interval of the run's record.
    pub fn start_aligned(
        config: &MonitorConfig,
        align: Option<Instant>,
    ) -> Result<MonitorHandle, MonitorError> {
        if config.interval < MIN_MONITOR_INTERVAL {
            return Err(MonitorError::IntervalTooShort(config.interval));
        }
        if !std::path::Path::new("/proc/self/stat").exists() {
            return Err(MonitorError::NoProcfs("/proc/self/stat".into()));
        }
        let processes = ProcessWatcher::new(&config.processes)?;
        let (samples_tx, samples) = mpsc::channel();
        let (stop_tx, stop_rx) = mpsc::channel();
        let config = config.clone();
        let started = Instant::now();
        let thread = std::thread::Builder::new()
            .name("loadlab-monitor".into())
            .spawn(move || {
                crate::sys::lower_this_thread_priority();
                let mut state = SamplerState::new(&config, processes, started)?;
                state.align = align;
                state.run(&stop_rx, &samples_tx);
                Ok(state.finish())
            })
            .map_err(MonitorError::Thread)?;
        Ok(MonitorHandle {
            samples,
            stop: Some(stop_tx),
            thread: Some(thread),
            warnings: Vec::new(),
            started,
        })
    }
}

/// A running monitor. Drain samples while the run goes; `stop` at the end.
pub struct MonitorHandle {
    samples: Receiver<Sample>,
    stop: Option<Sender<()>>,
    thread: Option<JoinHandle<std::io::Result<Finished>>>,
    /// Warnings of the samples already drained (the report carries all of them).
    warnings: Vec<MonitorWarning>,
    started: Instant,
}

impl MonitorHandle {
    /// The samples taken since the last call, oldest first, without waiting.
    pub fn drain(&mut self) -> Vec<Sample> {
        let out: Vec<Sample> = self.samples.try_iter().collect();
        for s in &out {
            self.warnings.extend(s.warnings.iter().cloned());
        }
        out
    }

    /// Waits up to `timeout` for the next sample.
    pub fn recv_timeout(&mut self, timeout: Duration) -> Option<Sample> {
        let s = self.samples.recv_timeout(timeout).ok()?;
        self.warnings.extend(s.warnings.iter().cloned());
        Some(s)
    }

    /// When the monitor started (sample times are measured from it).
    pub fn started(&self) -> Instant {
        self.started
    }

    /// Takes a last sample covering the partial interval, stops the threads and returns
    /// the samples not drained yet with every warning and the monitor's own cost.
    pub fn stop(mut self) -> MonitorReport {
        self.shutdown()
    }

    fn shutdown(&mut self) -> MonitorReport {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let finished = self.thread.take().and_then(|t| t.join().ok());
        let samples = self.drain();
        let (prometheus_kinds, cost, failed) = match finished {
            Some(Ok(f)) => (f.kinds, f.cost, None),
            Some(Err(e)) => (BTreeMap::new(), MonitorCost::default(), Some(e.to_string())),
            None => (
                BTreeMap::new(),
                MonitorCost::default(),
                Some("the monitor thread panicked".into()),
            ),
        };
        let mut warnings = std::mem::take(&mut self.warnings);
        if let Some(why) = failed {
            warnings.push(MonitorWarning {
                source: "monitor".into(),
                message: format!("sampling stopped early: {why}"),
            });
        }
        MonitorReport {
            samples,
            warnings,
            prometheus_kinds,
            cost,
        }
    }
}

impl Drop for MonitorHandle {
    fn drop(&mut self) {
        if self.thread.is_some() {
            let _ = self.shutdown();
        }
    }
}

struct Finished {
    kinds: BTreeMap<String, MetricKind>,
    cost: MonitorCost,
}

/// Everything the sampling thread keeps between intervals.
struct SamplerState {
    interval: Duration,
    host: Option<HostSampler>,
    sockets: Option<SocketScanner>,
    table: Option<ProcessTable>,
    processes: ProcessWatcher,
    cgroups: CgroupWatcher,
    scrapers: Scrapers,
    collect: Collect,
    kinds: BTreeMap<String, MetricKind>,
    started: Instant,
    last: Instant,
    /// Samples end on this instant plus whole intervals (`None`: one interval after start).
    align: Option<Instant>,
    /// The last full socket-table scan, reused while scans are being spaced out.
    last_scan: Option<SocketScan>,
    /// Ticks to go before the next full scan (a scan of a huge table costs more than the
    /// monitor's budget of 1% of a core per interval, so it is spaced out).
    scan_skips: u64,
    tick: u64,
    samples: u64,
}

impl SamplerState {
    fn new(
        config: &MonitorConfig,
        processes: ProcessWatcher,
        started: Instant,
    ) -> std::io::Result<Self> {
        let sockets = config.host.then(SocketScanner::new);
        let mut table = (config.host || !processes.is_empty()).then(ProcessTable::new);
        if let Some(t) = &mut table {
            t.scan()?;
        }
        let host = config
            .host
            .then(|| HostSampler::new(sockets.as_ref().map_or(1, |s| s.range_size())));
        let mut cgroups = CgroupWatcher::new(&config.cgroups);
        let mut scratch = Collect::default();
        cgroups.sample(&mut scratch); // baseline for CPU rates
                                      // A scrape may take at most half an interval, so a slow endpoint never delays a sample
                                      // by more than that.
        let scrapers = Scrapers::start(&config.prometheus, config.interval / 2)?;
        let asked = scrapers.trigger(0);
        let baseline = scrapers.collect(0, &asked, Instant::now() + config.interval / 2);
        // Startup problems (endpoint down) are reported with the first sample.
        let mut collect = Collect::default();
        for (source, result) in scrapers.sources().iter().zip(baseline) {
            match result.map(|r| r.error) {
                Some(Some(why)) => collect.fail(source, || why),
                Some(None) => {}
                None => collect.fail(source, || {
                    format!("no answer within {}", format_duration(config.interval / 2))
                }),
            }
        }
        Ok(SamplerState {
            interval: config.interval,
            host,
            sockets,
            table,
            processes,
            cgroups,
            scrapers,
            collect,
            kinds: BTreeMap::new(),
            started,
            last: Instant::now(),
            align: None,
            last_scan: None,
            scan_skips: 0,
            tick: 0,
            samples: 0,
        })
    }

    fn run(&mut self, stop: &Receiver<()>, out: &Sender<Sample>) {
        let mut next = match self.align {
            // The first boundary at least half an interval away (a shorter first sample
            // would be mostly noise).
            Some(mut at) => {
                while at < self.last + self.interval / 2 {
                    at += self.interval;
                }
                at
            }
            None => self.last + self.interval,
        };
        loop {
            let wait = next.saturating_duration_since(Instant::now());
            match stop.recv_timeout(wait) {
                Err(RecvTimeoutError::Timeout) => {}
                Ok(()) | Err(RecvTimeoutError::Disconnected) => {
                    // The last partial interval, unless it is too short to mean anything.
                    if self.last.elapsed() >= self.interval / 10 {
                        let _ = out.send(self.sample());
                    }
                    return;
                }
            }
            let sample = self.sample();
            if out.send(sample).is_err() {
                return;
            }
            next += self.interval;
            let now = Instant::now();
            while next < now {
                // Fell behind (machine suspended, thread starved): skip, do not burst, and
                // keep the phase.
                next += self.interval;
            }
        }
    }

    fn sample(&mut self) -> Sample {
        self.tick += 1;
        let asked = self.scrapers.trigger(self.tick);
        let now = Instant::now();
        let dt = now.duration_since(self.last).as_secs_f64();
        self.last = now;
        let (totals, scan) = self.sockets();
        let mut table_ok = false;
        if let Some(table) = &mut self.table {
            match table.scan() {
                Ok(()) => {
                    table_ok = true;
                    self.collect.ok("host.processes");
                }
                Err(e) => self
                    .collect
                    .fail("host.processes", || format!("cannot list /proc: {e}")),
            }
        }
        if let Some(host) = &mut self.host {
            host.sample(dt, totals.as_ref(), scan.as_ref(), &mut self.collect);
        }
        let mut top_processes = Vec::new();
        if let (Some(table), true) = (&self.table, table_ok) {
            let listeners = scan.as_ref().map(|s| &s.listeners[..]);
            let monitored = self.processes.sample(table, listeners, &mut self.collect);
            if let Some(host) = &self.host {
                host.generator(table, &mut self.collect);
                host.processes_cpu(table, &mut self.collect);
                top_processes = host.top_others(table, &monitored);
            }
        }
        self.cgroups.sample(&mut self.collect);
        let deadline = now + self.interval / 2;
        let results = self.scrapers.collect(self.tick, &asked, deadline);
        for ((source, result), asked) in self.scrapers.sources().iter().zip(results).zip(&asked) {
            record_scrape(
                source,
                result,
                *asked,
                self.interval,
                &mut self.collect,
                &mut self.kinds,
            );
        }
        let (values, missing, warnings) = self.collect.take();
        self.samples += 1;
        Sample {
            elapsed_ms: now.duration_since(self.started).as_millis() as u64,
            unix_ms: unix_ms(),
            interval_ms: (dt * 1e3).round() as u64,
            values,
            top_processes,
            missing,
            warnings,
        }
    }

    /// Socket totals (cheap), and the full socket tables when there are enough sockets for
    /// ports to run short (a twentieth of the ephemeral range).
    fn sockets(&mut self) -> (Option<SocketTotals>, Option<SocketScan>) {
        let Some(scanner) = &mut self.sockets else {
            return (None, None);
        };
        let totals = match SocketTotals::read() {
            Ok(t) => {
                self.collect.ok("host.tcp");
                t
            }
            Err(e) => {
                self.collect.fail("host.tcp", || {
                    format!("cannot read /proc/net/sockstat: {e}")
                });
                return (None, None);
            }
        };
        if totals.in_use + totals.time_wait < u64::from(scanner.range_size() / 20) {
            self.last_scan = None;
            return (Some(totals), None);
        }
        if self.scan_skips > 0 && self.last_scan.is_some() {
            self.scan_skips -= 1;
            return (Some(totals), self.last_scan.clone());
        }
        let started = thread_cpu_time();
        match scanner.scan() {
            Ok(scan) => {
                // Keep scanning within 1% of a core: a scan that cost 5% of the interval
                // is repeated every fifth interval (the last one stands in meanwhile).
                let cost = thread_cpu_time().saturating_sub(started);
                let budget = (self.interval / 100).max(std::time::Duration::from_micros(100));
                self.scan_skips = (cost.as_secs_f64() / budget.as_secs_f64()).ceil() as u64;
                self.scan_skips = self.scan_skips.saturating_sub(1).min(30);
                self.last_scan = Some(scan.clone());
                (Some(totals), Some(scan))
            }
            Err(e) => {
                self.collect.warn_once("host.tcp.tables", || {
                    format!("cannot read /proc/net/tcp: {e}")
                });
                (Some(totals), None)
            }
        }
    }

    fn finish(self) -> Finished {
        let wall = self.started.elapsed();
        let cpu = thread_cpu_time() + self.scrapers.stop();
        let wall_ms = wall.as_secs_f64() * 1e3;
        let cpu_ms = cpu.as_secs_f64() * 1e3;
        Finished {
            kinds: self.kinds,
            cost: MonitorCost {
                cpu_ms,
                wall_ms,
                cpu_percent: if wall_ms > 0.0 {
                    100.0 * cpu_ms / wall_ms
                } else {
                    0.0
                },
                samples: self.samples,
            },
        }
    }
}

fn record_scrape(
    source: &str,
    result: Option<crate::prometheus::ScrapeResult>,
    asked: bool,
    interval: Duration,
    collect: &mut Collect,
    kinds: &mut BTreeMap<String, MetricKind>,
) {
    let Some(result) = result else {
        let limit = format_duration(interval / 2);
        let why = if asked {
            format!("no answer within {limit}")
        } else {
            format!("the previous scrape is still running (slower than {limit})")
        };
        collect.fail(source, || why);
        return;
    };
    if let Some(why) = result.error {
        collect.fail(source, || why);
        return;
    }
    collect.ok(source);
    for (series, value) in result.values {
        collect.set(series, value);
    }
    for (series, kind) in result.kinds {
        collect.ok(&series);
        kinds.insert(series, kind);
    }
    for series in result.unmatched {
        collect.fail(&series, || {
            "no series matches this selector at the endpoint (check the name and labels against its /metrics page)".into()
        });
    }
}
