//! The two streams of a record, line by line: histograms in the HdrHistogram interval-log
//! format (`intervals.hlog`, readable by HdrHistogram's own tools) and counters as JSON Lines
//! (`counters.jsonl`). One interval is its histogram lines followed by its counters line; a
//! counters line is written last, so a complete counters line means a complete interval.

use loadlab_metrics::resources::Sample;
use loadlab_metrics::result::{decode_histogram, HistogramEncoder};
use loadlab_metrics::{ErrorKind, Phase, Protocol};
use loadlab_metrics::{IntervalDelta, StepDelta};
use loadlab_metrics::{LatencyHistogram, LazyHistogram};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One interval of a run: when it was and what happened in it.
#[derive(Debug, Clone, PartialEq)]
pub struct IntervalRecord {
    /// 0, 1, 2... in time order.
    pub index: u32,
    /// Start, in seconds since the plan's start.
    pub start_s: f64,
    pub length_s: f64,
    /// Inside the warm-up: counted, but kept out of every statistic.
    pub warmup: bool,
    pub delta: IntervalDelta,
    /// The monitor's samples that ended in this interval (usually one; none when nothing is
    /// monitored), times since the plan's t = 0.
    pub resources: Vec<RecordedSample>,
}

/// A resource sample as the record keeps it: in a merged record, each segment's samples
/// stay apart (their hosts differ), tagged with the segment that took them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecordedSample {
    /// The segment that took it (merged records only).
    #[serde(default, rename = "seg", skip_serializing_if = "Option::is_none")]
    pub segment: Option<u32>,
    #[serde(flatten)]
    pub sample: Sample,
}

/// A histogram series of a step, as tagged in the interval log (`latency.s3`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Series {
    Latency,
    Service,
    Lag,
    Server,
    Phase(Phase),
    Session,
    FirstMessage,
    Stream(loadlab_metrics::StreamTime),
    StreamEvents,
}

const SERIES: [(Series, &str); 15] = [
    (Series::Latency, "latency"),
    (Series::Service, "service_time"),
    (Series::Lag, "lag"),
    (Series::Server, "server_latency"),
    (Series::Phase(Phase::Connect), "connect"),
    (Series::Phase(Phase::TlsHandshake), "tls_handshake"),
    (Series::Phase(Phase::Waiting), "waiting"),
    (Series::Phase(Phase::Receiving), "receiving"),
    (Series::Session, "session"),
    (Series::FirstMessage, "first_message"),
    (Series::Stream(loadlab_metrics::StreamTime::Ttft), "ttft"),
    (Series::Stream(loadlab_metrics::StreamTime::Itl), "itl"),
    (Series::Stream(loadlab_metrics::StreamTime::Tpot), "tpot"),
    (
        Series::Stream(loadlab_metrics::StreamTime::E2e),
        "stream_e2e",
    ),
    (Series::StreamEvents, "stream_events"),
];

const SCHEDULER_LAG_TAG: &str = "scheduler_lag";
const PAUSE_TAG: &str = "generator_pause";
const ITERATION_TAG: &str = "iteration_duration";

fn series_of(step: &StepDelta, s: Series) -> &LazyHistogram {
    match s {
        Series::Latency => &step.latency,
        Series::Service => &step.service,
        Series::Lag => &step.lag,
        Series::Server => &step.server,
        Series::Phase(p) => step.phases.get(p),
        Series::Session => &step.session,
        Series::FirstMessage => &step.first_message,
        Series::Stream(t) => step.stream_series.get(t),
        Series::StreamEvents => &step.stream_series.events,
    }
}

fn series_of_mut(step: &mut StepDelta, s: Series) -> &mut LazyHistogram {
    match s {
        Series::Latency => &mut step.latency,
        Series::Service => &mut step.service,
        Series::Lag => &mut step.lag,
        Series::Server => &mut step.server,
        Series::Phase(p) => step.phases.get_mut(p),
        Series::Session => &mut step.session,
        Series::FirstMessage => &mut step.first_message,
        Series::Stream(loadlab_metrics::StreamTime::Ttft) => &mut step.stream_series.ttft,
        Series::Stream(loadlab_metrics::StreamTime::Itl) => &mut step.stream_series.itl,
        Series::Stream(loadlab_metrics::StreamTime::Tpot) => &mut step.stream_series.tpot,
        Series::Stream(loadlab_metrics::StreamTime::E2e) => &mut step.stream_series.e2e,
        Series::StreamEvents => &mut step.stream_series.events,
    }
}

/// The interval log's header: start time, units, and which tag is which step.
pub fn hlog_header(start_unix_s: f64, legend: &[String]) -> String {
    let mut out = String::new();
    out.push_str("#loadlab run record: per-interval histograms, values in microseconds\n");
    out.push_str("#untagged: latency of all steps; Tag=<series>.s<N>: step N; series: latency, service_time, lag, server_latency, connect, tls_handshake, waiting, receiving, session (WebSocket sessions), first_message (gRPC server streams: call start to first message), ttft, itl, tpot, stream_e2e (streamed responses: time to first token, each inter-token gap, time per output token, end to end), stream_events (events per stream: counts, not µs); Tag=iteration_duration: iterations of all flows; Tag=scheduler_lag: the generator's scheduler; Tag=generator_pause: the pause probe's lateness\n");
    for line in legend {
        out.push('#');
        out.push_str(line);
        out.push('\n');
    }
    out.push_str(&format!(
        "#[StartTime: {start_unix_s:.3} (seconds since epoch)]\n#[BaseTime: {start_unix_s:.3} (seconds since epoch)]\n#[MaxValueDivisor: 1000.000]\n"
    ));
    out.push_str("\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"\n");
    out
}

fn hlog_line(
    encoder: &mut HistogramEncoder,
    out: &mut String,
    tag: Option<&str>,
    r: &IntervalRecord,
    h: &LatencyHistogram,
) {
    let encoded = encoder.encode(h);
    hlog_line_encoded(out, tag, r, h.max(), &encoded);
}

fn hlog_line_encoded(
    out: &mut String,
    tag: Option<&str>,
    r: &IntervalRecord,
    max: u64,
    encoded: &str,
) {
    use std::fmt::Write;
    if let Some(tag) = tag {
        out.push_str("Tag=");
        out.push_str(tag);
        out.push(',');
    }
    let _ = writeln!(
        out,
        "{:.3},{:.3},{:.3},{}",
        r.start_s,
        r.length_s,
        max as f64 / 1000.0,
        encoded
    );
}

/// The interval's histogram lines (empty series are left out).
pub fn hlog_lines(r: &IntervalRecord) -> String {
    hlog_lines_with(&mut HistogramEncoder::new(), r)
}

fn hlog_lines_with(encoder: &mut HistogramEncoder, r: &IntervalRecord) -> String {
    let mut out = String::new();
    let all = r.delta.latency();
    // With one step holding values, the untagged line and that step's latency line are the
    // same histogram: it is encoded (deflated) once.
    let mut shared: Option<(&LatencyHistogram, String)> = None;
    if let Some(h) = all.get() {
        let encoded = encoder.encode(h);
        hlog_line_encoded(&mut out, None, r, h.max(), &encoded);
        if matches!(all, std::borrow::Cow::Borrowed(_)) {
            shared = Some((h, encoded));
        }
    }
    for (i, step) in r.delta.steps.iter().enumerate() {
        for (series, name) in SERIES {
            if let Some(h) = series_of(step, series).get() {
                let tag = format!("{name}.s{i}");
                match &shared {
                    Some((same, encoded)) if std::ptr::eq(*same, h) => {
                        hlog_line_encoded(&mut out, Some(&tag), r, h.max(), encoded)
                    }
                    _ => hlog_line(encoder, &mut out, Some(&tag), r, h),
                }
            }
        }
    }
    if let Some(h) = r.delta.iteration_duration.get() {
        hlog_line(encoder, &mut out, Some(ITERATION_TAG), r, h);
    }
    if let Some(h) = r.delta.scheduler_lag.get() {
        hlog_line(encoder, &mut out, Some(SCHEDULER_LAG_TAG), r, h);
    }
    if let Some(h) = r.delta.pauses.get() {
        hlog_line(encoder, &mut out, Some(PAUSE_TAG), r, h);
    }
    out
}

/// One parsed histogram line of the interval log.
#[derive(Debug, Clone)]
pub struct HlogEntry {
    pub tag: Option<String>,
    /// Start in ms since the log's base time (rounded as written).
    pub start_ms: i64,
    pub encoded: String,
}

/// Parses a histogram line; `None` for comments, headers and anything malformed.
pub fn parse_hlog_line(line: &str) -> Option<HlogEntry> {
    if line.starts_with('#') || line.starts_with('"') || line.is_empty() {
        return None;
    }
    let (tag, rest) = match line.strip_prefix("Tag=") {
        Some(t) => {
            let (tag, rest) = t.split_once(',')?;
            (Some(tag.to_string()), rest)
        }
        None => (None, line),
    };
    let mut fields = rest.splitn(4, ',');
    let start: f64 = fields.next()?.parse().ok()?;
    let _length: f64 = fields.next()?.parse().ok()?;
    let _max: f64 = fields.next()?.parse().ok()?;
    let encoded = fields.next()?.trim_end().to_string();
    if encoded.is_empty() || !start.is_finite() {
        return None;
    }
    Some(HlogEntry {
        tag,
        start_ms: (start * 1000.0).round() as i64,
        encoded,
    })
}

/// Puts a histogram line's values into the interval it belongs to. Unknown tags (from a
/// newer loadlab) and the untagged whole-run line (derivable from the steps) are skipped.
pub fn apply_hlog_entry(delta: &mut IntervalDelta, entry: &HlogEntry) -> bool {
    let Some(tag) = entry.tag.as_deref() else {
        return true;
    };
    let Some(h) = decode_histogram(&entry.encoded) else {
        return false;
    };
    if tag == SCHEDULER_LAG_TAG {
        delta.scheduler_lag.add_histogram(&h);
        return true;
    }
    if tag == ITERATION_TAG {
        delta.iteration_duration.add_histogram(&h);
        return true;
    }
    if tag == PAUSE_TAG {
        delta.pauses.add_histogram(&h);
        return true;
    }
    let Some((name, step)) = tag.rsplit_once(".s") else {
        return true;
    };
    let (Some((series, _)), Ok(step)) = (
        SERIES.iter().find(|(_, n)| *n == name),
        step.parse::<usize>(),
    ) else {
        return true;
    };
    if step >= delta.steps.len() {
        if step > 65_535 {
            return false;
        }
        delta.steps.resize(step + 1, StepDelta::default());
    }
    series_of_mut(&mut delta.steps[step], *series).add_histogram(&h);
    true
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

fn is_zero_f64(x: &f64) -> bool {
    *x == 0.0
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// A step's counters in a counters line (every field optional: most are zero).
#[derive(Debug, Default, Serialize, Deserialize, PartialEq)]
struct StepCounters {
    #[serde(default, skip_serializing_if = "is_zero")]
    n: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    failed: u64,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    errors: BTreeMap<String, u64>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    status: BTreeMap<u16, u64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    checks: Vec<u64>,
    #[serde(default, skip_serializing_if = "is_zero")]
    tx: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    rx: u64,
    /// The slowest traced requests.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    ex: Vec<loadlab_metrics::SlowRequest>,
    /// WebSocket messages, their bytes and close codes (WebSocket steps only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    ws: Option<loadlab_metrics::ws::WsLine>,
    /// gRPC calls by status, messages and their bytes (gRPC steps only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    grpc: Option<loadlab_metrics::grpc::GrpcLine>,
    /// Streams, events, tokens and good streams (steps with `stream:` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    stream: Option<loadlab_metrics::stream::StreamLine>,
}

/// `counters.jsonl`: one line per interval.
#[derive(Debug, Serialize, Deserialize, PartialEq)]
struct CountersLine {
    i: u32,
    t: f64,
    len: f64,
    #[serde(default, skip_serializing_if = "is_false")]
    warmup: bool,
    #[serde(default)]
    active: u64,
    /// The most VUs active at once in the interval (closed model).
    #[serde(default, skip_serializing_if = "is_zero")]
    active_max: u64,
    #[serde(default)]
    in_flight: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    iterations: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    dropped: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    delayed: u64,
    /// Requests that waited for a stream slot on a shared connection.
    #[serde(default, skip_serializing_if = "is_zero")]
    stream_waits: u64,
    /// Requests that waited for a connection being opened (enough were already).
    #[serde(default, skip_serializing_if = "is_zero")]
    connect_waits: u64,
    /// Connections opened, per origin: protocol -> count.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    conns: Vec<BTreeMap<String, u64>>,
    #[serde(default)]
    cpu_s: f64,
    /// Worker threads' run-queue wait and times scheduled (`schedstat`).
    #[serde(default, skip_serializing_if = "is_zero_f64")]
    run_delay_s: f64,
    #[serde(default, skip_serializing_if = "is_zero")]
    slices: u64,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    data_refused: Vec<u64>,
    steps: Vec<StepCounters>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    examples: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    res: Vec<RecordedSample>,
}

/// Turns intervals into the lines of a record's two files (its histograms' hlog lines, its
/// counters line), each error kind's example message written once, with the first interval
/// that has one: what a local record and an uploaded one both write.
#[derive(Debug, Default)]
pub struct IntervalLines {
    examples_seen: Vec<ErrorKind>,
    /// Kept from interval to interval: a fresh encoder costs more than the encoding.
    encoder: HistogramEncoder,
}

impl IntervalLines {
    /// The interval's hlog lines and counters line.
    pub fn of(&mut self, interval: &IntervalRecord) -> (String, String) {
        let new: Vec<(ErrorKind, String)> = interval
            .delta
            .error_examples
            .iter()
            .filter(|(k, _)| !self.examples_seen.contains(k))
            .cloned()
            .collect();
        self.examples_seen.extend(new.iter().map(|(k, _)| *k));
        (
            hlog_lines_with(&mut self.encoder, interval),
            counters_line(interval, &new),
        )
    }
}

/// The interval's counters line (with its newline). `examples` are the error messages not
/// seen in earlier intervals.
pub fn counters_line(r: &IntervalRecord, examples: &[(ErrorKind, String)]) -> String {
    let d = &r.delta;
    let steps = d
        .steps
        .iter()
        .map(|s| StepCounters {
            n: s.requests,
            failed: s.failed,
            errors: ErrorKind::ALL
                .iter()
                .filter(|k| s.errors[k.index()] > 0)
                .map(|k| (k.as_str().to_string(), s.errors[k.index()]))
                .collect(),
            status: s.statuses.iter().copied().collect(),
            checks: if s.check_failures.iter().any(|&n| n > 0) {
                s.check_failures.clone()
            } else {
                Vec::new()
            },
            tx: s.bytes_sent,
            rx: s.bytes_received,
            ex: s
                .exemplars
                .iter()
                .map(|e| {
                    let mut e = *e;
                    e.at_ms.get_or_insert((r.start_s * 1000.0).round() as u64);
                    loadlab_metrics::SlowRequest::from(&e)
                })
                .collect(),
            ws: (!s.ws.is_empty()).then(|| loadlab_metrics::ws::WsLine::from(&s.ws)),
            grpc: (!s.grpc.is_empty()).then(|| loadlab_metrics::grpc::GrpcLine::from(&s.grpc)),
            stream: (!s.stream.is_empty())
                .then(|| loadlab_metrics::stream::StreamLine::from(&s.stream)),
        })
        .collect();
    let line = CountersLine {
        i: r.index,
        t: round_us(r.start_s),
        len: round_us(r.length_s),
        warmup: r.warmup,
        active: d.active,
        active_max: d.active_max,
        in_flight: d.in_flight,
        iterations: d.iterations_completed,
        dropped: d.iterations_dropped,
        delayed: d.delayed_by_max_in_flight,
        stream_waits: d.delayed_by_stream_limit,
        connect_waits: d.delayed_by_connect_limit,
        conns: d
            .connections
            .iter()
            .map(|counts| {
                Protocol::ALL
                    .iter()
                    .filter(|p| counts[p.index()] > 0)
                    .map(|p| (p.as_str().to_string(), counts[p.index()]))
                    .collect()
            })
            .collect(),
        cpu_s: round_us(d.cpu_seconds),
        run_delay_s: round_us(d.run_delay_seconds),
        slices: d.run_slices,
        data_refused: d.data_refused.clone(),
        steps,
        examples: examples
            .iter()
            .map(|(k, m)| (k.as_str().to_string(), m.clone()))
            .collect(),
        res: r.resources.clone(),
    };
    serde_json::to_string(&line).expect("a counters line serializes") + "\n"
}

fn round_us(s: f64) -> f64 {
    (s * 1e6).round() / 1e6
}

/// Parses a counters line into an interval without histograms (`None`: malformed or cut off).
pub fn parse_counters_line(line: &str) -> Option<IntervalRecord> {
    let c: CountersLine = serde_json::from_str(line).ok()?;
    if !(c.t.is_finite() && c.len.is_finite() && c.cpu_s.is_finite()) || c.steps.len() > 65_536 {
        return None;
    }
    let steps = c
        .steps
        .into_iter()
        .map(|s| {
            let mut step = StepDelta {
                requests: s.n,
                failed: s.failed,
                check_failures: s.checks,
                bytes_sent: s.tx,
                bytes_received: s.rx,
                ws: s.ws.map(Into::into).unwrap_or_default(),
                grpc: s.grpc.map(Into::into).unwrap_or_default(),
                stream: s.stream.map(Into::into).unwrap_or_default(),
                ..StepDelta::default()
            };
            for (kind, n) in s.errors {
                if let Ok(k) = kind.parse::<ErrorKind>() {
                    step.errors[k.index()] += n;
                }
            }
            step.statuses = s.status.into_iter().collect();
            for e in
                s.ex.iter()
                    .filter_map(loadlab_metrics::SlowRequest::to_exemplar)
            {
                step.exemplars.offer(e);
            }
            step
        })
        .collect();
    Some(IntervalRecord {
        index: c.i,
        start_s: c.t,
        length_s: c.len,
        warmup: c.warmup,
        delta: IntervalDelta {
            steps,
            iterations_completed: c.iterations,
            iterations_dropped: c.dropped,
            delayed_by_max_in_flight: c.delayed,
            delayed_by_stream_limit: c.stream_waits,
            delayed_by_connect_limit: c.connect_waits,
            connections: c
                .conns
                .iter()
                .map(|by_name| {
                    let mut counts = [0; Protocol::COUNT];
                    for (name, n) in by_name {
                        if let Ok(p) = name.parse::<Protocol>() {
                            counts[p.index()] += n;
                        }
                    }
                    counts
                })
                .collect(),
            data_refused: c.data_refused,
            cpu_seconds: c.cpu_s,
            run_delay_seconds: if c.run_delay_s.is_finite() {
                c.run_delay_s.max(0.0)
            } else {
                0.0
            },
            run_slices: c.slices,
            active: c.active,
            active_max: c.active_max,
            in_flight: c.in_flight,
            error_examples: c
                .examples
                .into_iter()
                .filter_map(|(k, m)| Some((k.parse::<ErrorKind>().ok()?, m)))
                .collect(),
            ..IntervalDelta::default()
        },
        resources: c.res,
    })
}

/// The interval's start in ms, as its histogram lines carry it.
pub fn start_ms(r: &IntervalRecord) -> i64 {
    (r.start_s * 1000.0).round() as i64
}
