//! The run result: the versioned JSON record of one run (`loadlab.run.v1`).
//!
//! Field names are a public interface: reports, baselines, studies and users' scripts read
//! them. The JSON Schema lives in `docs/schema/run.v1.json` and a test checks results against it.

use crate::histogram::LatencyHistogram;
use crate::{ErrorKind, IntervalSnapshot, Recorder, StepInfo};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::{Duration, SystemTime};

pub const SCHEMA: &str = "loadlab.run.v1";

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RunResult {
    pub schema: String,
    pub tool_version: String,
    pub name: String,
    pub scenario_file: Option<String>,
    pub target: Option<String>,
    pub started_at: String,
    pub valid: bool,
    pub invalid_reasons: Vec<String>,
    /// Stopped early (Ctrl-C, target unreachable): the numbers cover only what ran.
    pub interrupted: bool,
    /// Measured time, after warm-up.
    pub duration_s: f64,
    pub warmup_s: f64,
    pub load: LoadInfo,
    pub requests: Requests,
    pub latency_ms: LatencySummary,
    pub service_time_ms: LatencySummary,
    pub lag_ms: LagSummary,
    pub errors: BTreeMap<String, u64>,
    pub error_hints: BTreeMap<String, String>,
    pub error_examples: BTreeMap<String, String>,
    pub status_codes: BTreeMap<String, u64>,
    pub iterations: Iterations,
    pub steps: Vec<StepResult>,
    pub groups: Vec<GroupResult>,
    pub thresholds: Vec<ThresholdResult>,
    pub generator: Generator,
    pub intervals: Vec<IntervalStats>,
    /// Base64 HdrHistogram V2 (deflate) encodings, for exact merging across runs.
    pub histograms: Histograms,
    /// The generator machine (CPU, cores, memory, OS); absent in results written before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub environment: Option<crate::Environment>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct LoadInfo {
    pub model: String,
    pub planned_duration_s: f64,
    pub max_vus: Option<u32>,
    pub peak_rate: Option<f64>,
    pub planned_arrivals: Option<f64>,
    pub max_in_flight: Option<u32>,
    pub count: Option<u64>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct Requests {
    pub total: u64,
    pub ok: u64,
    pub failed: u64,
    /// Completed requests per second of measured time.
    pub rate: f64,
    /// Requests completed during warm-up (not in any statistic).
    pub warmup: u64,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Default)]
pub struct LatencySummary {
    pub count: u64,
    pub min: f64,
    pub mean: f64,
    pub stdev: f64,
    pub p50: f64,
    pub p90: f64,
    pub p95: f64,
    pub p99: f64,
    pub p999: f64,
    pub max: f64,
}

impl LatencySummary {
    pub fn of(h: &LatencyHistogram) -> Self {
        if h.is_empty() {
            return Self::default();
        }
        let ms = |us: u64| us as f64 / 1000.0;
        let q = |p: f64| ms(h.value_at_quantile(p));
        Self {
            count: h.len(),
            min: ms(h.min()),
            mean: h.mean() / 1000.0,
            stdev: h.stdev() / 1000.0,
            p50: q(0.50),
            p90: q(0.90),
            p95: q(0.95),
            p99: q(0.99),
            p999: q(0.999),
            max: ms(h.max()),
        }
    }

    /// Any percentile from the histogram, for thresholds like `latency.p97`.
    pub fn percentile_of(h: &LatencyHistogram, p: f64) -> f64 {
        h.value_at_quantile(p / 100.0) as f64 / 1000.0
    }
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Default)]
pub struct LagSummary {
    pub p50: f64,
    pub p99: f64,
    pub max: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct Iterations {
    pub completed: u64,
    /// Arrivals that could not start before the run ended.
    pub dropped: u64,
    /// Arrivals that had to wait because `max_in_flight` requests were already open.
    pub delayed_by_max_in_flight: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct StepResult {
    pub name: String,
    pub group: Option<String>,
    pub requests: u64,
    pub failed: u64,
    pub errors: BTreeMap<String, u64>,
    pub status_codes: BTreeMap<String, u64>,
    pub latency_ms: LatencySummary,
    pub service_time_ms: LatencySummary,
    /// Each check of the step with how often it failed (empty when the step has no checks).
    #[serde(default)]
    pub checks: Vec<CheckResult>,
}

/// One `check:` of a step and its failures.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CheckResult {
    /// The check as written, e.g. `status in [200, 201]` or `$.ok == true`.
    pub check: String,
    pub failed: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct GroupResult {
    pub name: String,
    pub requests: u64,
    pub failed: u64,
    pub latency_ms: LatencySummary,
    pub service_time_ms: LatencySummary,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ThresholdResult {
    pub expr: String,
    /// `None` when the metric had no data (which fails the threshold).
    pub actual: Option<f64>,
    pub ok: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct Generator {
    /// Process CPU time / wall time / cores the generator may use, in percent.
    pub cpu_percent: f64,
    pub cpu_seconds: f64,
    pub cores: u32,
    pub threads: u32,
    pub saturated: bool,
    pub scheduler_lag_ms_p99: f64,
    pub max_rss_bytes: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct IntervalStats {
    /// Seconds since the start of the run (including warm-up) at the start of the slice.
    pub t: u32,
    pub warmup: bool,
    pub requests: u64,
    pub failed: u64,
    pub rate: f64,
    pub latency_ms: IntervalLatency,
    /// Active VUs (closed model) or requests in flight (open model) at the end of the slice.
    pub active: u64,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Default)]
pub struct IntervalLatency {
    pub p50: f64,
    pub p95: f64,
    pub p99: f64,
    pub max: f64,
}

impl IntervalStats {
    pub fn of(s: &IntervalSnapshot, length: Duration, warmup: bool) -> Self {
        let h = &s.latency;
        let q = |p: f64| {
            if h.is_empty() {
                0.0
            } else {
                h.value_at_quantile(p) as f64 / 1000.0
            }
        };
        Self {
            t: s.index,
            warmup,
            requests: s.requests,
            failed: s.failed,
            rate: s.requests as f64 / length.as_secs_f64().max(1e-9),
            latency_ms: IntervalLatency {
                p50: q(0.5),
                p95: q(0.95),
                p99: q(0.99),
                max: if h.is_empty() {
                    0.0
                } else {
                    h.max() as f64 / 1000.0
                },
            },
            active: s.active,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct Histograms {
    pub latency: String,
    pub service_time: String,
}

/// Facts about the run that the recorder does not know.
#[derive(Debug, Clone)]
pub struct RunMeta {
    pub name: String,
    pub scenario_file: Option<String>,
    pub target: Option<String>,
    pub started_at: SystemTime,
    pub measured: Duration,
    pub warmup: Duration,
    pub interrupted: bool,
    pub load: LoadInfo,
    pub generator: Generator,
    pub intervals: Vec<IntervalStats>,
    pub steps: Vec<StepInfo>,
}

impl RunResult {
    /// Summarises a merged recorder. Thresholds and validity are filled in by the caller.
    pub fn build(rec: &Recorder, meta: RunMeta) -> RunResult {
        let mut latency = crate::new_histogram();
        let mut service = crate::new_histogram();
        let mut errors = [0u64; ErrorKind::ALL.len()];
        let mut statuses: BTreeMap<String, u64> = BTreeMap::new();
        let mut steps = Vec::new();
        let mut groups: Vec<(String, u64, u64, LatencyHistogram, LatencyHistogram)> = Vec::new();
        for (info, s) in meta.steps.iter().zip(&rec.steps) {
            latency.add(&s.latency).expect("same bounds");
            service.add(&s.service).expect("same bounds");
            for (a, b) in errors.iter_mut().zip(s.errors) {
                *a += b;
            }
            let mut step_statuses = BTreeMap::new();
            for &(code, n) in &s.statuses {
                *statuses.entry(code.to_string()).or_default() += n;
                *step_statuses.entry(code.to_string()).or_default() += n;
            }
            if let Some(g) = &info.group {
                let entry = match groups.iter_mut().position(|e| &e.0 == g) {
                    Some(i) => &mut groups[i],
                    None => {
                        groups.push((
                            g.clone(),
                            0,
                            0,
                            crate::new_histogram(),
                            crate::new_histogram(),
                        ));
                        groups.last_mut().expect("just pushed")
                    }
                };
                entry.1 += s.requests;
                entry.2 += s.failed;
                entry.3.add(&s.latency).expect("same bounds");
                entry.4.add(&s.service).expect("same bounds");
            }
            steps.push(StepResult {
                name: info.name.clone(),
                group: info.group.clone(),
                requests: s.requests,
                failed: s.failed,
                errors: error_map(&s.errors),
                status_codes: step_statuses,
                latency_ms: LatencySummary::of(&s.latency),
                service_time_ms: LatencySummary::of(&s.service),
                checks: Vec::new(),
            });
        }
        let total = rec.total_requests();
        let failed: u64 = rec.steps.iter().map(|s| s.failed).sum();
        let error_counts = error_map(&errors);
        let error_hints = ErrorKind::ALL
            .iter()
            .filter(|k| errors[k.index()] > 0)
            .map(|k| (k.as_str().to_string(), k.hint().to_string()))
            .collect();
        let error_examples = rec
            .error_examples
            .iter()
            .map(|(k, m)| (k.as_str().to_string(), m.clone()))
            .collect();
        let secs = meta.measured.as_secs_f64();
        RunResult {
            schema: SCHEMA.to_string(),
            tool_version: env!("CARGO_PKG_VERSION").to_string(),
            name: meta.name,
            scenario_file: meta.scenario_file,
            target: meta.target,
            started_at: rfc3339(meta.started_at),
            valid: true,
            invalid_reasons: Vec::new(),
            interrupted: meta.interrupted,
            duration_s: secs,
            warmup_s: meta.warmup.as_secs_f64(),
            load: meta.load,
            requests: Requests {
                total,
                ok: total - failed,
                failed,
                rate: if secs > 0.0 { total as f64 / secs } else { 0.0 },
                warmup: rec.warmup_requests,
            },
            latency_ms: LatencySummary::of(&latency),
            service_time_ms: LatencySummary::of(&service),
            lag_ms: if rec.lag.is_empty() {
                LagSummary::default()
            } else {
                LagSummary {
                    p50: rec.lag.value_at_quantile(0.5) as f64 / 1000.0,
                    p99: rec.lag.value_at_quantile(0.99) as f64 / 1000.0,
                    max: rec.lag.max() as f64 / 1000.0,
                }
            },
            errors: error_counts,
            error_hints,
            error_examples,
            status_codes: statuses,
            iterations: Iterations {
                completed: rec.iterations_completed,
                dropped: rec.iterations_dropped,
                delayed_by_max_in_flight: rec.delayed_by_max_in_flight,
            },
            steps,
            groups: groups
                .into_iter()
                .map(|(name, requests, failed, l, s)| GroupResult {
                    name,
                    requests,
                    failed,
                    latency_ms: LatencySummary::of(&l),
                    service_time_ms: LatencySummary::of(&s),
                })
                .collect(),
            thresholds: Vec::new(),
            generator: meta.generator,
            intervals: meta.intervals,
            histograms: Histograms {
                latency: encode_histogram(&latency),
                service_time: encode_histogram(&service),
            },
            environment: Some(crate::Environment::detect()),
        }
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a run result always serializes")
    }
}

fn error_map(counts: &[u64; ErrorKind::ALL.len()]) -> BTreeMap<String, u64> {
    ErrorKind::ALL
        .iter()
        .filter(|k| counts[k.index()] > 0)
        .map(|k| (k.as_str().to_string(), counts[k.index()]))
        .collect()
}

/// Base64 of the compressed V2 encoding (what HdrHistogram logs and tools read).
pub fn encode_histogram(h: &LatencyHistogram) -> String {
    use base64::Engine;
    use hdrhistogram::serialization::Serializer;
    let mut bytes = Vec::new();
    hdrhistogram::serialization::V2DeflateSerializer::new()
        .serialize(h, &mut bytes)
        .expect("serializing to memory cannot fail");
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

pub fn decode_histogram(text: &str) -> Option<LatencyHistogram> {
    use base64::Engine;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text)
        .ok()?;
    hdrhistogram::serialization::Deserializer::new()
        .deserialize(&mut bytes.as_slice())
        .ok()
}

/// UTC timestamp `2026-11-22T07:30:00Z` without a date-time dependency.
pub fn rfc3339(t: SystemTime) -> String {
    let secs = t
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0) as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Civil-from-days (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        (rem % 3600) / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps() {
        assert_eq!(rfc3339(SystemTime::UNIX_EPOCH), "1970-01-01T00:00:00Z");
        let t = SystemTime::UNIX_EPOCH + Duration::from_secs(1_795_305_600 + 3661);
        assert_eq!(rfc3339(t), "2026-11-22T01:01:01Z");
    }

    #[test]
    fn histogram_round_trip() {
        let mut h = crate::new_histogram();
        for v in [1u64, 10, 100, 1000, 123_456] {
            h.record(v).unwrap();
        }
        let back = decode_histogram(&encode_histogram(&h)).unwrap();
        assert_eq!(back.len(), 5);
        assert_eq!(back.max(), h.max());
    }
}
