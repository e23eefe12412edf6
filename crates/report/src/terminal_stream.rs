//! The streaming lines of the terminal summary: for the run's streamed responses (and each
//! streaming step when there are several), time to first token, time per output token,
//! inter-token latency, end to end, tokens per second and goodput — the figures `vllm bench
//! serve` prints, by its definitions.

use crate::format::format_ms;
use crate::terminal_lines::kv;
use loadlab_metrics::result::{LatencySummary, RunResult};
use loadlab_metrics::StreamResult;
use std::io::{self, Write};

/// The run's stream lines, then one per streaming step when more than one streamed.
pub(crate) fn streams(r: &RunResult, out: &mut dyn Write) -> io::Result<()> {
    let Some(all) = &r.stream else {
        return Ok(());
    };
    lines(all, "", out)?;
    let steps: Vec<_> = r
        .steps
        .iter()
        .filter_map(|s| Some((&s.name, s.stream.as_ref()?)))
        .collect();
    if steps.len() > 1 {
        for (name, s) in steps {
            lines(s, name, out)?;
        }
    }
    Ok(())
}

fn times(s: &LatencySummary) -> String {
    if s.count == 0 {
        return "-".into();
    }
    format!(
        "mean {} p50 {} p95 {} p99 {}",
        format_ms(s.mean),
        format_ms(s.p50),
        format_ms(s.p95),
        format_ms(s.p99)
    )
}

fn lines(s: &StreamResult, scope: &str, out: &mut dyn Write) -> io::Result<()> {
    let prefix = if scope.is_empty() {
        String::new()
    } else {
        format!("{scope}: ")
    };
    kv(
        out,
        "streams",
        &format!(
            "{prefix}{} streams, {} events ({:.1} per stream), {} input / {} output tokens",
            s.streams, s.events, s.events_per_stream.mean, s.input_tokens, s.output_tokens
        ),
    )?;
    kv(out, "ttft", &format!("{prefix}{}", times(&s.ttft_ms)))?;
    kv(out, "tpot", &format!("{prefix}{}", times(&s.tpot_ms)))?;
    kv(out, "itl", &format!("{prefix}{}", times(&s.itl_ms)))?;
    kv(out, "e2e", &format!("{prefix}{}", times(&s.e2e_ms)))?;
    kv(
        out,
        "tokens/s",
        &format!(
            "{prefix}{:.1} output tokens/s in total, {:.1} per stream",
            s.output_tokens_per_s, s.stream_tokens_per_s
        ),
    )?;
    kv(
        out,
        "goodput",
        &format!(
            "{prefix}{:.2} good streams/s ({} of {} met every objective)",
            s.goodput_per_s, s.good, s.streams
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_run_prints_ttft_tpot_itl_tokens_and_goodput() {
        let summary = |p50: f64| LatencySummary {
            count: 10,
            mean: p50,
            p50,
            p95: p50 * 2.0,
            p99: p50 * 3.0,
            ..LatencySummary::default()
        };
        let r = RunResult {
            stream: Some(StreamResult {
                streams: 10,
                events: 170,
                output_tokens: 160,
                output_tokens_per_s: 80.0,
                good: 9,
                goodput_per_s: 4.5,
                ttft_ms: summary(120.0),
                tpot_ms: summary(9.0),
                itl_ms: summary(8.5),
                e2e_ms: summary(260.0),
                ..StreamResult::default()
            }),
            ..RunResult::default()
        };
        let mut out = Vec::new();
        streams(&r, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        for want in [
            "ttft", "120", "tpot", "itl", "e2e", "tokens/s", "goodput", "9 of 10",
        ] {
            assert!(text.contains(want), "{want} in {text}");
        }
        let mut none = Vec::new();
        streams(&RunResult::default(), &mut none).unwrap();
        assert!(none.is_empty());
    }
}
