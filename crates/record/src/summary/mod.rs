//! The one function from a record to its summary (`run.json`): intervals are folded in as
//! they come — while the run goes, when a dead run's record is read back, when segments are
//! merged — and `finish` derives every figure, verdict and validity reason from them.

mod health;
mod scopes;
mod stretches;

use super::codec::{IntervalRecord, RecordedSample};
use super::meta::{RecordEnd, RecordMeta};
use health::Judgement;
use loadlab_metrics::result::encode_nonempty;
use loadlab_metrics::result::{
    from_unix_seconds, rfc3339, Bytes, Histograms, IntervalLatency, IntervalStats, Iterations,
    LagSummary, LatencySummary, OriginResult, Requests, RunResult, StopReason, WindowStats, SCHEMA,
    WINDOW_REQUESTS,
};
use loadlab_metrics::StepDelta;
use loadlab_metrics::{Compensation, ErrorKind, Phase, Protocol, ScheduleSource};
use loadlab_metrics::{LatencyHistogram, LazyHistogram};
use scopes::{encode, error_map, scopes, stream_histograms, summary_of, Totals};
use std::collections::BTreeMap;

/// Everything the summary needs, accumulated interval by interval (memory stays flat).
#[derive(Debug, Clone, Default)]
pub struct Summarizer {
    /// Measured (after warm-up) totals per step.
    steps: Vec<StepDelta>,
    /// Over the whole run (generator health looks at all of it).
    scheduler_lag: LazyHistogram,
    /// Measured (after warm-up) iterations, and those of the warm-up.
    iterations_completed: u64,
    warmup_iterations: u64,
    /// Measured (after warm-up) iteration durations.
    iteration_duration: LazyHistogram,
    /// The run's first iterations (warm-up included), until there are enough of them...
    early_iterations: LazyHistogram,
    /// ...then how many they were and their median duration (µs): the schedule a closed
    /// model's compensation infers.
    unloaded_iterations: Option<(u64, u64)>,
    /// The most VUs active at once, warm-up included (0: not tracked).
    vus_max: u64,
    iterations_dropped: u64,
    delayed_by_max_in_flight: u64,
    delayed_by_stream_limit: u64,
    delayed_by_connect_limit: u64,
    /// Connections opened per origin and protocol (warm-up included: what was spoken).
    connections: Vec<[u64; Protocol::COUNT]>,
    data_refused: Vec<u64>,
    cpu_seconds: f64,
    /// What the generator's threads went through over the measured window (`disturbance`).
    pauses: LazyHistogram,
    run_delay_seconds: f64,
    run_slices: u64,
    wall_s: f64,
    measured_s: f64,
    warmup_requests: u64,
    intervals: Vec<IntervalStats>,
    /// The over-time charts' windows closed so far, and the one being filled.
    windows: Vec<WindowStats>,
    window: Option<OpenWindow>,
    /// Iterations completed in each interval (beside `intervals`).
    interval_iterations: Vec<u64>,
    /// The monitor's samples, each with whether its interval was warm-up.
    samples: Vec<(bool, RecordedSample)>,
    examples: Vec<(ErrorKind, String)>,
    /// False: counters only, no latency histograms (a merge's per-segment table)...
    without_histograms: bool,
    /// ...but the measured latency over all steps, as one histogram: the segment's own in a
    /// round of a study (`study --segments`), resampled by its two-level bootstrap.
    measured_latency: LazyHistogram,
    /// A run that may be steered: each interval's latency is kept (`interval_latency`,
    /// encoded) for the stretches of constant load its commands make.
    keeps_interval_latency: bool,
    interval_latency: Vec<String>,
}

/// The window being filled: its slices' requests and merged latency histogram.
#[derive(Debug, Clone, Default)]
struct OpenWindow {
    t: f64,
    length_s: f64,
    warmup: bool,
    requests: u64,
    failed: u64,
    latency: LazyHistogram,
}

impl OpenWindow {
    fn close(&self) -> WindowStats {
        WindowStats {
            t: self.t,
            length_s: self.length_s,
            warmup: self.warmup,
            requests: self.requests,
            failed: self.failed,
            rate: self.requests as f64 / self.length_s.max(1e-3),
            latency_ms: IntervalLatency::of(self.latency.get()),
        }
    }
}

impl Summarizer {
    pub fn new(step_count: usize) -> Self {
        Self {
            steps: vec![StepDelta::default(); step_count],
            ..Self::default()
        }
    }

    /// The summarizer of a record: one that may have been steered keeps what its stretches
    /// of constant load need.
    pub fn for_record(meta: &RecordMeta) -> Self {
        Self {
            keeps_interval_latency: meta.steerable,
            ..Self::new(meta.steps.len())
        }
    }

    /// A summarizer that keeps counters, generator health and validity, but no step
    /// histograms (cheap enough to keep one per segment of a large merge).
    pub fn counters_only(step_count: usize) -> Self {
        Self {
            without_histograms: true,
            ..Self::new(step_count)
        }
    }

    /// The measured (after warm-up) latency of every step together, kept by a counters-only
    /// summarizer (empty otherwise: the full summary has it per scope).
    pub fn measured_latency(&self) -> &LazyHistogram {
        &self.measured_latency
    }

    pub fn intervals(&self) -> &[IntervalStats] {
        &self.intervals
    }

    /// Folds in the next interval.
    pub fn add(&mut self, r: &IntervalRecord) {
        let d = &r.delta;
        let requests = d.requests();
        if r.warmup {
            self.warmup_requests += requests;
        } else {
            if self.steps.len() < d.steps.len() {
                self.steps.resize(d.steps.len(), StepDelta::default());
            }
            for (total, step) in self.steps.iter_mut().zip(&d.steps) {
                if self.without_histograms {
                    total.add_counters(step);
                    self.measured_latency.add(&step.latency);
                } else {
                    total.add(step);
                    // The exemplars just added are this interval's.
                    total.exemplars.at((r.start_s * 1000.0).round() as u64);
                }
            }
            if !self.without_histograms {
                self.iteration_duration.add(&d.iteration_duration);
            }
            self.pauses.add(&d.pauses);
            self.run_delay_seconds += d.run_delay_seconds;
            self.run_slices += d.run_slices;
            self.measured_s += r.length_s;
        }
        self.vus_max = self.vus_max.max(d.active_max);
        self.scheduler_lag.add(&d.scheduler_lag);
        if self.unloaded_iterations.is_none() && !self.without_histograms {
            self.early_iterations.add(&d.iteration_duration);
            let n = self.early_iterations.len();
            if n >= loadlab_metrics::compensation::MIN_INFERRED_ITERATIONS {
                self.unloaded_iterations = self
                    .early_iterations
                    .get()
                    .map(|h| (n, h.value_at_quantile(0.5)));
                self.early_iterations = LazyHistogram::new();
            }
        }
        if r.warmup {
            self.warmup_iterations += d.iterations_completed;
        } else {
            self.iterations_completed += d.iterations_completed;
        }
        self.iterations_dropped += d.iterations_dropped;
        self.delayed_by_max_in_flight += d.delayed_by_max_in_flight;
        self.delayed_by_stream_limit += d.delayed_by_stream_limit;
        self.delayed_by_connect_limit += d.delayed_by_connect_limit;
        for (origin, counts) in d.connections.iter().enumerate() {
            if self.connections.len() <= origin {
                self.connections.resize(origin + 1, [0; Protocol::COUNT]);
            }
            for (a, b) in self.connections[origin].iter_mut().zip(counts) {
                *a += b;
            }
        }
        for (i, &n) in d.data_refused.iter().enumerate() {
            if self.data_refused.len() <= i {
                self.data_refused.resize(i + 1, 0);
            }
            self.data_refused[i] += n;
        }
        self.cpu_seconds += d.cpu_seconds;
        self.wall_s = self.wall_s.max(r.start_s + r.length_s);
        for (kind, message) in &d.error_examples {
            if !self.examples.iter().any(|(k, _)| k == kind) {
                self.examples.push((*kind, message.clone()));
            }
        }
        let latency = if self.without_histograms {
            std::borrow::Cow::Owned(LazyHistogram::new())
        } else {
            d.latency()
        };
        if !self.without_histograms {
            self.extend_window(r, requests, d.failed(), &latency);
            self.keep_interval_latency(&latency);
        }
        self.interval_iterations.push(d.iterations_completed);
        self.samples
            .extend(r.resources.iter().map(|s| (r.warmup, s.clone())));
        self.intervals.push(IntervalStats {
            t: r.start_s,
            length_s: r.length_s,
            warmup: r.warmup,
            requests,
            failed: d.failed(),
            rate: requests as f64 / r.length_s.max(1e-3),
            latency_ms: IntervalLatency::of(latency.get()),
            active: d.active,
            in_flight: d.in_flight,
        });
    }

    /// Adds a slice to the open window, closing it first when the slice is on the other side
    /// of the warm-up's end, and after when it holds enough requests or a second.
    fn extend_window(
        &mut self,
        r: &IntervalRecord,
        requests: u64,
        failed: u64,
        latency: &LazyHistogram,
    ) {
        if self.window.as_ref().is_some_and(|w| w.warmup != r.warmup) {
            let w = self.window.take().expect("checked");
            self.windows.push(w.close());
        }
        let w = self.window.get_or_insert_with(|| OpenWindow {
            t: r.start_s,
            warmup: r.warmup,
            ..OpenWindow::default()
        });
        w.length_s = r.start_s + r.length_s - w.t;
        w.requests += requests;
        w.failed += failed;
        w.latency.add(latency);
        if w.requests >= WINDOW_REQUESTS || w.length_s >= 1.0 - 1e-6 {
            let w = self.window.take().expect("just filled");
            self.windows.push(w.close());
        }
    }

    /// The run's summary. Thresholds are left empty (they are evaluated on it).
    pub fn finish(&self, meta: &RecordMeta, end: Option<&RecordEnd>) -> RunResult {
        let all = self.totals();
        let (stop, interrupted) = stop_of(end);
        let measured = self.measured_s;
        let rate = request_rate(all.requests, measured);
        let Judgement {
            validity,
            verdicts,
            generator,
            resources,
        } = self.judge(meta, end, stop, &all, rate);
        // The run's corrected histogram, made once: its summary, its encoding, and the size of
        // the correction all read it.
        let (compensation, compensated) = self.compensation(meta, &all.latency).unzip();
        let histograms = self.run_histograms(&all, compensated.as_ref());
        let (driven, stretches) = self.steered(meta, end).unzip();
        RunResult {
            schema: SCHEMA.to_string(),
            tool_version: meta.tool_version.clone(),
            name: meta.name.clone(),
            scenario_file: meta.scenario_file.clone(),
            target: meta.target.clone(),
            started_at: started_at(meta),
            plan_hash: Some(meta.plan_hash.clone()),
            segment: meta.segment,
            valid: meta.imported.is_none() && validity.is_valid(),
            imported: meta.imported.clone(),
            validity,
            verdicts,
            interrupted,
            stop,
            aborted_by_threshold: end.and_then(|e| e.aborted_by_threshold.clone()),
            steering: end.map(|e| e.steering.clone()).unwrap_or_default(),
            steered: driven.is_some(),
            stretches: stretches.unwrap_or_default(),
            data_sets: data_sets_used(meta, end),
            duration_s: measured,
            warmup_s: meta.warmup_s,
            load: loadlab_metrics::result::LoadInfo {
                driven,
                ..meta.load.clone()
            },
            requests: self.requests(&all, rate),
            origins: self.origins(meta),
            bytes: Bytes::over(all.bytes.sent, all.bytes.received, measured),
            latency_ms: summary_of(&all.latency),
            latency_compensated_ms: compensated.as_ref().map(LatencySummary::of),
            compensation: compensation.clone(),
            service_time_ms: summary_of(&all.service),
            phases_ms: all.phases.summary(),
            vus_max: self.closed_vus_max(meta),
            lag_ms: all.lag.get().map(LagSummary::of).unwrap_or_default(),
            server_latency_ms: all.server.get().map(LatencySummary::of),
            errors: error_map(&all.errors),
            error_hints: error_hints(&all),
            error_examples: self.error_examples(&all),
            status_codes: all.statuses,
            iterations: self.iterations(),
            steps: self.step_results(meta, compensation.as_ref()),
            groups: scopes(meta, &self.steps, compensation.as_ref(), |info| {
                info.group.iter().cloned().collect()
            }),
            tags: scopes(meta, &self.steps, compensation.as_ref(), |info| {
                info.tags.clone()
            }),
            thresholds: Vec::new(),
            generator,
            intervals: self.intervals.clone(),
            windows: self.all_windows(),
            histograms,
            // Another tool's file says nothing of the machine it ran on.
            environment: meta.imported.is_none().then(|| meta.environment.clone()),
            resources,
            segments: Vec::new(),
            clock_skew: None,
            notes: imported_notes(meta),
            stream: (!all.stream.is_empty()).then(|| {
                loadlab_metrics::StreamResult::of(&all.stream, &all.stream_series, measured)
            }),
        }
    }

    /// The measured totals over all steps.
    fn totals(&self) -> Totals {
        let mut all = Totals::default();
        for s in &self.steps {
            all.add(s);
        }
        all
    }

    /// The most VUs active at once, for a closed model that tracked it.
    fn closed_vus_max(&self, meta: &RecordMeta) -> Option<u64> {
        (meta.load.model == loadlab_metrics::LoadModel::Closed && self.vus_max > 0)
            .then_some(self.vus_max)
    }

    /// The closed windows and the one still being filled.
    fn all_windows(&self) -> Vec<WindowStats> {
        self.windows
            .iter()
            .cloned()
            .chain(self.window.as_ref().map(OpenWindow::close))
            .collect()
    }
}

/// Requests per second over the measured window (0 when nothing was measured).
fn request_rate(requests: u64, measured_s: f64) -> f64 {
    if measured_s > 0.0 {
        requests as f64 / measured_s
    } else {
        0.0
    }
}

/// The notes another tool's file came with (none for this tool's own runs).
fn imported_notes(meta: &RecordMeta) -> Vec<String> {
    meta.imported
        .as_ref()
        .map(|i| i.notes.clone())
        .unwrap_or_default()
}

impl Summarizer {
    /// A closed-model run's schedule for compensated latency (`load.pace`, or inferred from
    /// the first iterations) and the run's latency corrected on it. `None` for other models,
    /// or with no latency or no schedule to go by.
    fn compensation(
        &self,
        meta: &RecordMeta,
        latency: &LazyHistogram,
    ) -> Option<(Compensation, LatencyHistogram)> {
        if meta.load.model != loadlab_metrics::LoadModel::Closed || self.without_histograms {
            return None;
        }
        let raw = latency.get()?;
        // A run shorter than the inference's iterations infers from all it had (the
        // caveat says how few).
        let early = self
            .early_iterations
            .get()
            .map(|h| (h.len(), h.value_at_quantile(0.5)));
        let (interval_ms, source, inferred_from) =
            match (meta.load.pace_ms, self.unloaded_iterations.or(early)) {
                (Some(pace), _) => (pace, ScheduleSource::Pace, None),
                (None, Some((n, median_us))) => {
                    (median_us as f64 / 1e3, ScheduleSource::Inferred, Some(n))
                }
                (None, None) => return None,
            };
        let mut c = Compensation {
            interval_ms,
            source,
            inferred_from,
            most_at: String::new(),
            ratio: 1.0,
            multi_step: meta.steps.len() > 1,
        };
        let corrected = loadlab_metrics::compensation::compensate(raw, c.interval_us());
        (c.most_at, c.ratio) = loadlab_metrics::compensation::largest_correction(raw, &corrected);
        Some((c, corrected))
    }

    /// Each origin of the record with the protocol its connections actually spoke.
    fn origins(&self, meta: &RecordMeta) -> Vec<OriginResult> {
        meta.origins
            .iter()
            .enumerate()
            .map(|(i, o)| {
                let counts = self.connections.get(i).copied().unwrap_or_default();
                let spoken = Protocol::ALL
                    .into_iter()
                    .filter(|p| counts[p.index()] > 0)
                    .max_by_key(|p| (counts[p.index()], std::cmp::Reverse(p.index())));
                OriginResult {
                    url: o.url.clone(),
                    version: o.version.clone(),
                    protocol: spoken.or(o.negotiated),
                    connections: Protocol::ALL
                        .iter()
                        .filter(|p| counts[p.index()] > 0)
                        .map(|p| (p.as_str().to_string(), counts[p.index()]))
                        .collect(),
                    shared_connections: o.shared_connections,
                }
            })
            .collect()
    }

    /// The run's request counts, at `rate` over the measured time.
    fn requests(&self, all: &Totals, rate: f64) -> Requests {
        Requests {
            total: all.requests,
            ok: all.requests - all.failed,
            failed: all.failed,
            interrupted: all.interrupted,
            rate,
            warmup: self.warmup_requests,
            delayed_by_stream_limit: self.delayed_by_stream_limit,
            delayed_by_connect_limit: self.delayed_by_connect_limit,
        }
    }

    /// An example message of each error kind the run had.
    fn error_examples(&self, all: &Totals) -> BTreeMap<String, String> {
        self.examples
            .iter()
            .filter(|(k, _)| all.errors[k.index()] > 0)
            .map(|(k, m)| (k.as_str().to_string(), m.clone()))
            .collect()
    }

    fn iterations(&self) -> Iterations {
        Iterations {
            completed: self.iterations_completed,
            warmup: self.warmup_iterations,
            dropped: self.iterations_dropped,
            delayed_by_max_in_flight: self.delayed_by_max_in_flight,
            duration_ms: self.iteration_duration.get().map(LatencySummary::of),
        }
    }

    /// The run's histograms, encoded; `compensated` is its corrected latency (closed model).
    fn run_histograms(&self, all: &Totals, compensated: Option<&LatencyHistogram>) -> Histograms {
        Histograms {
            connect: all.phases.encoded(Phase::Connect),
            tls_handshake: all.phases.encoded(Phase::TlsHandshake),
            waiting: all.phases.encoded(Phase::Waiting),
            receiving: all.phases.encoded(Phase::Receiving),
            iteration_duration: encode(&self.iteration_duration),
            latency_compensated: compensated.map(encode_nonempty).unwrap_or_default(),
            ..stream_histograms(
                &all.stream_series,
                &all.latency,
                &all.service,
                &all.lag,
                &all.server,
            )
        }
    }
}

/// How the run stopped, and whether that interrupted it. A threshold's abort cuts the run
/// short, but what it measured is honest: not an interruption (the failed threshold makes
/// the run fail).
fn stop_of(end: Option<&RecordEnd>) -> (StopReason, bool) {
    match end {
        Some(e) => (
            e.stop,
            matches!(e.stop, StopReason::Signal | StopReason::Crashed),
        ),
        None => (StopReason::Crashed, true),
    }
}

/// The hint of each error kind the run had.
fn error_hints(all: &Totals) -> BTreeMap<String, String> {
    ErrorKind::ALL
        .iter()
        .filter(|k| all.errors[k.index()] > 0)
        .map(|k| (k.as_str().to_string(), k.hint().to_string()))
        .collect()
}

/// The run's data sets with what it used of each (nothing counted: a record from before
/// data use was recorded, or a run that did not end).
fn data_sets_used(
    meta: &RecordMeta,
    end: Option<&RecordEnd>,
) -> Vec<loadlab_metrics::data_use::DataSetUse> {
    meta.data_sets
        .iter()
        .enumerate()
        .map(
            |(i, d): (usize, &crate::DataSetInfo)| loadlab_metrics::data_use::DataSetUse {
                name: d.name.clone(),
                rows: d.rows,
                pick: d.pick.clone(),
                split: d.split,
                used: end
                    .and_then(|e| e.data_use.get(i))
                    .copied()
                    .unwrap_or_default(),
            },
        )
        .collect()
}

/// When the run began: an imported run's start is its earliest request's, kept to the ms the
/// file gives (a short run's rate depends on it); a native run's, to the second.
fn started_at(meta: &RecordMeta) -> String {
    let whole = rfc3339(from_unix_seconds(meta.start_unix_s));
    if meta.imported.is_none() {
        return whole;
    }
    let ms = (meta.start_unix_s * 1000.0).round() as i64;
    let at = rfc3339(from_unix_seconds(ms.div_euclid(1000) as f64));
    match at.strip_suffix('Z') {
        Some(s) => format!("{s}.{:03}Z", ms.rem_euclid(1000)),
        None => whole,
    }
}
