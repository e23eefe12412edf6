//! What the terminal summary and the run report both show of a run, worded once for both:
//! whether its groups are single steps, a resource series' values in their unit, a merged
//! segment's row, the byte rates and the phase labels.

use loadlab_metrics::resources::SeriesSummary;
use loadlab_metrics::result::{Bytes, RunResult};
use loadlab_metrics::Phase;

/// A group of one step is that step: a per-group table would repeat the per-step one (the
/// terminal and the reports leave it out alike).
pub(crate) fn each_group_is_one_step(r: &RunResult) -> bool {
    r.groups.iter().all(|g| {
        r.steps
            .iter()
            .filter(|s| s.group.as_deref() == Some(&g.name))
            .count()
            == 1
    })
}

/// A series' value in its unit ([`loadlab_metrics::series_unit`]).
pub(crate) fn format_series(series: &str, v: f64) -> String {
    crate::verdict_words::format_value(loadlab_metrics::series_unit(series), v)
}

/// A summary's mean and max in the series' unit: `45.0% (max 60.0%)`.
pub(crate) fn mean_max_words(series: &str, s: &SeriesSummary) -> String {
    format!(
        "{} (max {})",
        format_series(series, s.mean),
        format_series(series, s.max)
    )
}

/// One segment as the per-segment tables (terminal, report) show it.
pub(crate) fn segment_row(s: &loadlab_metrics::result::SegmentSummary) -> Vec<String> {
    let place = match (&s.pod, &s.node) {
        (Some(pod), Some(node)) => format!("{pod} @ {node}"),
        (Some(pod), None) => pod.clone(),
        _ => s.host.clone().unwrap_or_else(|| "-".into()),
    };
    vec![
        format!("{}", s.index),
        place,
        s.requests.to_string(),
        s.failed.to_string(),
        format!("{:.0}%", s.cpu_percent),
        format!("{:+.0} ms", s.start_offset_ms),
        match &s.clock {
            Some(c) => format!("{:+.0} ± {:.0} ms", c.offset_ms, c.uncertainty_ms),
            None => "-".into(),
        },
        if s.valid {
            "yes".to_string()
        } else {
            let kinds: Vec<&str> = s.invalid.iter().map(|k| k.as_str()).collect();
            format!("no ({})", kinds.join(", "))
        },
    ]
}

/// Bytes per second of a result: as recorded, or from the totals for results written
/// before the rates were.
pub(crate) fn byte_rates(r: &RunResult) -> (f64, f64) {
    let b: &Bytes = &r.bytes;
    if b.sent_per_s > 0.0 || b.received_per_s > 0.0 || r.duration_s <= 0.0 {
        (b.sent_per_s, b.received_per_s)
    } else {
        (
            b.sent as f64 / r.duration_s,
            b.received as f64 / r.duration_s,
        )
    }
}

/// The label of a phase in the terminal and the reports.
pub(crate) fn phase_label(phase: Phase) -> &'static str {
    match phase {
        Phase::Connect => "connect",
        Phase::TlsHandshake => "tls handshake",
        Phase::Waiting => "waiting (ttfb)",
        Phase::Receiving => "receiving",
    }
}
