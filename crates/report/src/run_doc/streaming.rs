//! The report's "Streaming" section: the run's streamed responses (and each streaming step's)
//! measured token by token — time to first token, time per output token, inter-token gaps and
//! end-to-end time as distributions, tokens per second and goodput — by vLLM's definitions
//! (docs/streaming.md).

use crate::doc::{Block, Section, Table};
use crate::format::{format_ms, format_rate};
use loadlab_metrics::result::{LatencySummary, RunResult};
use loadlab_metrics::{StreamResult, StreamTime};

/// The section, when a step streamed (none otherwise).
pub(super) fn streaming(r: &RunResult) -> Option<Section> {
    let all = r.stream.as_ref()?;
    let mut scopes: Vec<(String, &StreamResult)> = vec![("all streams".to_string(), all)];
    let steps: Vec<_> = r
        .steps
        .iter()
        .filter_map(|s| Some((format!("`{}`", s.name), s.stream.as_ref()?)))
        .collect();
    if steps.len() > 1 {
        scopes.extend(steps);
    }
    let mut s = Section::new("streaming", "Streaming");
    s.blocks.push(Block::Table(figures(&scopes)));
    s.blocks.push(Block::Table(times(&scopes)));
    Some(s)
}

fn figures(scopes: &[(String, &StreamResult)]) -> Table {
    let mut t = Table::new(&[
        "scope",
        ">streams",
        ">events per stream",
        ">input tokens",
        ">output tokens",
        ">output tokens/s",
        ">tokens/s per stream",
        ">good",
        ">goodput",
    ]);
    for (name, s) in scopes {
        t.row(cells![
            name.clone(),
            s.streams.to_string(),
            format!("{:.1}", s.events_per_stream.mean),
            s.input_tokens.to_string(),
            s.output_tokens.to_string(),
            format_rate(s.output_tokens_per_s),
            format!("{:.1}", s.stream_tokens_per_s),
            format!("{} of {}", s.good, s.streams),
            format_rate(s.goodput_per_s)
        ]);
    }
    t.with_note(
        "Streams that ended without error. Output tokens: the server's `usage.completion_tokens`, else the token events with text; input tokens: `usage.prompt_tokens`. Good: streams meeting every objective (the `<` thresholds on stream.ttft, stream.tpot, stream.e2e, applied to each stream); goodput: good streams per second.",
    )
}

fn times(scopes: &[(String, &StreamResult)]) -> Table {
    let mut t = Table::new(&[
        "scope", "time", ">mean", ">p50", ">p90", ">p95", ">p99", ">max", ">count",
    ]);
    for (name, s) in scopes {
        for time in StreamTime::ALL {
            let l: &LatencySummary = s.time(time);
            if l.count == 0 {
                continue;
            }
            t.row(cells![
                name.clone(),
                label(time).to_string(),
                format_ms(l.mean),
                format_ms(l.p50),
                format_ms(l.p90),
                format_ms(l.p95),
                format_ms(l.p99),
                format_ms(l.max),
                l.count.to_string()
            ]);
        }
    }
    t.with_note(
        "vLLM's definitions: TTFT = first token event − request start (the intended start in the open model); TPOT = (E2E − TTFT) / (output tokens − 1), per stream; ITL = every gap before a later token event; E2E = last event (the end marker aside) − start.",
    )
}

fn label(t: StreamTime) -> &'static str {
    match t {
        StreamTime::Ttft => "time to first token (TTFT)",
        StreamTime::Itl => "inter-token latency (ITL)",
        StreamTime::Tpot => "time per output token (TPOT)",
        StreamTime::E2e => "end to end (E2E)",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_that_streamed_has_the_section_one_that_did_not_has_none() {
        assert!(streaming(&RunResult::default()).is_none());
        let l = LatencySummary {
            count: 4,
            mean: 12.0,
            p50: 11.0,
            p95: 20.0,
            p99: 21.0,
            max: 22.0,
            ..LatencySummary::default()
        };
        let r = RunResult {
            stream: Some(StreamResult {
                streams: 4,
                good: 3,
                ttft_ms: l,
                itl_ms: l,
                ..StreamResult::default()
            }),
            ..RunResult::default()
        };
        let s = streaming(&r).expect("a section");
        assert_eq!(s.title, "Streaming");
        let Block::Table(times) = &s.blocks[1] else {
            panic!("a table")
        };
        assert_eq!(times.rows.len(), 2, "TTFT and ITL rows, no empty ones");
        let Block::Table(figures) = &s.blocks[0] else {
            panic!("a table")
        };
        assert_eq!(figures.rows.len(), 1);
    }
}
