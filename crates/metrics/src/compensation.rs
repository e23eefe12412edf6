//! Closed-model latency compensated for coordinated omission.
//!
//! A closed-model VU waits for each response before it sends again, so while the target
//! stalls it sends nothing, and the users who would have arrived meanwhile are missing from
//! the histogram. Given the interval each VU meant to keep between iterations (its `pace`, or
//! the median iteration time while the target kept up), every latency longer than that
//! interval also stands for the requests the schedule would have sent during it: `value −
//! interval`, `value − 2·interval`, … down to the interval. That is HdrHistogram's
//! `recordValueWithExpectedInterval` (wrk2's correction, `hdrhistogram::Histogram::
//! clone_correct`). It is computed from the raw histogram when a run is summarized, so the
//! hot path records nothing more, and a merge of segments stays exact (the merged raw
//! histogram, corrected once).

use crate::histogram::LatencyHistogram;
use crate::{MetricId, Quantity};
use serde::{Deserialize, Serialize};

/// Fewest iterations the schedule is inferred from: the run's first intervals until they hold
/// this many.
pub const MIN_INFERRED_ITERATIONS: u64 = 20;

/// Which latency a study compares (`study.compare_on`): the latency as measured, or the
/// closed model's compensated one. An open model's latency is measured from each request's
/// intended send time, so it is its own compensated figure.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LatencyBasis {
    /// The latency as measured (the default).
    #[default]
    Raw,
    /// The latency with coordinated omission compensated (`latency_compensated`).
    Compensated,
}

impl LatencyBasis {
    pub const ALL: [LatencyBasis; 2] = [LatencyBasis::Raw, LatencyBasis::Compensated];

    pub fn as_str(self) -> &'static str {
        match self {
            LatencyBasis::Raw => "raw",
            LatencyBasis::Compensated => "compensated",
        }
    }

    pub fn is_raw(&self) -> bool {
        *self == LatencyBasis::Raw
    }

    pub fn parse(text: &str) -> Option<LatencyBasis> {
        LatencyBasis::ALL.into_iter().find(|b| b.as_str() == text)
    }

    /// `id` on this basis: on the compensated one a latency metric becomes its compensated
    /// counterpart; anything else, and every metric on the raw basis, is itself (a
    /// compensated metric listed by name stays compensated).
    pub fn metric(self, id: MetricId) -> MetricId {
        let quantity = match (self, id.quantity) {
            (LatencyBasis::Compensated, Quantity::Latency(stat)) => {
                Quantity::CompensatedLatency(stat)
            }
            (_, q) => q,
        };
        MetricId { quantity, ..id }
    }
}

/// Where the intended interval between a VU's iterations came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ScheduleSource {
    /// `load.pace`: the schedule the scenario declared.
    Pace,
    /// The median time of the run's first [`MIN_INFERRED_ITERATIONS`] or so iterations
    /// (Goose's method): the pace the VUs kept while the target kept up, when it did.
    Inferred,
}

/// How a closed-model run's latency was compensated (`run.json` `compensation`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Compensation {
    /// The interval each VU intended between its iterations, ms.
    pub interval_ms: f64,
    pub source: ScheduleSource,
    /// Inferred: how many iterations the interval is the median of.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inferred_from: Option<u64>,
    /// The percentile (p50, p90, p95 or p99) the correction moved the most, over the run...
    #[serde(default)]
    pub most_at: String,
    /// ...its compensated value / its raw value: what users arriving on schedule would have
    /// seen, against what was measured (1.0: no response outlasted the interval enough).
    #[serde(default = "no_correction")]
    pub ratio: f64,
    /// The flow has more than one request step: a step's intended time depends on the
    /// responses before it, so its back-filled samples are an estimate.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub multi_step: bool,
}

fn no_correction() -> f64 {
    1.0
}

impl Compensation {
    /// The interval in the histograms' unit (µs), at least 1.
    pub fn interval_us(&self) -> u64 {
        interval_us(self.interval_ms)
    }

    /// The limits a reader must know, in words (empty when there are none).
    pub fn caveats(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.source == ScheduleSource::Inferred {
            let n = self.inferred_from.unwrap_or(0);
            let few = if n < MIN_INFERRED_ITERATIONS {
                format!(", fewer than the {MIN_INFERRED_ITERATIONS} it should rest on")
            } else {
                String::new()
            };
            out.push(format!(
                "the schedule ({} per VU) was inferred from the median of the first {n} iterations{few}; declare `load.pace` for one the scenario states",
                format_ms(self.interval_ms),
            ));
        }
        if self.multi_step {
            out.push(
                "the flow has several request steps: a later step's intended time depends on the earlier responses, so its back-filled samples are an estimate"
                    .into(),
            );
        }
        out
    }
}

/// An interval in ms in the histograms' unit (µs), at least 1 (a zero interval corrects
/// nothing).
pub fn interval_us(interval_ms: f64) -> u64 {
    ((interval_ms * 1e3).round() as u64).max(1)
}

/// The percentile the correction moves the most: (its label, compensated / raw).
pub fn largest_correction(raw: &LatencyHistogram, compensated: &LatencyHistogram) -> (String, f64) {
    [("p50", 0.5), ("p90", 0.9), ("p95", 0.95), ("p99", 0.99)]
        .into_iter()
        .map(|(label, q)| {
            let before = raw.value_at_quantile(q).max(1) as f64;
            (
                label.to_string(),
                compensated.value_at_quantile(q) as f64 / before,
            )
        })
        .fold(("p99".to_string(), 1.0), |best, next| {
            if next.1 > best.1 {
                next
            } else {
                best
            }
        })
}

/// `h` with, for every value above `interval_us`, the values the schedule's missed sends
/// would have had (HdrHistogram's correction for coordinated omission).
pub fn compensate(h: &LatencyHistogram, interval_us: u64) -> LatencyHistogram {
    h.clone_correct(interval_us)
}

fn format_ms(ms: f64) -> String {
    if ms >= 1000.0 {
        format!("{:.2} s", ms / 1000.0)
    } else {
        format!("{ms:.1} ms")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::histogram::{new_histogram, record_us};

    /// The correction written out by hand, as wrk2 describes it: a response `v` late by more
    /// than the interval stands for the sends at `v − i`, `v − 2i`, … while above `i`.
    fn by_hand(values: &[u64], interval: u64) -> Vec<u64> {
        let mut out = Vec::new();
        for &v in values {
            out.push(v);
            let mut missed = v.saturating_sub(interval);
            while interval > 0 && missed >= interval {
                out.push(missed);
                missed -= interval;
            }
        }
        out.sort_unstable();
        out
    }

    #[test]
    fn the_correction_adds_the_sends_a_stall_held_back() {
        // (raw values µs, interval µs) → the histogram holds exactly the hand-made values.
        let cases: &[(&[u64], u64)] = &[
            // Nothing above the interval: unchanged.
            (&[1_000, 2_000, 3_000], 100_000),
            // One 1 s stall at a 100 ms pace: nine more samples, 900 ms down to 100 ms.
            (&[5_000, 1_000_000, 5_000], 100_000),
            // A value not a multiple of the interval.
            (&[250_000], 100_000),
            // Exactly two intervals.
            (&[200_000, 10], 100_000),
        ];
        for (i, (values, interval)) in cases.iter().enumerate() {
            let mut raw = new_histogram();
            for &v in *values {
                record_us(&mut raw, v);
            }
            let got = compensate(&raw, *interval);
            let want = by_hand(values, *interval);
            assert_eq!(got.len(), want.len() as u64, "case {i}");
            let mut expected = new_histogram();
            for v in want {
                record_us(&mut expected, v);
            }
            // Within the histograms' precision: the correction starts from the value a
            // bucket stands for, not the exact one recorded.
            for q in [0.5, 0.9, 0.99, 1.0] {
                let (g, w) = (got.value_at_quantile(q), expected.value_at_quantile(q));
                assert!(
                    g.abs_diff(w) as f64 <= 2e-3 * w as f64 + 1.0,
                    "case {i} q {q}: {g} against {w}"
                );
            }
        }
    }

    #[test]
    fn the_largest_correction_is_found_at_its_percentile() {
        // 100 requests of 1 ms, two of them stalled 1 s, at a 100 ms pace: 18 samples more,
        // 100–900 ms, move p95 (1 ms → 800 ms) most; p99 was a stalled one already.
        let mut raw = new_histogram();
        for i in 0..100 {
            record_us(&mut raw, if i < 2 { 1_000_000 } else { 1_000 });
        }
        let (at, ratio) = largest_correction(&raw, &compensate(&raw, 100_000));
        assert_eq!(at, "p95");
        assert!(ratio > 100.0, "{ratio}");
        let (at, ratio) = largest_correction(&raw, &raw);
        assert_eq!((at.as_str(), ratio), ("p99", 1.0));
    }

    #[test]
    fn caveats_name_an_inferred_schedule_and_dependent_steps() {
        let paced = Compensation {
            interval_ms: 100.0,
            source: ScheduleSource::Pace,
            inferred_from: None,
            most_at: "p99".into(),
            ratio: 4.2,
            multi_step: false,
        };
        assert!(paced.caveats().is_empty());
        assert_eq!(paced.interval_us(), 100_000);
        let inferred = Compensation {
            source: ScheduleSource::Inferred,
            inferred_from: Some(40),
            multi_step: true,
            ..paced
        };
        let c = inferred.caveats();
        assert!(
            c[0].contains("first 40 iterations") && c[0].contains("100.0 ms"),
            "{c:?}"
        );
        assert!(c[1].contains("several request steps"), "{c:?}");
        let few = Compensation {
            inferred_from: Some(7),
            ..inferred
        };
        assert!(few.caveats()[0].contains("first 7 iterations, fewer than the 20"));
    }
}
