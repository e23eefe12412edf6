//! The header of a run's record: the resolved scenario, this process's share of its plan,
//! the steps and the host, written before the first request is sent.

use crate::health::available_cores;
use crate::prepare::PreparedScenario;
use loadlab_metrics::result::{LoadInfo, PlannedLoad};
use loadlab_metrics::Segment;
use loadlab_metrics::{Environment, Protocol};
use loadlab_record::{DataSetInfo, OriginInfo, RecordMeta, RECORD_SCHEMA};
use loadlab_scenario::{Load, Plan, Scenario};
use loadlab_timer::resolution::{WakeLatency, WakeWatch};

pub struct MetaInput<'a> {
    pub scenario: &'a Scenario,
    pub prepared: &'a PreparedScenario,
    pub plan: &'a Plan,
    pub segment: Option<Segment>,
    pub start_unix_s: f64,
    /// What each origin negotiated before the load (see `run::preflight`).
    pub negotiated: &'a [Option<Protocol>],
    pub threads: usize,
    pub max_cpu_percent: f64,
    pub max_lag_ms: f64,
    /// How late this host woke a timer just before the run (`host_timer`).
    pub host_timer: Option<loadlab_metrics::HostTimer>,
    /// The length of the record's intervals.
    pub slice: std::time::Duration,
    /// The run takes commands while it goes (a steering handle).
    pub steerable: bool,
}

pub fn record_meta(m: MetaInput<'_>) -> RecordMeta {
    let scenario = m.scenario;
    let segment = m.segment.unwrap_or(Segment::WHOLE);
    RecordMeta {
        schema: RECORD_SCHEMA.into(),
        tool_version: env!("CARGO_PKG_VERSION").into(),
        name: scenario.name.clone(),
        scenario_file: scenario.source.clone(),
        target: scenario
            .target
            .clone()
            .or_else(|| m.prepared.origins.first().map(|o| o.url()))
            .map(|t| loadlab_scenario::redact_url(&t)),
        start_unix_s: m.start_unix_s,
        warmup_s: m.plan.warmup.as_secs_f64(),
        slice_s: m.slice.as_secs_f64(),
        load: load_info(m.plan, segment),
        plan_hash: scenario.fingerprint(),
        scenario: scenario.describe(),
        segment: m.segment,
        steerable: m.steerable,
        origins: m
            .prepared
            .origins
            .iter()
            .enumerate()
            .map(|(i, o)| OriginInfo {
                url: o.url(),
                version: o.version.as_str().into(),
                shared_connections: o.shared.map(|s| s.connections),
                negotiated: m.negotiated.get(i).copied().flatten(),
            })
            .collect(),
        steps: m.prepared.steps.clone(),
        data_sets: scenario
            .data
            .iter()
            .map(|d| DataSetInfo {
                name: d.name.clone(),
                rows: d.rows.len() as u64,
                pick: d.pick.as_str().into(),
                split: d.split_by_segment(),
            })
            .collect(),
        thresholds: scenario.thresholds.iter().map(|t| t.expr.clone()).collect(),
        environment: Environment::detect(),
        threads: m.threads as u32,
        cores: available_cores() as u32,
        cpus_allowed: loadlab_monitor::cpu_list_self(),
        max_cpu_percent: m.max_cpu_percent,
        max_lag_ms: m.max_lag_ms,
        host_timer: m.host_timer,
        batch_window_ms: match &m.plan.load {
            Load::Open(o) => Some(o.batch_window.as_secs_f64() * 1e3),
            _ => None,
        },
        reads_at_wakeups: crate::executor::defers_reads(
            &m.plan.load,
            segment.split(0, m.threads as u32),
        ) && {
            let client = crate::http::client_for(m.scenario.http.client, m.prepared.streams());
            m.prepared
                .origins
                .iter()
                .any(|o| o.reads_at_wakeups(client))
        },
        pid: std::process::id(),
        merged_from: None,
        clock: None,
        imported: None,
    }
}

/// Measures how late this host wakes a timer, on a thread of its own (about 75 ms of sleeps,
/// meanwhile the caller checks the target): the generator's delays are judged above it.
pub fn measure_host_timer() -> std::thread::JoinHandle<Option<loadlab_metrics::HostTimer>> {
    std::thread::spawn(|| {
        use loadlab_timer::resolution::{measure_wake_latency, run_start_sleeps};
        let late = measure_wake_latency(&run_start_sleeps()).ok()?;
        Some(host_timer_of(&late, false))
    })
}

/// The most wake-ups the watch beside a run keeps: minutes of them (8 bytes each).
const WATCH_SAMPLES: usize = 100_000;

/// Starts measuring how late this host wakes a timer while the run goes on, on a thread of
/// its own, with sleeps like its workers' (`load`, over `threads` workers): finished, it
/// gives the floor the run's delays are judged above.
pub fn watch_host_timer(load: &Load, threads: usize) -> Option<WakeWatch> {
    use loadlab_timer::resolution::{run_start_sleeps, sleeps_around};
    // An open model's worker sleeps from one sparse arrival to the next; dense arrivals, the
    // closed model's pause probe and bursts wake every millisecond or so.
    let sleeps = match load {
        Load::Open(open) if open.peak_rate() > 0.0 => {
            let gap = threads as f64 / open.peak_rate();
            if gap > 0.006 {
                sleeps_around(std::time::Duration::from_secs_f64(gap))
            } else {
                run_start_sleeps()
            }
        }
        _ => run_start_sleeps(),
    };
    WakeWatch::start(sleeps, WATCH_SAMPLES).ok()
}

/// What the watch beside the run measured (none: it did not wake once).
pub fn watched_host_timer(watch: WakeWatch) -> Option<loadlab_metrics::HostTimer> {
    let late = watch.finish();
    (late.samples() > 0).then(|| host_timer_of(&late, true))
}

fn host_timer_of(late: &WakeLatency, with_p99: bool) -> loadlab_metrics::HostTimer {
    let ms = |q: f64| late.quantile(q).as_secs_f64() * 1e3;
    loadlab_metrics::HostTimer {
        samples: late.samples() as u32,
        p50_ms: ms(0.5),
        p95_ms: ms(0.95),
        p99_ms: with_p99.then(|| ms(0.99)),
        max_ms: ms(1.0),
    }
}

/// The plan's load as this segment executes it (counts are its exact share, rates its
/// fraction), so that the segments' figures add up to the plan's.
pub fn load_info(plan: &Plan, segment: Segment) -> LoadInfo {
    let load = &plan.load;
    let fraction = segment.fraction();
    let mut info = LoadInfo {
        model: load.model(),
        planned_duration_s: plan.duration().as_secs_f64(),
        planned: plan.planned_points().map(|(vus, points)| PlannedLoad {
            vus,
            points: points
                .into_iter()
                .map(|(t, v)| {
                    let share = if vus {
                        segment.share(v.round() as u64) as f64
                    } else {
                        v * fraction
                    };
                    (t, share)
                })
                .collect(),
        }),
        ..LoadInfo::default()
    };
    match load {
        Load::Closed(c) => {
            info.max_vus = Some(segment.share(u64::from(c.max_vus())) as u32);
            info.pace_ms = c.pace.map(|p| p.as_secs_f64() * 1e3);
        }
        Load::Open(o) => {
            info.peak_rate = Some(o.peak_rate() * fraction);
            info.planned_arrivals = Some(planned_arrivals(o, segment));
            info.poisson = o.poisson;
            info.max_in_flight = Some(segment.share(u64::from(o.max_in_flight)).max(1) as u32);
        }
        Load::Burst(b) => {
            info.count = Some(b.share(segment));
        }
    }
    info
}

/// Arrivals this segment is planned to start: exact for a capped plan, its fraction otherwise.
fn planned_arrivals(o: &loadlab_scenario::OpenLoad, segment: Segment) -> f64 {
    match o.max_arrivals {
        Some(max) if (max as f64) <= o.expected_arrivals() => segment.share(max) as f64,
        _ => o.expected_arrivals() * segment.fraction(),
    }
}
