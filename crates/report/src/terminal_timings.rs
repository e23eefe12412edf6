//! The end-of-run summary's timing lines: latency and service time with what the load model
//! means for them, and the k6-like lines: data sent and received with their rates, where
//! service time went (connect, TLS handshake, waiting for the first byte, receiving),
//! iteration duration and the most VUs active at once.

use crate::format::{format_bytes, format_ms};
use crate::run_values::{byte_rates, phase_label};
use crate::terminal_lines::kv;
use crate::Style;
use loadlab_metrics::result::{LatencySummary, RunResult};
use loadlab_metrics::{Compensation, LoadModel, Phase, ScheduleSource};
use std::io::{self, Write};

/// `p50=… p90=… p95=… p99=… max=…`.
pub(crate) fn percentiles_line(l: &LatencySummary) -> String {
    format!(
        "p50={} p90={} p95={} p99={} max={}",
        format_ms(l.p50),
        format_ms(l.p90),
        format_ms(l.p95),
        format_ms(l.p99),
        format_ms(l.max)
    )
}

/// `data ..............: 1.2 MiB sent (120 KiB/s), 4.5 MiB received (450 KiB/s)`.
pub(crate) fn data(r: &RunResult, out: &mut dyn Write) -> io::Result<()> {
    if r.bytes.is_zero() {
        return Ok(());
    }
    let (sent, received) = byte_rates(r);
    kv(
        out,
        "data",
        &format!(
            "{} sent ({}/s), {} received ({}/s)",
            format_bytes(r.bytes.sent as f64),
            format_bytes(sent),
            format_bytes(r.bytes.received as f64),
            format_bytes(received)
        ),
    )
}

/// One line per measured phase; connect and TLS say how many connections they cover.
pub(crate) fn phases(r: &RunResult, out: &mut dyn Write) -> io::Result<()> {
    let Some(p) = &r.phases_ms else {
        return Ok(());
    };
    for phase in Phase::ALL {
        let Some(l) = p.get(phase).filter(|l| l.count > 0) else {
            continue;
        };
        let mut line = percentiles_line(l);
        if matches!(phase, Phase::Connect | Phase::TlsHandshake) {
            line.push_str(&format!(" ({})", connections_timed(r, l.count)));
        }
        kv(out, phase_label(phase), &line)?;
    }
    Ok(())
}

/// How many connections a connect or handshake line covers, beside the protocol line's count
/// of every connection opened (warm-up included): "1 connection opened after warm-up, of 3".
fn connections_timed(r: &RunResult, timed: u64) -> String {
    let s = if timed == 1 { "" } else { "s" };
    let opened: u64 = r.origins.iter().flat_map(|o| o.connections.values()).sum();
    if opened > timed {
        format!("{timed} connection{s} opened in the measured window, of {opened} in all")
    } else {
        format!("{timed} connection{s} opened")
    }
}

/// `iteration duration: p50=…` and `vus max ...: 50 (planned 50)`.
pub(crate) fn iterations_and_vus(r: &RunResult, out: &mut dyn Write) -> io::Result<()> {
    if let Some(d) = r.iterations.duration_ms.filter(|d| d.count > 0) {
        kv(out, "iteration duration", &percentiles_line(&d))?;
    }
    if let Some(max) = r.vus_max {
        let planned = match r.load.max_vus {
            Some(p) if u64::from(p) != max => format!(" (planned {p})"),
            _ => String::new(),
        };
        kv(out, "vus max", &format!("{max}{planned}"))?;
    }
    Ok(())
}

/// `min=… mean=… p50=… p90=… p95=… p99=… p99.9=… max=…`, or a note when nothing completed.
fn latency_line(l: &LatencySummary) -> String {
    if l.count == 0 {
        return "no data (no request completed)".to_string();
    }
    format!(
        "min={} mean={} p50={} p90={} p95={} p99={} p99.9={} max={}",
        format_ms(l.min),
        format_ms(l.mean),
        format_ms(l.p50),
        format_ms(l.p90),
        format_ms(l.p95),
        format_ms(l.p99),
        format_ms(l.p999),
        format_ms(l.max)
    )
}

pub(crate) fn latency(r: &RunResult, out: &mut dyn Write, style: Style) -> io::Result<()> {
    kv(out, "latency", &latency_line(&r.latency_ms))?;
    // In the closed model latency is measured from the send, so service time says the same:
    // shown only where it differs (the open model and bursts, measured from the intended time).
    if r.load.model != LoadModel::Closed {
        kv(out, "service time", &latency_line(&r.service_time_ms))?;
    }
    match r.load.model {
        LoadModel::Open | LoadModel::Burst => kv(
            out,
            "open model",
            &format!(
                "latency is measured from the intended send time; send lag p50={} p99={} max={}{}",
                format_ms(r.lag_ms.p50),
                format_ms(r.lag_ms.p99),
                format_ms(r.lag_ms.max),
                r.generator
                    .batch_window_ms
                    .map_or(String::new(), |w| format!(
                        "; batch window {}{}",
                        format_ms(w),
                        if r.generator.reads_at_wakeups {
                            ", responses read at its wake-ups (timed by the kernel)"
                        } else {
                            ""
                        }
                    ))
            ),
        ),
        LoadModel::Closed => match (&r.latency_compensated_ms, &r.compensation) {
            (Some(compensated), Some(c)) => {
                kv(out, "compensated", &latency_line(compensated))?;
                kv(out, "closed model", &compensation_words(c))
            }
            _ => kv(
                out,
                "closed model",
                &style.dim(
                    "under overload, closed-model latency understates what users would see \
                     (VUs wait instead of arriving)",
                ),
            ),
        },
    }
}

/// What the compensated line means, the schedule it assumed, the size of the correction and
/// its limits: one sentence a reader can quote.
pub(crate) fn compensation_words(c: &Compensation) -> String {
    let source = match c.source {
        ScheduleSource::Pace => "`load.pace`".to_string(),
        ScheduleSource::Inferred => "inferred".to_string(),
    };
    let size = if c.ratio > 1.05 {
        format!(
            "users arriving on schedule would have seen a {} {:.1}× the measured one",
            c.most_at, c.ratio
        )
    } else {
        "no response outlasted the interval enough to change a percentile".to_string()
    };
    let caveats = c.caveats();
    let caveats = if caveats.is_empty() {
        String::new()
    } else {
        format!(" ({})", caveats.join("; "))
    };
    format!(
        "latency is measured from each send; compensated adds the sends each VU's schedule (an iteration every {}, {source}) would have made while it waited (coordinated omission): {size}{caveats}",
        format_ms(c.interval_ms)
    )
}
