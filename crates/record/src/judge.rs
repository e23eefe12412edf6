//! Who was the bottleneck, decided from the record alone (so the end of a run, a crash
//! recovery and a merge reach the same answer): the monitor's findings become typed invalid
//! reasons (the host was contended, the generator ran out of files or ports) and target
//! verdicts (CPU-bound, memory growth); the open model's intervals tell whether the target
//! kept up with the offered rate. Lag caused by `max_in_flight` is the target's, never the
//! generator's.

use super::codec::RecordedSample;
use super::meta::RecordMeta;
use loadlab_metrics::resources::{
    classify, host_load, thousands, Finding, FindingKind, GeneratorFacts, HostLoad,
    ResourceFinding, Resources, Sample, Thresholds,
};
use loadlab_metrics::result::{IntervalStats, LatencySummary};
use loadlab_metrics::validity::{InvalidKind, InvalidReason, TargetVerdict, TargetVerdictKind};
use std::collections::BTreeMap;

/// Share of the planned arrivals that may go missing before a run says so.
pub const MAX_UNDELIVERED: f64 = 0.02;

/// What the resource samples say about a run.
#[derive(Debug, Default)]
pub(super) struct ResourceJudgement {
    pub invalid: Vec<InvalidReason>,
    pub verdicts: Vec<TargetVerdict>,
    pub resources: Option<Resources>,
    /// Who used the host's CPU (the busiest segment's, in a merge): the cause named when the
    /// generator's timing was disturbed.
    pub host_load: Option<HostLoad>,
}

/// Judges the samples (each with whether its interval was warm-up), per segment.
pub(super) fn judge_resources(
    meta: &RecordMeta,
    samples: &[(bool, RecordedSample)],
    monitor_cpu_percent: Option<f64>,
    rate: f64,
) -> ResourceJudgement {
    let mut out = ResourceJudgement::default();
    if samples.is_empty() {
        return out;
    }
    let count = meta.merged_from.as_ref().map_or(1, |m| m.len().max(1)) as u32;
    let parts = samples_by_segment(samples)
        .iter()
        .map(|(segment, all)| judge_segment(meta, *segment, all, count, rate, &mut out))
        .collect();
    let mut resources = combine_segments(parts);
    resources.monitor_cpu_percent = monitor_cpu_percent;
    out.resources = Some(resources);
    out
}

/// The samples grouped by the segment that took them (`None` for a run that was not merged).
fn samples_by_segment(
    samples: &[(bool, RecordedSample)],
) -> BTreeMap<Option<u32>, Vec<(bool, &Sample)>> {
    let mut by_segment: BTreeMap<Option<u32>, Vec<(bool, &Sample)>> = BTreeMap::new();
    for (warmup, s) in samples {
        by_segment
            .entry(s.segment)
            .or_default()
            .push((*warmup, &s.sample));
    }
    by_segment
}

/// One segment's resources and findings; the verdicts, invalid reasons and busiest host load
/// go into `out`, shared by all segments.
fn judge_segment(
    meta: &RecordMeta,
    segment: Option<u32>,
    all: &[(bool, &Sample)],
    count: u32,
    rate: f64,
    out: &mut ResourceJudgement,
) -> Resources {
    let steady: Vec<Sample> = all
        .iter()
        .filter(|(w, _)| !w)
        .map(|(_, s)| (*s).clone())
        .collect();
    let facts = GeneratorFacts {
        cores_allowed: f64::from(segment_cores(meta, segment, count)),
    };
    let prefix = segment
        .map(|i| {
            let n = meta.segment.map_or(count, |s| s.count);
            format!("segment {i}/{n}: ")
        })
        .unwrap_or_default();
    let mut resources = Resources::of(&steady, all);
    resources.segment = segment;
    resources.host_load = host_load(&steady, &meta.cpus_allowed);
    if let Some(load) = &resources.host_load {
        keep_busiest_host_load(out, load);
    }
    for finding in classify(&steady, &facts, &Thresholds::default()) {
        let sentence = format!("{prefix}{}", finding.sentence());
        let kind = judge_finding(&finding, &sentence, rate, out);
        resources.findings.push(ResourceFinding {
            kind,
            message: sentence,
        });
    }
    resources
}

/// The cores a segment's generator was allowed: its own count when the merge recorded one,
/// otherwise an even share of the whole.
fn segment_cores(meta: &RecordMeta, segment: Option<u32>, count: u32) -> u32 {
    segment
        .and_then(|i| {
            meta.merged_from
                .as_ref()?
                .iter()
                .find(|m| m.index == i)
                .map(|m| m.cores)
                .filter(|c| *c > 0)
        })
        .unwrap_or_else(|| (meta.cores / count).max(1))
}

/// In a merge, the cause named for disturbed timing is the busiest segment's host.
fn keep_busiest_host_load(out: &mut ResourceJudgement, load: &HostLoad) {
    let busier = out
        .host_load
        .as_ref()
        .is_none_or(|h| load.other_percent_of_host > h.other_percent_of_host);
    if busier {
        out.host_load = Some(load.clone());
    }
}

/// The kind a finding is reported under; the findings that judge the target or make the run
/// invalid are also added to `out`.
fn judge_finding(
    finding: &Finding,
    sentence: &str,
    rate: f64,
    out: &mut ResourceJudgement,
) -> FindingKind {
    match finding {
        // A fact about the host, reported with the resources: the run is invalid only
        // when the generator's own timing was disturbed (`disturbance`).
        Finding::HostContended(_) => FindingKind::HostContended,
        Finding::TargetCpuBound(_) => {
            out.verdicts.push(TargetVerdict {
                kind: TargetVerdictKind::TargetCpuBound,
                message: format!("{sentence} at {}", per_second(rate)),
            });
            FindingKind::TargetCpuBound
        }
        Finding::MemoryGrowth(_) => {
            out.verdicts.push(TargetVerdict {
                kind: TargetVerdictKind::MemoryGrowth,
                message: sentence.to_string(),
            });
            FindingKind::MemoryGrowth
        }
        Finding::FdPressure(f) => {
            if f.exhausted && f.of_generator() {
                out.invalid
                    .push(InvalidReason::new(InvalidKind::FdExhausted, sentence));
            }
            FindingKind::FdPressure
        }
        // Host-wide: other processes' sockets count too, and the kernel reuses a
        // local port for other destinations, so this is a warning; the run is
        // invalid only when its own connections failed for want of a port
        // (`addr_unavailable`, judged from the errors).
        Finding::PortsPressure(_) => FindingKind::PortsPressure,
    }
}

/// A run's resources: a single unsegmented part as it is, otherwise the parts as segments
/// under one total.
fn combine_segments(mut parts: Vec<Resources>) -> Resources {
    if parts.len() == 1 && parts[0].segment.is_none() {
        parts.pop().expect("one part")
    } else {
        Resources {
            interval_s: parts.first().map_or(0.0, |p| p.interval_s),
            samples: parts.iter().map(|p| p.samples).sum(),
            segments: parts,
            ..Resources::default()
        }
    }
}

/// The host of a URL when it is this machine (`127.0.0.0/8`, `::1`, `localhost`).
fn loopback_host(url: &str) -> Option<&str> {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let authority = rest.split(['/', '?', '#']).next()?;
    let authority = authority.rsplit_once('@').map_or(authority, |(_, a)| a);
    let host = match authority.strip_prefix('[') {
        Some(v6) => v6.split(']').next()?,
        None => authority.split(':').next()?,
    };
    let loopback = host.eq_ignore_ascii_case("localhost")
        || host == "::1"
        || host
            .parse::<std::net::Ipv4Addr>()
            .is_ok_and(|a| a.is_loopback());
    loopback.then_some(authority)
}

/// A target on the generator's own host (a loopback URL): a warning with who used the CPU and
/// the fix. It is not a verdict on the measurement: `disturbance` decides that.
pub(super) fn shares_host(
    meta: &RecordMeta,
    load: Option<&HostLoad>,
    disturbed: bool,
) -> Option<TargetVerdict> {
    let target = meta.target.as_deref().and_then(loopback_host)?;
    let mut message = format!("the target ({target}) runs on the generator's host");
    if let Some(l) = load {
        message.push_str(&format!(
            " and competes with it for its {:.0} CPU{}: the generator used {:.0}% of the host, everything else (the target among it) {:.0}%",
            l.host_cpus,
            if l.host_cpus == 1.0 { "" } else { "s" },
            l.generator_percent_of_host,
            l.other_percent_of_host
        ));
        let busiest = l.busiest_others();
        if !busiest.is_empty() {
            message.push_str(&format!(" (busiest: {busiest})"));
        }
    }
    message.push_str(if disturbed {
        "; the generator's timing was disturbed (see why the run is invalid)"
    } else {
        "; the generator's own timing was not disturbed, so the numbers stand"
    });
    message.push_str(" — for numbers free of it, pin them apart (`taskset -c 0 loadlab target …`, `taskset -c 1 loadlab run …`) or run the generator on another machine");
    Some(TargetVerdict {
        kind: TargetVerdictKind::SharesHostWithTarget,
        message,
    })
}

/// `420/s`, `12.5/s`.
fn per_second(rate: f64) -> String {
    if rate >= 100.0 {
        format!("{rate:.0}/s")
    } else {
        format!("{rate:.1}/s")
    }
}

/// `4.0 s`, `480 ms`, `1.2 ms`.
fn ms_words(ms: f64) -> String {
    if ms >= 1000.0 {
        format!("{:.1} s", ms / 1000.0)
    } else if ms >= 10.0 {
        format!("{ms:.0} ms")
    } else {
        format!("{ms:.1} ms")
    }
}

/// What the open model's intervals show about the target.
pub(super) struct LoadEvidence<'a> {
    pub intervals: &'a [IntervalStats],
    /// Iterations completed in each interval (same order as `intervals`).
    pub iterations: &'a [u64],
    pub delayed_by_max_in_flight: u64,
    pub dropped: u64,
    pub latency: &'a LatencySummary,
    pub service: &'a LatencySummary,
    pub server: Option<&'a LatencySummary>,
}

/// Planned arrivals between `a` and `b` (seconds), the plan's rate drawn linearly between
/// its points.
fn planned_between(points: &[(f64, f64)], a: f64, b: f64) -> f64 {
    let mut total = 0.0;
    for w in points.windows(2) {
        let ((t0, r0), (t1, r1)) = (w[0], w[1]);
        let (lo, hi) = (t0.max(a), t1.min(b));
        if hi <= lo || t1 <= t0 {
            continue;
        }
        let at = |t: f64| r0 + (r1 - r0) * (t - t0) / (t1 - t0);
        total += (at(lo) + at(hi)) / 2.0 * (hi - lo);
    }
    total
}

fn mean(v: impl Iterator<Item = f64>) -> f64 {
    let (s, n) = v.fold((0.0, 0u32), |(s, n), x| (s + x, n + 1));
    if n == 0 {
        0.0
    } else {
        s / f64::from(n)
    }
}

/// The open model's "the target did not keep up" verdict, with the numbers: achieved
/// against offered, arrivals delayed or dropped at `max_in_flight`, in-flight and latency
/// growth through the steady window, and whether the latency is queueing or service.
pub(super) fn overload(meta: &RecordMeta, e: &LoadEvidence<'_>) -> Option<TargetVerdict> {
    if meta.load.model != loadlab_metrics::LoadModel::Open {
        return None;
    }
    let plan_end = meta.load.planned_duration_s;
    let window: Vec<(usize, &IntervalStats)> = e
        .intervals
        .iter()
        .enumerate()
        .filter(|(_, i)| i.within_plan(plan_end))
        .collect();
    let seconds: f64 = window.iter().map(|(_, i)| i.length_s).sum();
    let mut why = Vec::new();
    let planned_total = meta.load.planned_arrivals.unwrap_or(0.0);
    let (offered, achieved) = match (&meta.load.planned, window.first(), window.last()) {
        (Some(p), Some((_, first)), Some((_, last))) if seconds >= 1.0 && !p.vus => {
            let offered = planned_between(&p.points, first.t, last.t + last.length_s) / seconds;
            let done: u64 = window.iter().map(|(k, _)| e.iterations[*k]).sum();
            (offered, done as f64 / seconds)
        }
        _ => (0.0, 0.0),
    };
    let requests: u64 = window.iter().map(|(_, i)| i.requests).sum();
    let failed: u64 = window.iter().map(|(_, i)| i.failed).sum();
    // Arrivals that did not even start in the window: offered − completed − the growth of
    // what is in flight (what a target keeping up holds by Little's law is not a shortfall).
    let in_flight_before = window
        .first()
        .and_then(|(k, _)| k.checked_sub(1))
        .map_or(0.0, |k| e.intervals[k].in_flight as f64);
    let in_flight_after = window.last().map_or(0.0, |(_, i)| i.in_flight as f64);
    let not_started = (offered - achieved) * seconds - (in_flight_after - in_flight_before);
    // Poisson arrivals differ from the plan's mean by chance: three standard deviations.
    let noise = if meta.poisson_arrivals() {
        3.0 * (offered * seconds).sqrt()
    } else {
        0.0
    };
    let short = offered > 0.0
        && achieved < 0.98 * offered
        && not_started > (0.02 * offered * seconds).max(3.0).max(noise)
        && (failed as f64) < 0.02 * requests.max(1) as f64;
    let rates = format!(
        "{} achieved of {} offered",
        per_second(achieved),
        per_second(offered)
    );
    let delayed_share = e.delayed_by_max_in_flight as f64 / planned_total.max(1.0);
    let dropped_share = e.dropped as f64 / planned_total.max(1.0);
    let limit = meta.load.max_in_flight.unwrap_or(0);
    if e.delayed_by_max_in_flight > 0 && delayed_share > 0.01 {
        why.push(format!(
            "{} arrivals ({:.0}%) waited because max_in_flight ({}) requests were already open",
            thousands(e.delayed_by_max_in_flight as f64),
            100.0 * delayed_share,
            thousands(f64::from(limit))
        ));
    }
    if dropped_share > MAX_UNDELIVERED {
        why.push(format!(
            "{} of {} planned arrivals ({:.1}%) could not start before the end",
            thousands(e.dropped as f64),
            thousands(planned_total),
            100.0 * dropped_share
        ));
    }
    why.extend(growth(&window));
    if why.is_empty() && !short {
        return None;
    }
    let mut parts = Vec::new();
    if offered > 0.0 {
        parts.push(rates);
    }
    parts.extend(why);
    parts.push(latency_nature(e));
    Some(TargetVerdict {
        kind: TargetVerdictKind::TargetOverloaded,
        message: format!(
            "the target did not keep up with the offered rate: {}",
            parts.join("; ")
        ),
    })
}

/// Growth through the steady window: in-flight and latency p50 of its last quarter against
/// its first, when both at least doubled (a target falling behind, not noise).
fn growth(window: &[(usize, &IntervalStats)]) -> Option<String> {
    if window.len() < 4 {
        return None;
    }
    let quarter = window.len() / 4;
    let first = &window[..quarter];
    let last = &window[window.len() - quarter..];
    let f_in = mean(first.iter().map(|(_, i)| i.in_flight as f64));
    let l_in = mean(last.iter().map(|(_, i)| i.in_flight as f64));
    let f_lat = mean(first.iter().map(|(_, i)| i.latency_ms.p50));
    let l_lat = mean(last.iter().map(|(_, i)| i.latency_ms.p50));
    (l_in > (2.0 * f_in).max(f_in + 10.0) && l_lat > (2.0 * f_lat).max(f_lat + 5.0)).then(|| {
        format!(
            "in-flight grew from {} to {} and latency p50 from {} to {}",
            thousands(f_in),
            thousands(l_in),
            ms_words(f_lat),
            ms_words(l_lat)
        )
    })
}

/// Whether an overloaded target's latency is queueing (arrivals waiting for a slot, or in
/// front of the application) or its service time.
fn latency_nature(e: &LoadEvidence<'_>) -> String {
    let l = e.latency.p50;
    let s = e.service.p50;
    if l > 2.0 * s && l - s > 1.0 {
        format!(
            "latency is queueing, not service: p50 {} from the intended start, {} from the actual send (arrivals waited for a free slot)",
            ms_words(l),
            ms_words(s)
        )
    } else if let Some(server) = e.server.filter(|v| v.count > 0 && s > 2.0 * v.p50 + 1.0) {
        format!(
            "latency is queueing, not service: p50 {}, of which the server reported {} (the rest waited in front of the application)",
            ms_words(s),
            ms_words(server.p50)
        )
    } else {
        format!("latency p50 {}", ms_words(l))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_targets_are_told_apart() {
        let cases = [
            ("http://127.0.0.1:8080/api", Some("127.0.0.1:8080")),
            ("http://127.3.2.1", Some("127.3.2.1")),
            ("https://localhost:8443/", Some("localhost:8443")),
            ("http://[::1]:9000/x", Some("[::1]:9000")),
            ("http://admin:***@127.0.0.1:80/", Some("127.0.0.1:80")),
            ("http://10.0.0.5:8080", None),
            ("https://example.com/", None),
            ("http://127.example.com/", None),
        ];
        for (url, want) in cases {
            assert_eq!(loopback_host(url), want, "{url}");
        }
    }

    #[test]
    fn planned_arrivals_integrate_ramps() {
        let points = [(0.0, 10.0), (10.0, 10.0), (10.0, 20.0), (20.0, 40.0)];
        assert!((planned_between(&points, 0.0, 10.0) - 100.0).abs() < 1e-9);
        assert!((planned_between(&points, 5.0, 15.0) - (50.0 + 125.0)).abs() < 1e-9);
        assert!((planned_between(&points, 10.0, 20.0) - 300.0).abs() < 1e-9);
        assert_eq!(planned_between(&points, 30.0, 40.0), 0.0);
    }
}
