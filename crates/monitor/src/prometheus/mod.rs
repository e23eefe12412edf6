//! Prometheus endpoints (node_exporter, cAdvisor, JVM/Go/app metrics): scraped once per
//! interval, each on its own thread so a slow or dead endpoint never delays the others or the
//! host sampling; selected series are recorded as `prometheus.<name>.<selector>` — gauges as
//! read, counters as their per-second rate.
//!
//! HTTP through `loadlab-http-client` (the workspace's one blocking client; rustls for https
//! endpoints); parsing through `prometheus-parse`.

pub mod select;

use crate::sample::MetricKind;
use loadlab_scenario::monitor::PrometheusWatch;
use select::{counter_rate, declared_types, relevant_lines, select, Selection};
use std::collections::HashMap;
use std::sync::mpsc::{self, Receiver, SyncSender, TrySendError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Largest exposition read (cAdvisor on a big node can be tens of MB).
const MAX_BODY: u64 = 64 * 1024 * 1024;

/// What one scrape of one endpoint gave.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ScrapeResult {
    /// `(series name, value)`, counters already turned into rates.
    pub values: Vec<(String, f64)>,
    pub kinds: Vec<(String, MetricKind)>,
    /// Selectors that matched no series in this scrape (series names).
    pub unmatched: Vec<String>,
    /// Why the endpoint could not be read at all.
    pub error: Option<String>,
}

/// Counter values by series identity (`name{labels}`).
type Counters = HashMap<String, f64>;

/// One endpoint and the counters of its previous scrape.
pub struct Endpoint {
    name: String,
    url: String,
    /// The client, or why none could be made (said by every scrape).
    client: Result<loadlab_http_client::Client, String>,
    selections: Vec<Selection>,
    /// Time of the previous successful scrape and each selector's counters then.
    prev: Option<(Instant, Vec<Option<Counters>>)>,
    /// The endpoint is served by loadlab's own process (an in-process target, `loadlab
    /// demo`): its CPU counters are part of the generator's process CPU.
    in_process: bool,
}

impl Endpoint {
    pub fn new(watch: &PrometheusWatch, timeout: Duration) -> Self {
        let client = loadlab_http_client::client(
            timeout,
            concat!("loadlab-monitor/", env!("CARGO_PKG_VERSION")),
        );
        Endpoint {
            name: watch.name.clone(),
            url: watch.url.clone(),
            client,
            selections: watch.series.iter().map(Selection::new).collect(),
            prev: None,
            in_process: served_by_this_process(&watch.url),
        }
    }

    fn series_name(&self, selection: &Selection) -> String {
        format!("prometheus.{}.{}", self.name, selection.text)
    }

    /// Scrapes once and records the selected series.
    pub fn scrape(&mut self) -> ScrapeResult {
        let at = Instant::now();
        let body = match self.fetch() {
            Ok(body) => body,
            Err(why) => {
                // The next success is a new baseline: no rate across the gap.
                self.prev = None;
                return ScrapeResult {
                    error: Some(why),
                    ..ScrapeResult::default()
                };
            }
        };
        self.record(&body, at)
    }

    /// Records the selected series of an exposition read at `at`.
    pub fn record(&mut self, body: &str, at: Instant) -> ScrapeResult {
        let lines = relevant_lines(body, &self.selections);
        let types = declared_types(&lines);
        let scrape = match prometheus_parse::Scrape::parse(lines.iter().map(|l| Ok(l.to_string())))
        {
            Ok(s) => s,
            Err(e) => {
                return ScrapeResult {
                    error: Some(format!("{}: unreadable exposition: {e}", self.url)),
                    ..ScrapeResult::default()
                }
            }
        };
        let mut out = ScrapeResult::default();
        let mut counters = Vec::with_capacity(self.selections.len());
        let dt = self
            .prev
            .as_ref()
            .map_or(0.0, |(t, _)| at.duration_since(*t).as_secs_f64());
        for (i, sel) in self.selections.iter().enumerate() {
            let series = self.series_name(sel);
            let Some(matched) = select(&scrape, &types, sel) else {
                out.unmatched.push(series);
                // Read, and none yet: a counter appearing later counts from zero.
                counters.push(Some(Counters::new()));
                continue;
            };
            out.kinds.push((series.clone(), matched.kind));
            match matched.kind {
                MetricKind::Gauge => {
                    out.values
                        .push((series, matched.series.iter().map(|(_, v)| v).sum()));
                    counters.push(None);
                }
                MetricKind::Counter => {
                    let prev = self.prev.as_ref().and_then(|(_, c)| c[i].as_ref());
                    if let Some(rate) = counter_rate(prev, &matched.series, dt) {
                        out.values.push((series, rate));
                    }
                    counters.push(Some(matched.series.into_iter().collect()));
                }
            }
        }
        self.prev = Some((at, counters));
        if self.in_process {
            // Like `processes.NAME.includes_generator`: charts split the process's CPU.
            out.values
                .push((format!("prometheus.{}.includes_generator", self.name), 1.0));
        }
        out
    }

    fn fetch(&self) -> Result<String, String> {
        let client = self.client.as_ref()?;
        let request = client
            .get(&self.url)
            .header("Accept", "text/plain;version=0.0.4");
        let resp = loadlab_http_client::send(request)
            .map_err(|e| format!("cannot read {}: {e}", self.url))?;
        let status = resp.status();
        if !status.is_success() {
            return Err(format!("{} answered HTTP {}", self.url, status.as_u16()));
        }
        loadlab_http_client::text_within(resp, MAX_BODY)
            .map_err(|e| format!("cannot read the body of {}: {e}", self.url))
    }
}

/// Whether a loopback endpoint's port is listened on by this very process.
fn served_by_this_process(url: &str) -> bool {
    let Ok(parsed) = url::Url::parse(url) else {
        return false;
    };
    let loopback = loadlab_scenario::is_loopback(&parsed);
    let Some(port) = parsed.port_or_known_default() else {
        return false;
    };
    loopback
        && matches!(
            crate::procs::discover::processes_listening_on(port),
            Ok(crate::procs::discover::PortLookup::Found(pids)) if pids.contains(&(std::process::id() as i32))
        )
}

/// The scraper threads, one per endpoint.
pub struct Scrapers {
    sources: Vec<String>,
    ticks: Vec<SyncSender<u64>>,
    results: Receiver<(usize, u64, ScrapeResult)>,
    threads: Vec<JoinHandle<Duration>>,
}

impl Scrapers {
    pub fn start(config: &[PrometheusWatch], timeout: Duration) -> std::io::Result<Self> {
        let (result_tx, results) = mpsc::channel();
        let mut scrapers = Scrapers {
            sources: Vec::new(),
            ticks: Vec::new(),
            results,
            threads: Vec::new(),
        };
        for (i, watch) in config.iter().enumerate() {
            let (tick_tx, tick_rx) = mpsc::sync_channel::<u64>(1);
            let mut endpoint = Endpoint::new(watch, timeout);
            let result_tx = result_tx.clone();
            let thread = std::thread::Builder::new()
                .name(format!("loadlab-scrape-{}", watch.name))
                .spawn(move || {
                    while let Ok(tick) = tick_rx.recv() {
                        if result_tx.send((i, tick, endpoint.scrape())).is_err() {
                            break;
                        }
                    }
                    crate::sys::thread_cpu_time()
                })?;
            scrapers.sources.push(format!("prometheus.{}", watch.name));
            scrapers.ticks.push(tick_tx);
            scrapers.threads.push(thread);
        }
        Ok(scrapers)
    }

    pub fn sources(&self) -> &[String] {
        &self.sources
    }

    /// Asks every endpoint to scrape for `tick`; `false` where the previous scrape is still
    /// running (the endpoint is slower than the interval).
    pub fn trigger(&self, tick: u64) -> Vec<bool> {
        self.ticks
            .iter()
            .map(|t| match t.try_send(tick) {
                Ok(()) => true,
                Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => false,
            })
            .collect()
    }

    /// The results for `tick`, waiting at most until `deadline`; `None` for endpoints that
    /// did not answer in time.
    pub fn collect(
        &self,
        tick: u64,
        asked: &[bool],
        deadline: Instant,
    ) -> Vec<Option<ScrapeResult>> {
        let mut out: Vec<Option<ScrapeResult>> = vec![None; self.ticks.len()];
        let mut waiting = asked.iter().filter(|a| **a).count();
        while waiting > 0 {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.results.recv_timeout(left) {
                Ok((i, t, result)) if t == tick => {
                    out[i] = Some(result);
                    waiting -= 1;
                }
                // A late answer to an earlier tick: its interval is gone.
                Ok(_) => {}
                Err(_) => break,
            }
        }
        out
    }

    /// Stops the threads (after their current scrape) and returns their CPU time.
    pub fn stop(self) -> Duration {
        drop(self.ticks);
        self.threads.into_iter().filter_map(|t| t.join().ok()).sum()
    }
}
