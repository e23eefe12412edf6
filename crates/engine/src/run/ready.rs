//! Before the first request: the scenario prepared for this process's segment, the files and
//! ports it needs checked against the limits, the targets reached, and the worker threads
//! counted, so that a run that cannot be made is refused before it starts.

use super::{EngineError, RunOptions};
use crate::health::available_cores;
use crate::http::{probe, ProbeError, TlsConnectors};
use crate::limits::{
    check_files, check_ports, connections_needed, fit_default_in_flight, raise_open_files_limit,
};
use crate::prepare::{check_source_addresses, PreparedScenario};
use crate::record_meta::{record_meta, MetaInput};
use loadlab_metrics::result::unix_seconds;
use loadlab_metrics::Protocol;
use loadlab_record::RecordMeta;
use loadlab_scenario::plan::Segment;
use loadlab_scenario::{Load, Scenario};
use std::time::{Duration, SystemTime};

/// A run that may start: prepared, its budgets of files and ports met, the target reached.
pub(super) struct Ready {
    pub(super) prepared: PreparedScenario,
    pub(super) plan: loadlab_scenario::plan::Plan,
    pub(super) warnings: Vec<String>,
    pub(super) negotiated: Vec<Option<Protocol>>,
    pub(super) threads: usize,
}

impl Ready {
    pub(super) fn check(
        scenario: &Scenario,
        process_segment: Segment,
        threads: Option<usize>,
    ) -> Result<Ready, EngineError> {
        let prepared = prepare_segment(scenario, process_segment)?;
        let mut plan = scenario.plan();
        let mut warnings = Vec::new();
        check_budgets(
            scenario,
            &mut plan.load,
            &prepared,
            process_segment,
            &mut warnings,
        )?;
        let negotiated = preflight(&prepared, scenario)?;
        let threads = thread_count(threads, scenario, &plan.load, process_segment);
        Ok(Ready {
            prepared,
            plan,
            warnings,
            negotiated,
            threads,
        })
    }
}

impl Ready {
    /// The record's header: what was planned and prepared, and what the run is judged by.
    pub(super) fn record_meta(
        &self,
        scenario: &Scenario,
        options: &RunOptions,
        start_wall: SystemTime,
        host_timer: Option<loadlab_metrics::HostTimer>,
        slice: Duration,
    ) -> RecordMeta {
        record_meta(MetaInput {
            scenario,
            prepared: &self.prepared,
            plan: &self.plan,
            segment: options.segment,
            start_unix_s: unix_seconds(start_wall),
            negotiated: &self.negotiated,
            threads: self.threads,
            max_cpu_percent: options.max_cpu_percent,
            max_lag_ms: options.max_lag.as_secs_f64() * 1e3,
            host_timer,
            slice,
            steerable: options.steering.is_some(),
        })
    }
}

/// The scenario prepared for this process's segment: its share of each data set's rows,
/// refused (before any load) when a set has none for it.
fn prepare_segment(
    scenario: &Scenario,
    process_segment: Segment,
) -> Result<PreparedScenario, EngineError> {
    let mut prepared = PreparedScenario::new(scenario)?;
    prepared.data.offset = u64::from(process_segment.index);
    prepared.data.stride = u64::from(process_segment.count);
    if let Some(set) = prepared.data.set_without_rows() {
        return Err(EngineError::NoRowsForSegment {
            set: set.name.clone(),
            rows: set.rows.len(),
            index: process_segment.index,
            segments: process_segment.count,
        });
    }
    Ok(prepared)
}

/// Files and ports before anything is sent: running out mid-run fails requests and looks
/// like the target's fault.
fn check_budgets(
    scenario: &Scenario,
    load: &mut Load,
    prepared: &PreparedScenario,
    process_segment: Segment,
    warnings: &mut Vec<String>,
) -> Result<(), EngineError> {
    let (soft, hard) = raise_open_files_limit();
    if let Some(default) = fit_default_in_flight(load, prepared, process_segment, soft) {
        if let Load::Open(o) = load {
            warnings.push(format!(
                "max_in_flight is {} instead of its default {}: an iteration in flight keeps a connection to each origin, and this process may open {} files; set `load.max_in_flight` (or --max-in-flight) to choose",
                o.max_in_flight, default, soft
            ));
        }
    }
    let (connections, because) = connections_needed(load, prepared, process_segment);
    if let Some(budget) = check_files(connections, because, soft, hard) {
        return Err(EngineError::OpenFiles(budget));
    }
    let per_origin = match prepared.connections {
        loadlab_scenario::ConnectionPolicy::PerVu => {
            connections / prepared.origins.len().max(1) as u64
        }
        _ => connections,
    };
    if let Some(why) = check_ports(per_origin, scenario.source_addresses.len()) {
        return Err(EngineError::LocalPorts(why));
    }
    Ok(())
}

/// Worker threads: as asked, or enough for the load; never more than the shared connections,
/// since every worker needs at least one of them.
fn thread_count(
    asked: Option<usize>,
    scenario: &Scenario,
    load: &Load,
    process_segment: Segment,
) -> usize {
    let threads = asked
        .unwrap_or_else(|| default_threads(load, process_segment))
        .max(1);
    match scenario.http.connections {
        Some(n) => threads.min(process_segment.share(u64::from(n)).max(1) as usize),
        None => threads,
    }
}

/// Arrivals per second one open-model worker thread is given before another thread is added.
const OPEN_RATE_PER_THREAD: f64 = 25_000.0;

/// Enough threads for this process's share of the load, at most the cores it may use.
fn default_threads(load: &Load, segment: Segment) -> usize {
    let cores = available_cores();
    let wanted = match load {
        // Never more threads than this process has VUs: each thread gets at least one.
        Load::Closed(c) => return (segment.share(u64::from(c.max_vus())) as usize).clamp(1, cores),
        Load::Open(o) => {
            // Splitting a low rate over threads only costs wake-ups (fewer arrivals per
            // batch window, fewer reused connections), so another core is added for every
            // OPEN_RATE_PER_THREAD arrivals/s, up to every core this process may use.
            (o.peak_rate() / OPEN_RATE_PER_THREAD).ceil() as usize
        }
        Load::Burst(b) => (b.count / 2000 + 1) as usize,
    };
    wanted.div_ceil(segment.count as usize).clamp(1, cores)
}

/// Checks every origin before the load starts — resolves it, connects once, and asks what it
/// speaks — so a wrong host, a target that is down or a server without HTTP/2 is one clear
/// message instead of a wall of errors. Returns what each origin negotiated.
fn preflight(
    prepared: &PreparedScenario,
    scenario: &Scenario,
) -> Result<Vec<Option<Protocol>>, EngineError> {
    // Addresses that are not this machine's fail whatever the targets are.
    check_source_addresses(&scenario.source_addresses, &[])?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(EngineError::Thread)?;
    let tls = prepared
        .origins
        .iter()
        .any(|o| o.tls)
        .then(|| TlsConnectors::new(scenario.insecure));
    let mut addrs = Vec::new();
    let mut negotiated = Vec::new();
    for origin in &prepared.origins {
        match runtime.block_on(probe(origin, tls.as_ref())) {
            Ok(found) => {
                addrs.push(found.addr);
                negotiated.push(found.protocol);
            }
            Err(ProbeError::Dns(message)) => return Err(EngineError::Dns { message }),
            Err(ProbeError::Unreachable(message)) => {
                return Err(EngineError::Unreachable {
                    url: origin.url(),
                    message,
                })
            }
            Err(ProbeError::NoHttp2(message)) => {
                return Err(EngineError::NoHttp2 {
                    url: origin.url(),
                    message,
                })
            }
        }
    }
    check_source_addresses(&scenario.source_addresses, &addrs)?;
    Ok(negotiated)
}
