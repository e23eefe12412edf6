//! The verdict sentences of a run and the caveats about how it was measured.

use crate::doc::{Level, Verdict};
use crate::format::{format_ms, format_rate, format_secs};
use crate::words::*;
use loadlab_metrics::result::RunResult;
use loadlab_metrics::InvalidKind;

/// The verdict sentences of a run, most important first.
pub fn run_verdicts(r: &RunResult) -> Vec<Verdict> {
    let mut v = Vec::new();
    v.extend(invalid_verdict(r));
    // Who was the bottleneck opens the report (after the run's invalidity, if it is invalid).
    v.extend(super::bottleneck_verdicts(r));
    v.extend(interrupted_verdict(r));
    v.extend(aborted_verdict(r));
    v.extend(steered_verdict(r));
    v.extend(threshold_verdicts(r));
    v.push(traffic_verdict(r));
    v.extend(thin_tail_verdict(r));
    v.extend(top_error_verdict(r));
    if r.valid {
        v.push(Verdict::new(
            Level::Pass,
            format!(
                "Valid measurement: the load generator kept up ({}).",
                generator_words(r)
            ),
        ));
    }
    v.extend(caveats(r));
    v
}

/// Why an invalid run is not a measurement.
fn invalid_verdict(r: &RunResult) -> Option<Verdict> {
    if let Some(source) = &r.imported {
        return Some(Verdict::new(
            Level::Warn,
            format!("Validity {}.", source.validity_words()),
        ));
    }
    if r.valid {
        return None;
    }
    let reasons: Vec<&str> = r
        .validity
        .reasons
        .iter()
        .map(|reason| match reason.kind {
            InvalidKind::HostContended => "the host was contended (above)",
            _ => reason.message.as_str(),
        })
        .collect();
    Some(Verdict::new(
        Level::Fail,
        format!("Not a valid measurement: {}.", reasons.join("; ")),
    ))
}

fn interrupted_verdict(r: &RunResult) -> Option<Verdict> {
    r.interrupted.then(|| {
        Verdict::new(
            Level::Warn,
            format!(
                "The run was interrupted: the numbers cover {} of the {} planned.",
                format_secs(r.duration_s + r.warmup_s),
                format_secs(r.load.planned_duration_s)
            ),
        )
    })
}

/// Which threshold stopped the run, when, and its value over which window.
fn aborted_verdict(r: &RunResult) -> Option<Verdict> {
    r.aborted_by_threshold.as_ref().map(|b| {
        Verdict::new(
            Level::Fail,
            format!(
                "The run was {}; the numbers cover the run until then.",
                aborted_words(r, b)
            ),
        )
    })
}

/// The commands that drove a steered run: its load was not the planned one.
fn steered_verdict(r: &RunResult) -> Option<Verdict> {
    steered_words(r).map(|words| {
        Verdict::new(
            Level::Info,
            format!(
                "The load was steered while it ran ({words}); the figures cover every level it was driven at, not the plan alone."
            ),
        )
    })
}

/// How many thresholds were met, then failures and near misses one by one; the others are
/// in the thresholds section.
fn threshold_verdicts(r: &RunResult) -> Vec<Verdict> {
    let mut v = Vec::new();
    if r.thresholds.is_empty() {
        return v;
    }
    let passed = r.thresholds.iter().filter(|t| t.ok).count();
    if passed == r.thresholds.len() {
        v.push(Verdict::new(
            Level::Pass,
            format!(
                "All {} threshold{} met.",
                r.thresholds.len(),
                if r.thresholds.len() == 1 { "" } else { "s" }
            ),
        ));
    } else {
        v.push(Verdict::new(
            Level::Fail,
            format!(
                "{} of {} thresholds missed.",
                r.thresholds.len() - passed,
                r.thresholds.len()
            ),
        ));
    }
    for t in &r.thresholds {
        let near = t.ok
            && t.actual
                .is_some_and(|a| crate::words::near_miss(&t.expr, a));
        if !t.ok || near {
            v.push(Verdict::new(
                if t.ok { Level::Warn } else { Level::Fail },
                format!(
                    "{}{}.",
                    threshold_sentence(t),
                    if near {
                        " — within 10% of its bound"
                    } else {
                        ""
                    }
                ),
            ));
        }
    }
    v
}

/// How many requests at what rate, their latency and the share that failed.
fn traffic_verdict(r: &RunResult) -> Verdict {
    let l = &r.latency_ms;
    Verdict::new(
        Level::Info,
        format!(
            "{} requests at {}: latency p50 {}, p95 {}, p99 {}; {} failed.",
            r.requests.total,
            format_rate(r.requests.rate),
            format_ms(l.p50),
            format_ms(l.p95),
            format_ms(l.p99),
            error_share(r.requests.failed, r.requests.total)
        ),
    )
}

/// Tail percentiles resting on too few requests to be more than the maximum.
fn thin_tail_verdict(r: &RunResult) -> Option<Verdict> {
    let l = &r.latency_ms;
    if l.count == 0 || !loadlab_metrics::thin_percentile(l.count, 0.99) {
        return None;
    }
    let thin: Vec<&str> = [(0.95, "p95"), (0.99, "p99")]
        .iter()
        .filter(|(q, _)| loadlab_metrics::thin_percentile(l.count, *q))
        .map(|(_, name)| *name)
        .collect();
    Some(Verdict::new(
        Level::Warn,
        format!(
            "{} rest{} on {} requests, fewer than 10 of them beyond (p99 needs 1,000, p95 200): {} close to the maximum ({}); draw no conclusion from {}.",
            thin.join(" and "),
            if thin.len() == 1 { "s" } else { "" },
            l.count,
            if thin.len() == 1 { "it is" } else { "they are" },
            format_ms(l.max),
            if thin.len() == 1 { "it" } else { "them" }
        ),
    ))
}

/// The most frequent error, with its hint.
fn top_error_verdict(r: &RunResult) -> Option<Verdict> {
    let (kind, n) = r.errors.iter().max_by_key(|(_, n)| **n)?;
    Some(Verdict::new(
        Level::Warn,
        format!(
            "{} requests failed, most with `{kind}` ({n}): {}.",
            r.requests.failed,
            r.error_hints
                .get(kind)
                .map(String::as_str)
                .unwrap_or("see the errors section")
        ),
    ))
}

/// Honest caveats about how the numbers were measured.
pub fn caveats(r: &RunResult) -> Vec<Verdict> {
    let mut v = Vec::new();
    if r.load.model == loadlab_metrics::LoadModel::Closed {
        v.push(Verdict::new(
            Level::Info,
            "Closed model: each virtual user waits for its response before sending again, so under overload the measured latency understates what arriving users would see; an open model measures latency at a given arrival rate.",
        ));
    }
    if r.iterations.dropped > 0 {
        v.push(Verdict::new(
            Level::Warn,
            format!(
                "{} planned arrivals could not start before the end (max_in_flight reached).",
                r.iterations.dropped
            ),
        ));
    }
    v
}
