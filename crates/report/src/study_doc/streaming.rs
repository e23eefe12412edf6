//! The study report's "Streaming" section: per variant, the median over its valid runs (and
//! their range) of the stream figures a reader compares inference servers by — time to first
//! token, time per output token and inter-token gaps at p50 and p95, output tokens per second
//! and goodput. The comparison section holds their tests; this shows where each variant sits.

use super::{median, variant_runs, Runs};
use crate::doc::{Block, Section, Table};
use crate::format::{format_ms, format_rate};
use loadlab_analysis::study::StudyResult;
use loadlab_metrics::StreamResult;

/// One figure of a run's streams.
type Figure = fn(&StreamResult) -> f64;

const FIGURES: [(&str, Figure, bool); 7] = [
    ("TTFT p50", |s| s.ttft_ms.p50, true),
    ("TTFT p95", |s| s.ttft_ms.p95, true),
    ("TPOT p50", |s| s.tpot_ms.p50, true),
    ("TPOT p95", |s| s.tpot_ms.p95, true),
    ("ITL p95", |s| s.itl_ms.p95, true),
    ("output tokens/s", |s| s.output_tokens_per_s, false),
    ("goodput (streams/s)", |s| s.goodput_per_s, false),
];

/// The section, when some variant's runs streamed (none otherwise).
pub(super) fn study_streaming(s: &StudyResult, runs: &Runs) -> Option<Section> {
    let mut t = Table::new(&["variant", "figure", ">median", ">range over runs", ">runs"]);
    for v in &s.variants {
        let streams: Vec<&StreamResult> = variant_runs(v, runs)
            .into_iter()
            .filter_map(|r| r.stream.as_ref())
            .collect();
        if streams.is_empty() {
            continue;
        }
        for (name, figure, is_time) in FIGURES {
            let values: Vec<f64> = streams.iter().map(|s| figure(s)).collect();
            let (lo, hi) = values
                .iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &x| {
                    (lo.min(x), hi.max(x))
                });
            let show = |x: f64| {
                if is_time {
                    format_ms(x)
                } else {
                    format_rate(x)
                }
            };
            t.row(cells![
                format!("`{}`", v.name),
                name.to_string(),
                show(median(&values)),
                format!("{} – {}", show(lo), show(hi)),
                values.len().to_string()
            ]);
        }
    }
    if t.rows.is_empty() {
        return None;
    }
    let mut section = Section::new("streaming", "Streaming");
    section.blocks.push(Block::Table(t.with_note(
        "Each valid run's figure over all its streams, by vLLM's definitions (docs/streaming.md): TTFT from the request's start (its intended start in the open model) to the first token, TPOT the time per output token after the first, ITL every gap between tokens, goodput the streams per second that met every objective. Medians over the runs, not pooled requests; the comparison section tests the differences.",
    )));
    Some(section)
}
