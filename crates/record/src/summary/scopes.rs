//! The figures of each scope of a run — a step, a group or tag of steps, the whole run —
//! from the steps' measured totals.

use super::Summarizer;
use crate::meta::RecordMeta;
use loadlab_metrics::result::{
    encode_nonempty, Bytes, CheckResult, GroupResult, Histograms, LatencySummary, StepResult,
};
use loadlab_metrics::LazyHistogram;
use loadlab_metrics::StepDelta;
use loadlab_metrics::{Compensation, ErrorKind, Phase, PhaseHistograms};
use std::collections::BTreeMap;

impl Summarizer {
    /// Each step of the record with its measured figures (zeros for a step that never ran).
    pub(super) fn step_results(
        &self,
        meta: &RecordMeta,
        compensation: Option<&Compensation>,
    ) -> Vec<StepResult> {
        meta.steps
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
                latency_compensated_ms: compensated_summary(&s.latency, compensation),
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
                    session: encode(&s.session),
                    first_message: encode(&s.first_message),
                    ..stream_histograms(&s.stream_series, &s.latency, &s.service, &s.lag, &s.server)
                },
                slowest: s
                    .exemplars
                    .iter()
                    .map(loadlab_metrics::SlowRequest::from)
                    .collect(),
                ws: (!s.ws.is_empty() || s.session.get().is_some())
                    .then(|| loadlab_metrics::WsResult::of(&s.ws, summary_of(&s.session))),
                grpc: (!s.grpc.is_empty() || s.first_message.get().is_some()).then(|| {
                    loadlab_metrics::GrpcResult::of(&s.grpc, summary_of(&s.first_message))
                }),
                stream: (!s.stream.is_empty()).then(|| {
                    loadlab_metrics::StreamResult::of(&s.stream, &s.stream_series, self.measured_s)
                }),
            })
            .collect()
    }
}

/// Several steps together (the run, a group, a tag).
#[derive(Default)]
pub(super) struct Totals {
    pub requests: u64,
    pub failed: u64,
    pub interrupted: u64,
    pub errors: loadlab_metrics::ErrorCounts,
    pub statuses: BTreeMap<String, u64>,
    pub bytes: Bytes,
    pub latency: LazyHistogram,
    pub service: LazyHistogram,
    pub lag: LazyHistogram,
    pub server: LazyHistogram,
    pub phases: PhaseHistograms,
    pub stream: loadlab_metrics::StreamCounts,
    pub stream_series: loadlab_metrics::StreamSeries,
}

impl Totals {
    pub fn add(&mut self, s: &StepDelta) {
        self.requests += s.requests;
        self.failed += s.failed;
        self.interrupted += s.errors[ErrorKind::Interrupted.index()];
        for (a, b) in self.errors.iter_mut().zip(s.errors.0) {
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
        self.stream.add(&s.stream);
        self.stream_series.add(&s.stream_series);
    }
}

/// Groups or tags: each name with the steps that carry it, in order of first appearance.
pub(super) fn scopes(
    meta: &RecordMeta,
    steps: &[StepDelta],
    compensation: Option<&Compensation>,
    names_of: impl Fn(&loadlab_metrics::StepInfo) -> Vec<String>,
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
            latency_compensated_ms: compensated_summary(&t.latency, compensation),
            service_time_ms: summary_of(&t.service),
            server_latency_ms: t.server.get().map(LatencySummary::of),
            histograms: histograms_of(&t.latency, &t.service, &t.lag, &t.server),
        })
        .collect()
}

/// A scope's latency compensated on the closed model's schedule (`None` without one).
fn compensated_summary(
    h: &LazyHistogram,
    compensation: Option<&Compensation>,
) -> Option<LatencySummary> {
    let c = compensation?;
    h.get().map(|raw| {
        LatencySummary::of(&loadlab_metrics::compensation::compensate(
            raw,
            c.interval_us(),
        ))
    })
}

pub(super) fn summary_of(h: &LazyHistogram) -> LatencySummary {
    h.get().map(LatencySummary::of).unwrap_or_default()
}

pub(super) fn encode(h: &LazyHistogram) -> String {
    h.get().map(encode_nonempty).unwrap_or_default()
}

pub(super) fn histograms_of(
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

/// [`histograms_of`] with a scope's stream series.
pub(super) fn stream_histograms(
    stream: &loadlab_metrics::StreamSeries,
    latency: &LazyHistogram,
    service: &LazyHistogram,
    lag: &LazyHistogram,
    server: &LazyHistogram,
) -> Histograms {
    Histograms {
        ttft: encode(&stream.ttft),
        itl: encode(&stream.itl),
        tpot: encode(&stream.tpot),
        stream_e2e: encode(&stream.e2e),
        stream_events: encode(&stream.events),
        ..histograms_of(latency, service, lag, server)
    }
}

pub(super) fn error_map(counts: &[u64; ErrorKind::COUNT]) -> BTreeMap<String, u64> {
    ErrorKind::ALL
        .iter()
        .filter(|k| counts[k.index()] > 0)
        .map(|k| (k.as_str().to_string(), counts[k.index()]))
        .collect()
}
