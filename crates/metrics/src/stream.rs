//! What streamed responses (SSE, NDJSON, chunks: an LLM server's tokens) add to a step: the
//! histograms of time to first token (TTFT), every inter-token gap (ITL), time per output
//! token after the first (TPOT), end-to-end time (E2E) and events per stream, and counters of
//! streams, events, input and output tokens and goodput (streams meeting every objective).
//! Definitions are `vllm bench serve`'s (see docs/streaming.md). Counters add exactly and
//! histograms merge exactly, so merges of workers, segments and runs stay exact.

use crate::histogram::{LatencyHistogram, LazyHistogram};
use crate::result::LatencySummary;
use serde::{Deserialize, Serialize};

/// A stream time series, as thresholds and reports name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum StreamTime {
    /// Time to first token: the first token event's arrival − the request's start (its
    /// intended start in the open model).
    Ttft,
    /// Inter-token latency: each gap between a token event and the event before it.
    Itl,
    /// Time per output token: (E2E − TTFT) / (output tokens − 1), one value per stream with
    /// more than one token.
    Tpot,
    /// End-to-end: the last event's arrival (the end marker aside) − the request's start.
    E2e,
}

impl StreamTime {
    pub const ALL: [StreamTime; 4] = [
        StreamTime::Ttft,
        StreamTime::Itl,
        StreamTime::Tpot,
        StreamTime::E2e,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            StreamTime::Ttft => "ttft",
            StreamTime::Itl => "itl",
            StreamTime::Tpot => "tpot",
            StreamTime::E2e => "e2e",
        }
    }

    /// `TTFT`, `ITL`, `TPOT`, `E2E`.
    pub fn label(self) -> &'static str {
        match self {
            StreamTime::Ttft => "TTFT",
            StreamTime::Itl => "ITL",
            StreamTime::Tpot => "TPOT",
            StreamTime::E2e => "E2E",
        }
    }

    /// Reads `ttft`, `itl`, `tpot`, `e2e` (also vLLM's `e2el`).
    pub fn parse(text: &str) -> Option<StreamTime> {
        match text {
            "ttft" => Some(StreamTime::Ttft),
            "itl" => Some(StreamTime::Itl),
            "tpot" => Some(StreamTime::Tpot),
            "e2e" | "e2el" => Some(StreamTime::E2e),
            _ => None,
        }
    }
}

/// One finished stream as the engine measured it (times in µs from the request's start).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StreamSample<'a> {
    pub ttft_us: Option<u64>,
    /// Every gap before a token event but the first's.
    pub itl_us: &'a [u64],
    pub tpot_us: Option<u64>,
    pub e2e_us: Option<u64>,
    pub events: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// It met every per-request objective (and did not fail).
    pub good: bool,
}

/// A step's stream histograms (µs, events as plain counts).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StreamSeries {
    pub ttft: LazyHistogram,
    pub itl: LazyHistogram,
    pub tpot: LazyHistogram,
    pub e2e: LazyHistogram,
    /// Events per stream (a count, not a time).
    pub events: LazyHistogram,
}

impl StreamSeries {
    pub fn get(&self, t: StreamTime) -> &LazyHistogram {
        match t {
            StreamTime::Ttft => &self.ttft,
            StreamTime::Itl => &self.itl,
            StreamTime::Tpot => &self.tpot,
            StreamTime::E2e => &self.e2e,
        }
    }

    pub fn add(&mut self, other: &StreamSeries) {
        self.ttft.add(&other.ttft);
        self.itl.add(&other.itl);
        self.tpot.add(&other.tpot);
        self.e2e.add(&other.e2e);
        self.events.add(&other.events);
    }

    pub fn clear(&mut self) {
        for h in [
            &mut self.ttft,
            &mut self.itl,
            &mut self.tpot,
            &mut self.e2e,
            &mut self.events,
        ] {
            h.clear();
        }
    }

    pub fn record(&mut self, s: &StreamSample<'_>) {
        if let Some(us) = s.ttft_us {
            self.ttft.record(us);
        }
        for &us in s.itl_us {
            self.itl.record(us);
        }
        if let Some(us) = s.tpot_us {
            self.tpot.record(us);
        }
        if let Some(us) = s.e2e_us {
            self.e2e.record(us);
        }
        self.events.record(s.events);
    }
}

/// A step's stream counters in one interval (or summed over many).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StreamCounts {
    /// Streamed responses read to their end or their failure.
    pub streams: u64,
    pub events: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// Streams that met every objective.
    pub good: u64,
}

impl StreamCounts {
    pub fn is_empty(&self) -> bool {
        self.streams == 0
    }

    pub fn add(&mut self, o: &StreamCounts) {
        self.streams += o.streams;
        self.events += o.events;
        self.input_tokens += o.input_tokens;
        self.output_tokens += o.output_tokens;
        self.good += o.good;
    }

    pub fn count(&mut self, s: &StreamSample<'_>) {
        self.streams += 1;
        self.events += s.events;
        self.input_tokens += s.input_tokens;
        self.output_tokens += s.output_tokens;
        self.good += u64::from(s.good);
    }
}

/// The counters as a counters line holds them (short keys: one per step and interval).
#[derive(Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct StreamLine {
    #[serde(default)]
    pub n: u64,
    #[serde(default)]
    pub ev: u64,
    #[serde(default)]
    pub ti: u64,
    #[serde(default)]
    pub to: u64,
    #[serde(default)]
    pub good: u64,
}

impl From<&StreamCounts> for StreamLine {
    fn from(c: &StreamCounts) -> Self {
        Self {
            n: c.streams,
            ev: c.events,
            ti: c.input_tokens,
            to: c.output_tokens,
            good: c.good,
        }
    }
}

impl From<StreamLine> for StreamCounts {
    fn from(l: StreamLine) -> Self {
        Self {
            streams: l.n,
            events: l.ev,
            input_tokens: l.ti,
            output_tokens: l.to,
            good: l.good,
        }
    }
}

/// A distribution of counts (events per stream).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct CountSummary {
    pub mean: f64,
    pub p50: f64,
    pub p95: f64,
    pub p99: f64,
    pub max: f64,
}

impl CountSummary {
    pub fn of(h: Option<&LatencyHistogram>) -> Self {
        let Some(h) = h else {
            return Self::default();
        };
        let q = |p: f64| h.value_at_quantile(p) as f64;
        Self {
            mean: h.mean(),
            p50: q(0.5),
            p95: q(0.95),
            p99: q(0.99),
            max: h.max() as f64,
        }
    }
}

/// A scope's stream figures in `run.json` (a step's, or the run's over its streaming steps).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StreamResult {
    pub streams: u64,
    pub events: u64,
    /// From `usage.prompt_tokens` when the server sends it (0 otherwise).
    pub input_tokens: u64,
    /// From `usage.completion_tokens` when the server sends it, else counted token events.
    pub output_tokens: u64,
    /// Output tokens per second of the measured run.
    pub output_tokens_per_s: f64,
    /// Streams that met every objective (`stream.ttft`, `stream.tpot`, `stream.e2e`
    /// thresholds, per request) and did not fail.
    pub good: u64,
    /// `good` per second of the measured run (vLLM's goodput).
    pub goodput_per_s: f64,
    pub ttft_ms: LatencySummary,
    pub itl_ms: LatencySummary,
    pub tpot_ms: LatencySummary,
    pub e2e_ms: LatencySummary,
    pub events_per_stream: CountSummary,
    /// Output tokens per second within a stream (output tokens / E2E), mean over streams.
    #[serde(default)]
    pub stream_tokens_per_s: f64,
}

impl StreamResult {
    /// The figures of `counts` and `series` over `measured_s` seconds.
    pub fn of(counts: &StreamCounts, series: &StreamSeries, measured_s: f64) -> Self {
        let per_s = |n: u64| {
            if measured_s > 0.0 {
                n as f64 / measured_s
            } else {
                0.0
            }
        };
        let summary = |h: &LazyHistogram| h.get().map(LatencySummary::of).unwrap_or_default();
        let e2e = summary(&series.e2e);
        Self {
            streams: counts.streams,
            events: counts.events,
            input_tokens: counts.input_tokens,
            output_tokens: counts.output_tokens,
            output_tokens_per_s: per_s(counts.output_tokens),
            good: counts.good,
            goodput_per_s: per_s(counts.good),
            ttft_ms: summary(&series.ttft),
            itl_ms: summary(&series.itl),
            tpot_ms: summary(&series.tpot),
            stream_tokens_per_s: if e2e.count > 0 && e2e.mean > 0.0 {
                counts.output_tokens as f64 / e2e.count as f64 / (e2e.mean / 1000.0)
            } else {
                0.0
            },
            e2e_ms: e2e,
            events_per_stream: CountSummary::of(series.events.get()),
        }
    }

    pub fn time(&self, t: StreamTime) -> &LatencySummary {
        match t {
            StreamTime::Ttft => &self.ttft_ms,
            StreamTime::Itl => &self.itl_ms,
            StreamTime::Tpot => &self.tpot_ms,
            StreamTime::E2e => &self.e2e_ms,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_series_add_exactly_and_round_trip_through_a_line() {
        let gaps = [10_000, 12_000, 11_000];
        let sample = StreamSample {
            ttft_us: Some(50_000),
            itl_us: &gaps,
            tpot_us: Some(11_000),
            e2e_us: Some(83_000),
            events: 5,
            input_tokens: 7,
            output_tokens: 4,
            good: true,
        };
        let (mut counts, mut series) = (StreamCounts::default(), StreamSeries::default());
        counts.count(&sample);
        series.record(&sample);
        let mut sum = counts;
        sum.add(&counts);
        assert_eq!(
            (sum.streams, sum.events, sum.output_tokens, sum.good),
            (2, 10, 8, 2)
        );
        let back: StreamCounts = StreamLine::from(&sum).into();
        assert_eq!(back, sum);
        let mut both = series.clone();
        both.add(&series);
        assert_eq!(both.itl.len(), 6);
        let r = StreamResult::of(&sum, &both, 2.0);
        assert_eq!(r.output_tokens_per_s, 4.0);
        assert_eq!(r.goodput_per_s, 1.0);
        assert_eq!(r.ttft_ms.count, 2);
        assert!((r.ttft_ms.p50 - 50.0).abs() < 0.1);
        assert_eq!(r.events_per_stream.max, 5.0);
        // 4 tokens in 83 ms per stream.
        assert!((r.stream_tokens_per_s - 4.0 / 0.083).abs() < 0.1);
        assert_eq!(StreamTime::parse("e2el"), Some(StreamTime::E2e));
    }
}
