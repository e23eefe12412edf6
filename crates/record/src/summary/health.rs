//! Whether a run's figures can be trusted, judged when it is summarised: why it stopped
//! early, whether the generator (its CPU, its timing, this machine's files and ports) or a
//! data set ran out, and what the monitor's samples and the open model's intervals say about
//! the target.

use super::scopes::{summary_of, Totals};
use super::Summarizer;
use crate::disturbance::{
    attribute, generator_delay, DelayMeasure, Floors, GeneratorDelay, GeneratorEvidence,
    GeneratorLoad, DISTORTION_SHARE,
};
use crate::judge::{judge_resources, overload, shares_host, LoadEvidence, ResourceJudgement};
use crate::meta::{RecordEnd, RecordMeta};
use loadlab_metrics::resources::Resources;
use loadlab_metrics::result::{Generator, LatencySummary, PauseSummary, StopReason};
use loadlab_metrics::validity::{InvalidKind, InvalidReason, TargetVerdict, Validity};
use loadlab_metrics::ErrorKind;
use loadlab_metrics::LazyHistogram;

/// What a run's summary says about whether it can be trusted.
#[derive(Default)]
pub(super) struct Judgement {
    pub validity: Validity,
    pub verdicts: Vec<TargetVerdict>,
    pub generator: Generator,
    pub resources: Option<Resources>,
}

impl Summarizer {
    /// Judges the run (which stopped for `stop`) from its totals (`all`, served at `rate` per
    /// second): why it is invalid and what its target went through, with the generator's
    /// health and resources the judgement rests on. An imported run is not judged: another
    /// tool's file holds none of the generator's timing.
    pub(super) fn judge(
        &self,
        meta: &RecordMeta,
        end: Option<&RecordEnd>,
        stop: StopReason,
        all: &Totals,
        rate: f64,
    ) -> Judgement {
        if meta.imported.is_some() {
            return Judgement::default();
        }
        let mut validity = self.stop_reasons(meta, stop, end);
        let mut verdicts = Vec::new();
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
                    | InvalidKind::HostDisturbed
                    | InvalidKind::GeneratorSaturated
            )
        });
        verdicts.extend(shares_host(meta, judged.host_load.as_ref(), disturbed));
        validity.reasons.extend(judged.invalid);
        validity.reasons.extend(generator_reasons);
        machine_limits(all, &mut validity);
        // An interrupted run's last intervals say nothing about whether the target kept up.
        if stop == StopReason::Completed {
            verdicts.extend(self.overload(meta, all));
            validity.reasons.extend(self.nothing_measured(meta, all));
        }
        verdicts.extend(judged.verdicts);
        self.data_refusals(meta, &mut validity);
        Judgement {
            validity,
            verdicts,
            generator,
            resources: judged.resources,
        }
    }

    /// Whether the target kept up with the load (judged only on a run that went to its end).
    fn overload(&self, meta: &RecordMeta, all: &Totals) -> Option<TargetVerdict> {
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
        overload(meta, &evidence)
    }

    /// A run that went to its end with no request and no iteration after the warm-up: its
    /// figures are empty, not good (an `iterations:` load that a `--warmup` outlasted).
    fn nothing_measured(&self, meta: &RecordMeta, all: &Totals) -> Option<InvalidReason> {
        if all.requests > 0 || self.iterations_completed > 0 || self.iterations_dropped > 0 {
            return None;
        }
        let during_warmup = self.warmup_requests.max(self.warmup_iterations);
        let message = if during_warmup > 0 {
            format!(
                "nothing was measured: the load ended within the {} s warm-up, which took all its {} request(s) and {} iteration(s); use a shorter --warmup (or `warmup:`), or more iterations",
                meta.warmup_s, self.warmup_requests, self.warmup_iterations
            )
        } else {
            "nothing was measured: no request was sent and no iteration completed".to_string()
        };
        Some(InvalidReason::new(InvalidKind::NothingMeasured, message))
    }

    /// A `unique` data set that ran out stopped VUs: the load was not what the plan said.
    fn data_refusals(&self, meta: &RecordMeta, validity: &mut Validity) {
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
    }
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
        let cpu_percent = self.worker_cpu_percent(threads);
        let lag_p99 = self
            .scheduler_lag
            .get()
            .map_or(0.0, |h| h.value_at_quantile(0.99) as f64 / 1000.0);
        let mut reasons = Vec::new();
        let own_cpu = cpu_percent >= meta.max_cpu_percent;
        let evidence = self.generator_evidence(meta, service);
        // The timer beside the run saw what the workers went through; the one before it is
        // what a record made without it has.
        let host_timer = end.and_then(|e| e.host_timer).or(meta.host_timer);
        let floors = Floors::for_host(host_timer.as_ref());
        let delay = self.worst_generator_delay(&evidence, latency, floors);
        // Its own CPU used up invalidates a run when its timing suffered for it (a run of a
        // few milliseconds spends most of its CPU starting up), or when that was not measured
        // (a record made before the probe existed).
        let measured = !evidence.is_empty() && !latency.is_empty();
        if own_cpu && (delay.is_some() || !measured) {
            reasons.push(saturated_reason(
                cpu_percent,
                threads,
                meta.max_cpu_percent,
                delay.as_ref(),
            ));
        }
        let worker_seconds = self.measured_s * f64::from(threads);
        let run_delay_share = (self.run_slices > 0 && worker_seconds > 0.0)
            .then(|| self.run_delay_seconds / worker_seconds);
        let load = GeneratorLoad {
            own_cpu_used_up: own_cpu,
            cpu_percent,
            run_delay_share,
            host_timer,
        };
        let disturbed = delay
            .as_ref()
            .and_then(|d| attribute(d, load, judged.host_load.as_ref()));
        reasons.extend(timing_reason(
            disturbed, lag_p99, meta, latency, load, judged,
        ));
        let generator = Generator {
            cpu_percent,
            cpu_seconds: self.cpu_seconds,
            cores: meta.cores,
            threads,
            saturated: own_doing(&reasons),
            scheduler_lag_ms_p99: lag_p99,
            batch_window_ms: meta.batch_window_ms,
            reads_at_wakeups: meta.reads_at_wakeups,
            max_rss_bytes: end.map_or(0, |e| e.max_rss_bytes),
            pauses_ms: self.pauses.get().map(PauseSummary::of),
            run_delay_share,
            host_timer,
            delay_floor_ms: host_timer.map(|_| floors.delay_ms()),
            run_delay_per_wakeup_ms: (self.run_slices > 0)
                .then(|| 1000.0 * self.run_delay_seconds / self.run_slices as f64),
            steal_percent: judged
                .host_load
                .as_ref()
                .and_then(|h| h.steal_on_generator_cores),
        };
        (generator, reasons)
    }

    /// The workers' CPU, % of the cores `threads` workers may use.
    fn worker_cpu_percent(&self, threads: u32) -> f64 {
        if self.wall_s > 0.0 {
            100.0 * self.cpu_seconds / (self.wall_s * f64::from(threads))
        } else {
            0.0
        }
    }

    /// The largest delay any of the evidence shows the generator had.
    fn worst_generator_delay(
        &self,
        evidence: &[GeneratorEvidence],
        latency: &LazyHistogram,
        floors: Floors,
    ) -> Option<GeneratorDelay> {
        evidence
            .iter()
            .filter_map(|e| match *e {
                GeneratorEvidence::SendDelay { allowance_ms, .. } => {
                    self.worst_step_send_delay(allowance_ms, floors)
                }
                e => latency.get().and_then(|l| generator_delay(e, l, floors)),
            })
            .max_by(|a, b| a.share().total_cmp(&b.share()))
    }

    /// How late requests were sent, judged step by step: each request's own send delay where
    /// the record has it (else the step's latency against its own service time) at each
    /// percentile. Over all steps together the two percentiles can fall
    /// on different steps' requests (a fast call and a slow stream, half each: p50 of one is
    /// the slowest fast call's latency, of the other its service time), which reads as a
    /// delay the generator never had.
    fn worst_step_send_delay(&self, allowance_ms: f64, floors: Floors) -> Option<GeneratorDelay> {
        self.steps
            .iter()
            .filter_map(|s| {
                let latency = s.latency.get()?;
                let evidence = match s.lag.get() {
                    Some(lag) => GeneratorEvidence::SentLate { lag, allowance_ms },
                    None => GeneratorEvidence::SendDelay {
                        service: s.service.get()?,
                        allowance_ms,
                    },
                };
                generator_delay(evidence, latency, floors)
            })
            .max_by(|a, b| a.share().total_cmp(&b.share()))
    }

    /// The measurement of the generator's delays that fits the load model (`disturbance`).
    fn generator_evidence<'a>(
        &'a self,
        meta: &RecordMeta,
        service: &'a LazyHistogram,
    ) -> Vec<GeneratorEvidence<'a>> {
        if meta.load.model != loadlab_metrics::LoadModel::Open {
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
        let dense = meta.poisson_arrivals() || per_worker * window / 1000.0 >= 1.0;
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
}

/// Requests that failed for want of this machine's file descriptors or local ports: limits
/// of the generator's machine, not errors of the target.
fn machine_limits(all: &Totals, validity: &mut Validity) {
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
}

/// Why the generator's timing makes the run invalid, if it does: disturbed by something
/// else (naming the late scheduler as a consequence), or a scheduler late with no disturbance
/// seen.
fn timing_reason(
    disturbed: Option<InvalidReason>,
    lag_p99: f64,
    meta: &RecordMeta,
    latency: &LazyHistogram,
    load: GeneratorLoad,
    judged: &ResourceJudgement,
) -> Option<InvalidReason> {
    let lag_late = lag_p99 > meta.max_lag_ms && lag_distorts(lag_p99, latency);
    match disturbed {
        Some(mut reason) => {
            if lag_late {
                reason.message.push_str(&format!(
                    "; the scheduler started arrivals late because of it (lag p99 {lag_p99:.1} ms)"
                ));
            }
            Some(reason)
        }
        // Late though its timing was not seen disturbed.
        None if lag_late => Some(late_scheduler_reason(
            lag_p99,
            meta.max_lag_ms,
            latency,
            load,
            judged,
        )),
        None => None,
    }
}

/// Whether the generator saturated by its own doing: its CPU, or a scheduler late while
/// nothing else took the CPU.
fn own_doing(reasons: &[InvalidReason]) -> bool {
    reasons.iter().any(|r| {
        matches!(
            r.kind,
            InvalidKind::GeneratorSaturated | InvalidKind::SchedulerLate
        )
    })
}

/// The generator used up its own CPU: how much, and what its timing suffered for it.
fn saturated_reason(
    cpu_percent: f64,
    threads: u32,
    max_cpu_percent: f64,
    delay: Option<&GeneratorDelay>,
) -> InvalidReason {
    let suffered = delay
        .map(|d| format!(" and its timing suffered: {}", d.words()))
        .unwrap_or_default();
    InvalidReason::new(
        InvalidKind::GeneratorSaturated,
        format!(
            "the load generator was saturated: its workers used {cpu_percent:.0}% of {threads} core(s) (limit {max_cpu_percent:.0}%){suffered}, so measured latency includes time spent waiting for the generator itself; use fewer VUs, a lower rate, more --threads, or a separate machine"
        ),
    )
}

/// Whether a scheduler lag above its bound is also a material share of the latency reported
/// (the rule every other delay is judged by): arrivals are timed from their intended start,
/// so a lag of 10 ms beside a p99 of 326 ms (one arrival of 75 held up once, on a VM) changes
/// neither the numbers nor the offered rate, while 50 ms beside 55 ms is most of each latency.
/// With no latency measured the bound alone decides.
fn lag_distorts(lag_p99: f64, latency: &LazyHistogram) -> bool {
    latency.get().is_none_or(|h| {
        let latency_p99 = h.value_at_quantile(0.99) as f64 / 1000.0;
        lag_p99 > DISTORTION_SHARE * latency_p99
    })
}

/// The scheduler started arrivals late while below its CPU limit (a run of 50 arrivals has
/// no percentile to judge the sends by, yet its lag says it): the cause is found as for any
/// other delay, and only its own doing is "scheduler late".
fn late_scheduler_reason(
    lag_p99: f64,
    max_lag_ms: f64,
    latency: &LazyHistogram,
    load: GeneratorLoad,
    judged: &ResourceJudgement,
) -> InvalidReason {
    let late = GeneratorDelay {
        at: "p99",
        delay_ms: lag_p99,
        latency_ms: latency
            .get()
            .map_or(lag_p99, |h| h.value_at_quantile(0.99) as f64 / 1000.0),
        by: DelayMeasure::SchedulerLag,
    };
    let words = format!(
        "the scheduler started arrivals late: lag p99 {lag_p99:.1} ms exceeds {max_lag_ms:.0} ms, so the offered load was not what the plan said"
    );
    let host = judged.host_load.as_ref();
    match host.and_then(|h| attribute(&late, load, Some(h))) {
        Some(mut reason) => {
            reason.message = format!("{words}; {}", reason.message);
            reason
        }
        None => InvalidReason::new(InvalidKind::SchedulerLate, words),
    }
}
