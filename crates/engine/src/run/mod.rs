//! Running a plan: prepares the scenario, starts one worker thread per core on its share of
//! the plan (and of this process's segment), and hands their intervals to the coordinator,
//! which streams the record and derives the summary from it.

mod ready;
mod workers;

use crate::cancel::Cancel;
use crate::coordinator::{Coordinator, ProgressCallback};
use crate::executor::{IntervalClock, Tick};
use crate::health::max_rss_bytes;
use crate::prepare::{PrepareError, PreparedScenario};
use crate::resources::{MonitorFeed, ResourceFeed};
use crate::steering::Steering;
use loadlab_metrics::result::StopReason;
use loadlab_metrics::{DeltaPool, RunResult};
use loadlab_record::{Guarded, LiveObserver, RecordEnd, RecordSink};
use loadlab_scenario::plan::Segment;
use loadlab_scenario::{Load, Scenario};
use loadlab_timer::resolution::WakeWatch;
use ready::Ready;
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime};
use workers::Workers;

pub struct RunOptions {
    /// Worker threads; default: enough for the load, at most the cores we may use.
    pub threads: Option<usize>,
    pub seed: u64,
    /// Scheduler lag p99 above this marks the generator saturated.
    pub max_lag: Duration,
    /// CPU use (percent of the cores used) at or above this marks the generator saturated.
    pub max_cpu_percent: f64,
    /// Called once per interval with its figures.
    pub progress: Option<ProgressCallback>,
    /// This process's share of the plan (`--segment i/N`); `None`: all of it.
    pub segment: Option<Segment>,
    /// Start the plan at this wall-clock time (segments on several machines line up).
    pub start_at: Option<SystemTime>,
    /// Where the run record streams to while the run goes.
    pub sink: Option<Box<dyn RecordSink>>,
    /// What watches the run interval by interval (dashboard, live outputs, windowed
    /// thresholds); one of them may stop it.
    pub observers: Vec<Box<dyn LiveObserver>>,
    /// What steers the run while it goes (the control API); `None`: it follows its plan.
    pub steering: Option<Steering>,
}

impl Default for RunOptions {
    fn default() -> Self {
        Self {
            threads: None,
            seed: 0x5EED,
            max_lag: Duration::from_millis(10),
            max_cpu_percent: 90.0,
            progress: None,
            observers: Vec::new(),
            segment: None,
            start_at: None,
            sink: None,
            steering: None,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error(transparent)]
    Prepare(#[from] PrepareError),
    #[error("cannot connect to {url}: {message}\n  hint: is the target running? Start the built-in one with `loadlab target`, or check --target")]
    Unreachable { url: String, message: String },
    #[error("{message} (check the spelling of the target URL)")]
    Dns { message: String },
    #[error("{url} does not speak HTTP/2: {message}\n  hint: HTTP/2 over plain text needs a server that accepts h2c with prior knowledge (nginx: `listen ... http2`); use an https:// URL for ALPN, or `http.version: auto` / \"1.1\" (`--http2` forces HTTP/2)")]
    NoHttp2 { url: String, message: String },
    #[error("cannot start worker thread: {0}")]
    Thread(std::io::Error),
    #[error("{0}")]
    OpenFiles(crate::limits::FileBudget),
    #[error("{0}")]
    LocalPorts(String),
    #[error(transparent)]
    Reflection(#[from] crate::prepare::reflect::ReflectError),
    #[error("data set `{set}` has {rows} row(s), fewer than the {segments} segments that split it (`split: segments`, or `pick: unique`): segment {index}/{segments} would get none\n  hint: add rows, run fewer segments, or take the split off the set")]
    NoRowsForSegment {
        set: String,
        rows: usize,
        index: u32,
        segments: u32,
    },
    #[error("the start time is {seconds:.1} s in the past: give a time ahead (`--start-at +10s`, or an RFC 3339 time a little in the future)")]
    StartInPast { seconds: f64 },
}

impl EngineError {
    /// True when the target could not be reached (exit 3), as opposed to bad input (exit 2).
    pub fn is_unreachable(&self) -> bool {
        match self {
            EngineError::Unreachable { .. } => true,
            EngineError::Reflection(e) => e.unreachable,
            _ => false,
        }
    }
}

pub struct RunOutput {
    /// The summary, derived from the record's intervals (thresholds not yet evaluated).
    pub result: RunResult,
    /// Why the record could not be written, if it could not (the run itself went on).
    pub storage_error: Option<std::io::Error>,
    /// Things the user should know that did not stop the run (the monitor could not start).
    pub warnings: Vec<String>,
}

/// A start time more than this far in the past is a mistake, not a clock difference.
const START_TOLERANCE: Duration = Duration::from_secs(1);

/// Runs the scenario's plan (or this process's segment of it) to completion, or until
/// `cancel`; streams its record to `options.sink` and summarises it.
pub fn run(
    scenario: &Scenario,
    mut options: RunOptions,
    cancel: &Cancel,
) -> Result<RunOutput, EngineError> {
    // A threshold's abort (or a control's stop) stops this run, not the study or retries
    // around it; `signals` is what the caller's signals raise.
    let signals = cancel;
    let cancel = &signals.child();
    let process_segment = options.segment.unwrap_or(Segment::WHOLE);
    let host_timer = crate::record_meta::measure_host_timer();
    // `grpc:` steps with no .proto get their types from the server's reflection first.
    let reflected = crate::prepare::reflect::fill_descriptors(scenario)?;
    let scenario = reflected.as_ref().unwrap_or(scenario);
    let ready = Ready::check(scenario, process_segment, options.threads)?;
    // A common start a little ahead (or at --start-at), so every worker begins on the same
    // instant; its wall-clock time is t = 0 of the record.
    // Measured while the target was checked; before the start is set, so that it is not late.
    let host_timer = host_timer.join().ok().flatten();
    let lead = lead_to_start(options.start_at)?;
    let start = Instant::now() + lead;
    let start_wall = SystemTime::now() + lead;
    let slice = loadlab_metrics::slice_for(ready.plan.duration());
    let clock = IntervalClock::new(ready.plan.warmup.min(ready.plan.duration()), slice);
    let meta = ready.record_meta(scenario, &options, start_wall, host_timer, slice);
    let Ready {
        prepared,
        plan,
        mut warnings,
        threads,
        ..
    } = ready;

    if let Some(steering) = &options.steering {
        begin_steering(
            steering,
            start,
            &plan.load,
            &prepared,
            process_segment,
            cancel,
        );
    }
    let feed = start_monitor(scenario, start, slice, &mut warnings);
    let (tx, rx) = mpsc::channel::<Tick>();
    let pool = DeltaPool::new();
    let workers = Workers {
        scenario,
        prepared: &prepared,
        plan: &plan,
        process_segment,
        threads,
        seed: options.seed,
        clock,
        steering: options.steering.as_ref(),
        start,
    };
    let handles = workers.spawn(&pool, tx, cancel)?;
    let host_timer_watch = crate::record_meta::watch_host_timer(&plan.load, threads);

    let mut coordinator = Coordinator::new(
        &meta,
        options.sink.take().map(Guarded::new),
        options.progress.take(),
        clock,
        plan.duration(),
        threads,
        pool,
    )
    .with_grace(workers::drain_grace(scenario))
    .with_resources(feed)
    .with_observers(
        std::mem::take(&mut options.observers),
        cancel.clone(),
        &meta,
    );
    collect_beside_workers(&mut coordinator, rx)?;
    for handle in handles {
        let _ = handle.join();
    }
    let mut record_end = record_end(
        &mut coordinator,
        start,
        host_timer_watch,
        options.steering.as_ref(),
        (signals, cancel),
    );
    record_end.data_use = prepared.data.uses();
    Ok(close_record(coordinator, &meta, &record_end, warnings))
}

/// The record's end written to the sink and told to the observers, and the run summarised
/// from the record.
fn close_record(
    mut coordinator: Coordinator,
    meta: &loadlab_record::RecordMeta,
    record_end: &RecordEnd,
    warnings: Vec<String>,
) -> RunOutput {
    let mut sink = coordinator.sink.take();
    if let Some(s) = sink.as_mut() {
        s.end(record_end);
    }
    coordinator.end_observers(record_end);
    let result = coordinator.summary.finish(meta, Some(record_end));
    RunOutput {
        result,
        storage_error: sink.and_then(|mut s| s.take_error()),
        warnings,
    }
}

/// How long from now the run starts: a little ahead, or at `start_at` (a moment late is a
/// clock difference, more is a mistake).
fn lead_to_start(start_at: Option<SystemTime>) -> Result<Duration, EngineError> {
    match start_at {
        None => Ok(Duration::from_millis(20)),
        Some(at) => match at.duration_since(SystemTime::now()) {
            Ok(ahead) => Ok(ahead),
            Err(past) if past.duration() <= START_TOLERANCE => Ok(Duration::ZERO),
            Err(past) => Err(EngineError::StartInPast {
                seconds: past.duration().as_secs_f64(),
            }),
        },
    }
}

/// The monitor of the system under test, when the scenario asks for one; a monitor that
/// cannot start is a warning, not a reason to stop the run.
fn start_monitor(
    scenario: &Scenario,
    start: Instant,
    slice: Duration,
    warnings: &mut Vec<String>,
) -> Option<Box<dyn ResourceFeed>> {
    if scenario.monitor.is_empty() {
        return None;
    }
    match MonitorFeed::start(&scenario.monitor, start, slice) {
        Ok(feed) => Some(Box::new(feed)),
        Err(why) => {
            warnings.push(why);
            None
        }
    }
}

/// Runs the coordinator on a thread of its own until every worker has hung up.
///
/// The coordinator (histogram encoding, appends and fsyncs each second) and the monitor run
/// beside the workers, often on the same core: at a lower priority they use the time the
/// workers sleep instead of preempting them for milliseconds at each interval boundary (seen
/// as a 2–3 ms scheduler lag spike every second at 40,000 arrivals/s).
fn collect_beside_workers(
    coordinator: &mut Coordinator,
    ticks: mpsc::Receiver<Tick>,
) -> Result<(), EngineError> {
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name("loadlab-coordinator".into())
            .spawn_scoped(scope, move || {
                loadlab_monitor::lower_this_thread_priority();
                coordinator.collect(&ticks);
            })
            .map(|handle| {
                let _ = handle.join();
            })
    })
    .map_err(EngineError::Thread)
}

/// How the run ended, for the record: why, when, and what it went through.
fn record_end(
    coordinator: &mut Coordinator,
    start: Instant,
    host_timer_watch: Option<WakeWatch>,
    steering: Option<&Steering>,
    (signals, cancel): (&Cancel, &Cancel),
) -> RecordEnd {
    let wall = Instant::now().saturating_duration_since(start);
    let aborted_by_threshold = coordinator.breach.take();
    RecordEnd {
        stop: stop_reason(aborted_by_threshold.is_some(), signals, cancel),
        signal: signals.signal().filter(|_| aborted_by_threshold.is_none()),
        aborted_by_threshold,
        wall_s: wall.as_secs_f64(),
        max_rss_bytes: max_rss_bytes(),
        intervals: coordinator.intervals(),
        monitor_cpu_percent: coordinator.monitor_cpu_percent,
        host_timer: host_timer_watch.and_then(crate::record_meta::watched_host_timer),
        steering: steering.map(Steering::finish).unwrap_or_default(),
        driven: None,
        data_use: Vec::new(),
    }
}

/// Steering follows this run from `start`, within the VUs its open files allow.
fn begin_steering(
    steering: &Steering,
    start: Instant,
    load: &Load,
    prepared: &PreparedScenario,
    process_segment: Segment,
    cancel: &Cancel,
) {
    let (soft, _) = crate::limits::raise_open_files_limit();
    let most = crate::limits::most_vus_within(soft, prepared, process_segment);
    let driven = loadlab_scenario::steer::Driven::new(load.clone()).with_vu_ceiling(
        u32::try_from(most).unwrap_or(u32::MAX),
        format!("each VU keeps its connections open, and this process may open {soft} files: raise `ulimit -n`, or split the load with --segment"),
    );
    steering.begin(
        tokio::time::Instant::from_std(start),
        driven,
        cancel.clone(),
    );
}

/// Why the run ended: a threshold's abort, a signal to the caller (it cuts a control's drain
/// off), a control's stop; else its plan ran out.
fn stop_reason(aborted: bool, signals: &Cancel, run: &Cancel) -> StopReason {
    if aborted {
        StopReason::Threshold
    } else if signals.is_cancelled() {
        StopReason::Signal
    } else {
        match run.cause() {
            Some(crate::StopCause::Control) => StopReason::Control,
            Some(crate::StopCause::Threshold) => StopReason::Threshold,
            Some(crate::StopCause::Signal(_)) => StopReason::Signal,
            None => StopReason::Completed,
        }
    }
}
