//! A study whose runs streamed gets a "Streaming" section: per variant, the median over its
//! runs of TTFT, TPOT, ITL, tokens/s and goodput, with their range; one whose runs did not
//! has none.

mod common;
mod samples;

use loadlab_metrics::result::LatencySummary;
use loadlab_metrics::StreamResult;
use loadlab_report::{render_markdown, study_report};

fn streams(ttft_p95: f64) -> StreamResult {
    let at = |p95: f64| LatencySummary {
        count: 100,
        p50: p95 / 2.0,
        p95,
        ..LatencySummary::default()
    };
    StreamResult {
        streams: 100,
        output_tokens_per_s: 500.0,
        goodput_per_s: 16.0,
        ttft_ms: at(ttft_p95),
        tpot_ms: at(13.0),
        itl_ms: at(15.0),
        ..StreamResult::default()
    }
}

#[test]
fn a_study_of_streams_shows_each_variants_stream_figures() {
    let (s, mut runs) = samples::study();
    fn md(s: &loadlab_analysis::study::StudyResult, runs: &loadlab_report::Runs) -> String {
        render_markdown(&study_report(s, runs, None), "charts").text
    }
    assert!(!md(&s, &runs).contains("## Streaming"));
    // The first variant's runs read TTFT p95 600, 650, 700 ms...; the others' 30 ms.
    for (i, v) in s.variants.iter().enumerate() {
        for (k, id) in v.runs.iter().enumerate() {
            let p95 = if i == 0 {
                600.0 + 50.0 * k as f64
            } else {
                30.0
            };
            runs.get_mut(id).unwrap().stream = Some(streams(p95));
        }
    }
    let text = md(&s, &runs);
    let section = &text[text.find("## Streaming").expect("a Streaming section")..];
    let first = &s.variants[0];
    let n = first.runs.len();
    let median = if n % 2 == 1 {
        600.0 + 50.0 * (n / 2) as f64
    } else {
        600.0 + 50.0 * (n as f64 - 1.0) / 2.0
    };
    let row = section
        .lines()
        .find(|l| l.starts_with(&format!("| `{}` | TTFT p95 |", first.name)))
        .unwrap_or_else(|| panic!("no TTFT p95 row in:\n{section}"));
    assert!(
        row.contains(&format!("{median:.0}")) && row.contains("600"),
        "median {median} and the range from 600 ms: {row}"
    );
    assert!(section.contains("| goodput (streams/s) |"), "{section}");
}
