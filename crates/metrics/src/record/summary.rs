//! The one function from a record to its summary (`run.json`): intervals are folded in as
//! they come — while the run goes, when a dead run's record is read back, when segments are
//! merged — and `finish` derives every figure, verdict and validity reason from them.

use super::codec::{IntervalRecord, RecordedSample};
use super::disturbance::{attribute, generator_delay, GeneratorEvidence};
use super::judge::{judge_resources, overload, shares_host, LoadEvidence, ResourceJudgement};
use super::meta::{RecordEnd, RecordMeta};
use crate::delta::StepDelta;
use crate::histogram::LazyHistogram;
use crate::result::{
    encode_nonempty, from_unix_seconds, rfc3339, Bytes, CheckResult, Generator, GroupResult,
    Histograms, IntervalLatency, IntervalStats, Iterations, LagSummary, LatencySummary,
    OriginResult, PauseSummary, Requests, RunResult, StepResult, StopReason, WindowStats, SCHEMA,
    WINDOW_REQUESTS,
};
use crate::validity::{InvalidKind, InvalidReason, Validity};
use crate::{ErrorKind, Phase, PhaseHistograms, Protocol};
use std::collections::BTreeMap;

/// Share of the planned arrivals that may go missing before a run says so.
pub const MAX_UNDELIVERED: f64 = 0.02;

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
    /// False: counters only, no latency histograms (a merge's per-segment table).
    without_histograms: bool,
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

    /// A summarizer that keeps counters, generator health and validity, but no step
    /// histograms (cheap enough to keep one per segment of a large merge).
    pub fn counters_only(step_count: usize) -> Self {
        Self {
            without_histograms: true,
            ..Self::new(step_count)
        }
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
            LazyHistogram::new()
        } else {
            d.latency()
        };
        if !self.without_histograms {
            self.extend_window(r, requests, d.failed(), &latency);
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
        let mut all = Totals::default();
        for s in &self.steps {
            all.add(s);
        }
        let steps: Vec<StepResult> = meta
            .steps
            .iter()
            .zip(
                self.steps
                    .iter()
                    .chain(std::iter::repeat(&StepDelta::default())),
            )
            .map(|(info, s)| StepResult {
                name: info.name.clone(),
                group: info.group.clone(),
                tags: info.tags.clone(),
                requests: s.requests,
                failed: s.failed,
                errors: error_map(&s.errors),
                status_codes: s
                    .statuses
                    .iter()
                    .map(|(c, n)| (c.to_string(), *n))
                    .collect(),
                latency_ms: summary_of(&s.latency),
                service_time_ms: summary_of(&s.service),
                server_latency_ms: s.server.get().map(LatencySummary::of),
                phases_ms: s.phases.summary(),
                checks: info
                    .checks
                    .iter()
                    .enumerate()
                    .map(|(i, c)| CheckResult {
                        check: c.clone(),
                        failed: s.check_failures.get(i).copied().unwrap_or(0),
                    })
                    .collect(),
                bytes: Bytes::over(s.bytes_sent, s.bytes_received, self.measured_s),
                histograms: Histograms {
                    connect: s.phases.encoded(Phase::Connect),
                    tls_handshake: s.phases.encoded(Phase::TlsHandshake),
                    waiting: s.phases.encoded(Phase::Waiting),
                    receiving: s.phases.encoded(Phase::Receiving),
                    ..histograms_of(&s.latency, &s.service, &s.lag, &s.server)
                },
                slowest: s.exemplars.iter().map(crate::SlowRequest::from).collect(),
            })
            .collect();
        let groups = scopes(meta, &self.steps, |info| {
            info.group.iter().cloned().collect()
        });
        let tags = scopes(meta, &self.steps, |info| info.tags.clone());
        let (stop, interrupted) = match end {
            Some(e) => (e.stop, e.stop != StopReason::Completed),
            None => (StopReason::Crashed, true),
        };
        let mut validity = self.stop_reasons(meta, stop, end);
        let mut verdicts = Vec::new();
        let measured = self.measured_s;
        let rate = if measured > 0.0 {
            all.requests as f64 / measured
        } else {
            0.0
        };
        let judged = judge_resources(
            meta,
            &self.samples,
            end.and_then(|e| e.monitor_cpu_percent),
            rate,
        );
        let (generator, generator_reasons) =
            self.generator_health(meta, &judged, &all.latency, &all.service, end);
        let disturbed = generator_reasons.iter().any(|r| {
            matches!(
                r.kind,
                InvalidKind::HostContended
                    | InvalidKind::CpuStolen
                    | InvalidKind::GeneratorSaturated
            )
        });
        verdicts.extend(shares_host(meta, judged.host_load.as_ref(), disturbed));
        validity.reasons.extend(judged.invalid);
        validity.reasons.extend(generator_reasons);
        let fd_errors = all.errors[ErrorKind::FdExhausted.index()];
        if fd_errors > 0 && !validity.has(InvalidKind::FdExhausted) {
            validity.push(
                InvalidKind::FdExhausted,
                format!(
                    "the generator ran out of file descriptors: {fd_errors} request(s) failed with `too many open files` (EMFILE) — a limit of this machine, not a target error; raise the limit (`ulimit -n`, LimitNOFILE) or lower the concurrency"
                ),
            );
        }
        let port_errors = all.errors[ErrorKind::AddrUnavailable.index()];
        if port_errors > 0 && !validity.has(InvalidKind::PortsExhausted) {
            validity.push(
                InvalidKind::PortsExhausted,
                format!(
                    "the generator ran out of local ports: {port_errors} connection(s) failed with `cannot assign requested address` — a limit of this machine, not a target error; keep connections alive, widen net.ipv4.ip_local_port_range, or spread connections over source addresses (--source-addrs)"
                ),
            );
        }
        if !interrupted {
            let (latency, service) = (summary_of(&all.latency), summary_of(&all.service));
            let server = all.server.get().map(LatencySummary::of);
            let evidence = LoadEvidence {
                intervals: &self.intervals,
                iterations: &self.interval_iterations,
                delayed_by_max_in_flight: self.delayed_by_max_in_flight,
                dropped: self.iterations_dropped,
                latency: &latency,
                service: &service,
                server: server.as_ref(),
            };
            verdicts.extend(overload(meta, &evidence));
        }
        verdicts.extend(judged.verdicts);
        for (i, &n) in self
            .data_refused
            .iter()
            .enumerate()
            .filter(|(_, n)| **n > 0)
        {
            let (name, rows) = meta
                .data_sets
                .get(i)
                .map(|d| (d.name.as_str(), d.rows))
                .unwrap_or(("?", 0));
            validity.push(
                InvalidKind::DataExhausted,
                format!(
                    "data set `{name}` (pick: unique) ran out after its {rows} rows: {n} iteration(s) could not take a row and their VUs stopped; add rows, use fewer VUs or iterations, or `pick: sequential`"
                ),
            );
        }
        RunResult {
            schema: SCHEMA.to_string(),
            tool_version: meta.tool_version.clone(),
            name: meta.name.clone(),
            scenario_file: meta.scenario_file.clone(),
            target: meta.target.clone(),
            started_at: rfc3339(from_unix_seconds(meta.start_unix_s)),
            plan_hash: Some(meta.plan_hash.clone()),
            segment: meta.segment,
            valid: validity.is_valid(),
            validity,
            verdicts,
            interrupted,
            stop,
            duration_s: measured,
            warmup_s: meta.warmup_s,
            load: meta.load.clone(),
            requests: Requests {
                total: all.requests,
                ok: all.requests - all.failed,
                failed: all.failed,
                interrupted: all.interrupted,
                rate,
                warmup: self.warmup_requests,
                delayed_by_stream_limit: self.delayed_by_stream_limit,
                delayed_by_connect_limit: self.delayed_by_connect_limit,
            },
            origins: self.origins(meta),
            bytes: Bytes::over(all.bytes.sent, all.bytes.received, measured),
            latency_ms: summary_of(&all.latency),
            service_time_ms: summary_of(&all.service),
            phases_ms: all.phases.summary(),
            vus_max: (meta.load.model == crate::LoadModel::Closed && self.vus_max > 0)
                .then_some(self.vus_max),
            lag_ms: all.lag.get().map(LagSummary::of).unwrap_or_default(),
            server_latency_ms: all.server.get().map(LatencySummary::of),
            errors: error_map(&all.errors),
            error_hints: ErrorKind::ALL
                .iter()
                .filter(|k| all.errors[k.index()] > 0)
                .map(|k| (k.as_str().to_string(), k.hint().to_string()))
                .collect(),
            error_examples: self
                .examples
                .iter()
                .filter(|(k, _)| all.errors[k.index()] > 0)
                .map(|(k, m)| (k.as_str().to_string(), m.clone()))
                .collect(),
            status_codes: all.statuses,
            iterations: Iterations {
                completed: self.iterations_completed,
                warmup: self.warmup_iterations,
                dropped: self.iterations_dropped,
                delayed_by_max_in_flight: self.delayed_by_max_in_flight,
                duration_ms: self.iteration_duration.get().map(LatencySummary::of),
            },
            steps,
            groups,
            tags,
            thresholds: Vec::new(),
            generator,
            intervals: self.intervals.clone(),
            windows: self
                .windows
                .iter()
                .cloned()
                .chain(self.window.as_ref().map(OpenWindow::close))
                .collect(),
            histograms: Histograms {
                connect: all.phases.encoded(Phase::Connect),
                tls_handshake: all.phases.encoded(Phase::TlsHandshake),
                waiting: all.phases.encoded(Phase::Waiting),
                receiving: all.phases.encoded(Phase::Receiving),
                iteration_duration: encode(&self.iteration_duration),
                ..histograms_of(&all.latency, &all.service, &all.lag, &all.server)
            },
            environment: Some(meta.environment.clone()),
            resources: judged.resources,
            segments: Vec::new(),
            clock_skew: None,
            notes: Vec::new(),
        }
    }
}

impl Summarizer {
    /// Why a run that stopped early is a partial result.
    fn stop_reasons(
        &self,
        meta: &RecordMeta,
        stop: StopReason,
        end: Option<&RecordEnd>,
    ) -> Validity {
        let mut validity = Validity::default();
        match (stop, end) {
            (StopReason::Signal, Some(e)) => validity.push(
                InvalidKind::Interrupted,
                format!(
                    "the run was interrupted{} after {:.1} s of {:.0} s planned: this is a partial result",
                    e.signal.as_deref().map(|s| format!(" ({s})")).unwrap_or_default(),
                    self.wall_s,
                    meta.load.planned_duration_s
                ),
            ),
            (StopReason::Crashed, _) | (_, None) => validity.push(
                InvalidKind::Interrupted,
                format!(
                    "the run's process died after {:.0} s (its record has no end): this partial result is the {} complete interval(s) its record held",
                    self.wall_s,
                    self.intervals.len()
                ),
            ),
            _ => {}
        }
        validity
    }

    /// The generator's health, and the reasons it gives to call the run invalid: its own CPU
    /// used up, its timing disturbed by other processes or the hypervisor (judged from what
    /// its threads went through, against the latencies reported: `disturbance`), or its
    /// scheduler late for reasons of its own.
    fn generator_health(
        &self,
        meta: &RecordMeta,
        judged: &ResourceJudgement,
        latency: &LazyHistogram,
        service: &LazyHistogram,
        end: Option<&RecordEnd>,
    ) -> (Generator, Vec<InvalidReason>) {
        let threads = meta.threads.max(1);
        let cpu_percent = if self.wall_s > 0.0 {
            100.0 * self.cpu_seconds / (self.wall_s * f64::from(threads))
        } else {
            0.0
        };
        let lag_p99 = self
            .scheduler_lag
            .get()
            .map_or(0.0, |h| h.value_at_quantile(0.99) as f64 / 1000.0);
        let mut reasons = Vec::new();
        let own_cpu = cpu_percent >= meta.max_cpu_percent;
        let evidence = self.generator_evidence(meta, service);
        let delay = latency.get().and_then(|l| {
            evidence
                .iter()
                .filter_map(|e| generator_delay(*e, l))
                .max_by(|a, b| a.share().total_cmp(&b.share()))
        });
        // Its own CPU used up invalidates a run when its timing suffered for it (a run of a
        // few milliseconds spends most of its CPU starting up), or when that was not measured
        // (a record made before the probe existed).
        let measured = !evidence.is_empty() && !latency.is_empty();
        if own_cpu && (delay.is_some() || !measured) {
            let suffered = delay
                .as_ref()
                .map(|d| format!(" and its timing suffered: {}", d.words()))
                .unwrap_or_default();
            reasons.push(InvalidReason::new(
                InvalidKind::GeneratorSaturated,
                format!(
                    "the load generator was saturated: its workers used {cpu_percent:.0}% of {threads} core(s) (limit {:.0}%){suffered}, so measured latency includes time spent waiting for the generator itself; use fewer VUs, a lower rate, more --threads, or a separate machine",
                    meta.max_cpu_percent
                ),
            ));
        }
        let disturbed = delay
            .as_ref()
            .and_then(|d| attribute(d, own_cpu, judged.host_load.as_ref()));
        let lag_late = lag_p99 > meta.max_lag_ms;
        match disturbed {
            Some(mut reason) => {
                if lag_late {
                    reason.message.push_str(&format!(
                        "; the scheduler started arrivals late because of it (lag p99 {lag_p99:.1} ms)"
                    ));
                }
                reasons.push(reason);
            }
            None if lag_late => reasons.push(InvalidReason::new(
                InvalidKind::SchedulerLate,
                format!(
                    "the scheduler started arrivals late: lag p99 {lag_p99:.1} ms exceeds {:.0} ms, so the offered load was not what the plan said",
                    meta.max_lag_ms
                ),
            )),
            None => {}
        }
        let worker_seconds = self.measured_s * f64::from(threads);
        let generator = Generator {
            cpu_percent,
            cpu_seconds: self.cpu_seconds,
            cores: meta.cores,
            threads,
            // Its own doing: its CPU, or a scheduler late while nothing else took the CPU.
            saturated: reasons.iter().any(|r| {
                matches!(
                    r.kind,
                    InvalidKind::GeneratorSaturated | InvalidKind::SchedulerLate
                )
            }),
            scheduler_lag_ms_p99: lag_p99,
            batch_window_ms: meta.batch_window_ms,
            reads_at_wakeups: meta.reads_at_wakeups,
            max_rss_bytes: end.map_or(0, |e| e.max_rss_bytes),
            pauses_ms: self.pauses.get().map(PauseSummary::of),
            run_delay_share: (self.run_slices > 0 && worker_seconds > 0.0)
                .then(|| self.run_delay_seconds / worker_seconds),
            run_delay_per_wakeup_ms: (self.run_slices > 0)
                .then(|| 1000.0 * self.run_delay_seconds / self.run_slices as f64),
            steal_percent: judged
                .host_load
                .as_ref()
                .and_then(|h| h.steal_on_generator_cores),
        };
        (generator, reasons)
    }

    /// The measurement of the generator's delays that fits the load model (`disturbance`).
    fn generator_evidence<'a>(
        &'a self,
        meta: &RecordMeta,
        service: &'a LazyHistogram,
    ) -> Vec<GeneratorEvidence<'a>> {
        if meta.load.model != crate::LoadModel::Open {
            return self
                .pauses
                .get()
                .map(GeneratorEvidence::Probe)
                .into_iter()
                .collect();
        }
        // The batch window adds lag by design where arrivals come closer than it (a worker's
        // share of a constant rate, or any Poisson load); sparser arrivals are woken for
        // exactly, and their lag is all the generator's.
        let window = meta.batch_window_ms.unwrap_or(0.0);
        let per_worker = meta.load.peak_rate.unwrap_or(0.0) / f64::from(meta.threads.max(1));
        let poisson = meta.scenario["load"]["poisson"].as_bool().unwrap_or(false);
        let dense = poisson || per_worker * window / 1000.0 >= 1.0;
        let allowance_ms = if dense { window } else { 0.0 };
        // The scheduler's own lag always counts; latency minus service time only where no
        // arrival waited for the target (`max_in_flight`, the connection limit, a stream).
        let held = self.delayed_by_max_in_flight > 0
            || self.delayed_by_connect_limit > 0
            || self.delayed_by_stream_limit > 0;
        let mut evidence: Vec<GeneratorEvidence<'a>> = self
            .scheduler_lag
            .get()
            .map(|lag| GeneratorEvidence::SchedulerLag { lag, allowance_ms })
            .into_iter()
            .collect();
        if let Some(service) = service.get().filter(|_| !held) {
            evidence.push(GeneratorEvidence::SendDelay {
                service,
                allowance_ms,
            });
        }
        evidence
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
}

/// Several steps together (the run, a group, a tag).
#[derive(Default)]
struct Totals {
    requests: u64,
    failed: u64,
    interrupted: u64,
    errors: [u64; ErrorKind::COUNT],
    statuses: BTreeMap<String, u64>,
    bytes: Bytes,
    latency: LazyHistogram,
    service: LazyHistogram,
    lag: LazyHistogram,
    server: LazyHistogram,
    phases: PhaseHistograms,
}

impl Totals {
    fn add(&mut self, s: &StepDelta) {
        self.requests += s.requests;
        self.failed += s.failed;
        self.interrupted += s.errors[ErrorKind::Interrupted.index()];
        for (a, b) in self.errors.iter_mut().zip(s.errors) {
            *a += b;
        }
        for (code, n) in &s.statuses {
            *self.statuses.entry(code.to_string()).or_default() += n;
        }
        self.bytes.sent += s.bytes_sent;
        self.bytes.received += s.bytes_received;
        self.latency.add(&s.latency);
        self.service.add(&s.service);
        self.lag.add(&s.lag);
        self.server.add(&s.server);
        self.phases.add(&s.phases);
    }
}

/// Groups or tags: each name with the steps that carry it, in order of first appearance.
fn scopes(
    meta: &RecordMeta,
    steps: &[StepDelta],
    names_of: impl Fn(&crate::StepInfo) -> Vec<String>,
) -> Vec<GroupResult> {
    let mut order: Vec<(String, Totals)> = Vec::new();
    for (info, s) in meta.steps.iter().zip(steps) {
        for name in names_of(info) {
            let i = match order.iter().position(|(n, _)| *n == name) {
                Some(i) => i,
                None => {
                    order.push((name, Totals::default()));
                    order.len() - 1
                }
            };
            order[i].1.add(s);
        }
    }
    order
        .into_iter()
        .map(|(name, t)| GroupResult {
            name,
            requests: t.requests,
            failed: t.failed,
            latency_ms: summary_of(&t.latency),
            service_time_ms: summary_of(&t.service),
            server_latency_ms: t.server.get().map(LatencySummary::of),
            histograms: histograms_of(&t.latency, &t.service, &t.lag, &t.server),
        })
        .collect()
}

fn summary_of(h: &LazyHistogram) -> LatencySummary {
    h.get().map(LatencySummary::of).unwrap_or_default()
}

fn encode(h: &LazyHistogram) -> String {
    h.get().map(encode_nonempty).unwrap_or_default()
}

fn histograms_of(
    latency: &LazyHistogram,
    service: &LazyHistogram,
    lag: &LazyHistogram,
    server: &LazyHistogram,
) -> Histograms {
    Histograms {
        latency: encode(latency),
        service_time: encode(service),
        lag: encode(lag),
        server_latency: encode(server),
        ..Histograms::default()
    }
}

pub(crate) fn error_map(counts: &[u64; ErrorKind::COUNT]) -> BTreeMap<String, u64> {
    ErrorKind::ALL
        .iter()
        .filter(|k| counts[k.index()] > 0)
        .map(|k| (k.as_str().to_string(), counts[k.index()]))
        .collect()
}
